"""Device, dtype and batching plumbing shared by the torch solvers (private)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

import torch

from solvers.checks import check_optional_int

from ..errors import InputError
from .errors import DeviceMemoryError

__all__ = ["DTYPES", "check_batch_size", "check_device", "check_dtype", "chunks",
           "out_of_memory", "synchronize"]

#: Real dtypes a torch solver computes in, by name (the solver's ``dtype`` setting).
DTYPES = {"float64": torch.float64, "float32": torch.float32}

_DEVICE_RE = re.compile(r"^(cpu|cuda(:\d+)?)$")


def check_device(device: object, *, owner: str) -> str:
    """``device`` as a torch device text (``"cpu"``, ``"cuda"``, ``"cuda:1"``) that exists here.

    Raises
    ------
    InputError
        Not such a text, or a CUDA device where torch sees none (or fewer).
    """
    if isinstance(device, torch.device):
        device = str(device)
    if not isinstance(device, str) or not _DEVICE_RE.match(device):
        msg = f"`device` must be 'cpu', 'cuda' or 'cuda:N' for {owner}; got {device!r}."
        raise InputError(msg)
    if device.startswith("cuda"):
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        index = int(device.partition(":")[2] or 0)
        if index >= count:
            msg = (f"`device` {device!r} is not available for {owner}: torch "
                   f"{torch.__version__} sees {count} CUDA device(s); use device='cpu'.")
            raise InputError(msg)
    return device


def check_dtype(dtype: object, *, owner: str, allowed: tuple[str, ...] = tuple(DTYPES)) -> str:
    """``dtype`` if it is one of ``allowed`` (names of :data:`DTYPES`)."""
    if dtype not in allowed:
        msg = f"`dtype` must be one of {', '.join(map(repr, allowed))} for {owner}; got {dtype!r}."
        raise InputError(msg)
    return str(dtype)


def check_batch_size(batch_size: object) -> int | None:
    """``batch_size``: an integer >= 1 or None (all samples at once)."""
    return check_optional_int(batch_size, name="batch_size", minimum=1)


def chunks(n_samples: int, batch_size: int | None) -> Iterator[slice]:
    """Consecutive slices of at most ``batch_size`` samples (one slice when None)."""
    step = n_samples if batch_size is None else batch_size
    for start in range(0, n_samples, step):
        yield slice(start, min(start + step, n_samples))


def synchronize(device: str) -> None:
    """Wait for the device's queued work (a no-op on the CPU), so that timings are complete."""
    if device.startswith("cuda"):
        torch.cuda.synchronize(device)


@contextlib.contextmanager
def out_of_memory(*, owner: str, device: str, batch: int, what: str) -> Iterator[None]:
    """Turn torch's out-of-memory error inside the block into :class:`DeviceMemoryError`, one
    line naming the batch and a batch size to try (the device's cache is emptied first)."""
    try:
        yield
    except torch.OutOfMemoryError:
        if device.startswith("cuda"):
            torch.cuda.empty_cache()
        msg = (f"{owner}: out of memory on {device} solving a batch of {batch} samples ({what}); "
               f"use a batch_size of at most {max(1, batch // 2)}.")
        raise DeviceMemoryError(msg, batch_size=batch, device=device) from None
