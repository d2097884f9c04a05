"""The surrogate's inference path: precision, batch size and the host/device transfers.

:func:`predict` is what ``Surrogate.solve`` costs besides the checks of its inputs: the inputs
are cast once on the host to the model's dtype (half the bytes of float64), on CUDA pinned and
copied to the device once, the forward pass runs in batches of ``batch_size`` on the device,
and the output comes back once, cast to float64 on the host. Nothing else runs; diagnostics
(the Darcy residual) are computed only when asked for (``Surrogate.solve_with_report``).

Precision (:data:`PRECISIONS`), chosen explicitly, float32 by default:

* ``"float32"``: the model's own dtype;
* ``"bf16"``: bfloat16 autocast of the model body, with the normalisers and the float32 parts
  of the architecture (input lifting, decoder, output layer; FFTs) in float32
  (:class:`neuralop_fem.models.precision.AmpForward`; any other module: autocast around it);
* ``"tf32"`` (CUDA only): float32 tensors, matrix products on TF32 tensor cores (10-bit
  mantissa inputs, float32 accumulation), set for the forward pass only.

The accuracy each costs on the zoo's models is measured by ``benchmarks/bench_inference.py``
(``benchmarks/results/inference.md``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import numpy as np
import torch
from numpy.typing import NDArray

from ..errors import InputError
from ..models import NormalizedOperator
from ..models.precision import AmpForward

__all__ = ["CPU_BATCH", "PRECISIONS", "TRANSFER_BYTES", "auto_batch_size",
           "check_finite_prediction", "check_precision", "cuda_batch_size", "inference_forward",
           "predict", "precision_context"]

PRECISIONS = ("float32", "bf16", "tf32")
#: Samples per forward pass on the CPU when the user sets none. Larger batches bring no speed
#: on a CPU (benchmarks/results/inference.md: samples/s at batch 16 and 128) and cost memory.
CPU_BATCH = 16
#: Share of the free device memory that the automatic batch size may fill with activations.
MEMORY_SHARE = 0.5
#: Inputs above this many bytes (in the model's dtype) cross to the device in parts.
TRANSFER_BYTES = 2**30
#: Largest automatic batch: beyond it a GPU gains nothing measurable on the zoo's models.
MAX_BATCH = 1024


def check_precision(precision: str, device: torch.device) -> str:
    """``precision`` if it is one of :data:`PRECISIONS` and ``device`` offers it.

    Raises
    ------
    InputError
        An unknown name, or ``"tf32"`` on a device other than CUDA.
    """
    if precision not in PRECISIONS:
        msg = f"`precision` must be one of {', '.join(map(repr, PRECISIONS))}; got {precision!r}."
        raise InputError(msg)
    if precision == "tf32" and device.type != "cuda":
        msg = (f"`precision` 'tf32' needs a CUDA device (TF32 tensor cores); got device "
               f"{device}. Use 'float32' or 'bf16'.")
        raise InputError(msg)
    return precision


class _Autocast(torch.nn.Module):
    """Any module under bf16 autocast, with a float32 output."""

    def __init__(self, module: torch.nn.Module, device_type: str) -> None:
        super().__init__()
        self.module = module
        self.device_type = device_type

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.autocast(self.device_type, dtype=torch.bfloat16):
            y = self.module(x)
        return y.float()


def inference_forward(operator: torch.nn.Module, precision: str,
                      device: torch.device) -> torch.nn.Module:
    """The module that computes ``operator``'s forward pass in ``precision``.

    ``"bf16"`` on a :class:`~neuralop_fem.models.NormalizedOperator`: its model body under
    autocast with the float32 parts kept (:class:`~neuralop_fem.models.precision.AmpForward`; the
    parts' hooks change nothing outside autocast); on any other module: autocast around it.
    ``"float32"`` and ``"tf32"``: ``operator`` itself (TF32 is :func:`precision_context`).
    """
    if precision != "bf16":
        return operator
    if isinstance(operator, NormalizedOperator):
        return AmpForward(operator, amp="bf16", device_type=device.type)
    return _Autocast(operator, device.type)


@contextlib.contextmanager
def precision_context(precision: str) -> Iterator[None]:
    """TF32 matrix products for ``"tf32"`` inside the block (the process setting restored
    after it); nothing for the other precisions."""
    if precision != "tf32":
        yield
        return
    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high")
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(before)


def auto_batch_size(per_sample_bytes: float, free_bytes: float, *,
                    share: float = MEMORY_SHARE, cap: int = MAX_BATCH) -> int:
    """The largest power of two ``b <= cap`` with ``b * per_sample_bytes <= share *
    free_bytes`` (at least 1).

    >>> auto_batch_size(2**20, 2**30)  # 1 MiB per sample, 1 GiB free
    512
    >>> auto_batch_size(3 * 2**30, 2**30)
    1
    """
    if per_sample_bytes <= 0:
        return cap
    fit = int(share * free_bytes // per_sample_bytes)
    return 1 if fit < 1 else min(cap, 1 << (fit.bit_length() - 1))


def cuda_batch_size(forward: Callable[[torch.Tensor], torch.Tensor], sample: torch.Tensor,
                    device: torch.device, *, probe: int = 4) -> int:
    """The automatic batch size on a CUDA ``device``: the peak memory of a forward pass of
    ``probe`` copies of ``sample`` (shape ``(1, *grid, 1)``, on the device) per sample, against
    the memory free now, the allocator's unused cache included (:func:`auto_batch_size`)."""
    torch.cuda.synchronize(device)
    base = torch.cuda.memory_allocated(device)
    torch.cuda.reset_peak_memory_stats(device)
    with torch.inference_mode():
        forward(sample.expand(probe, *sample.shape[1:]).contiguous())
    torch.cuda.synchronize(device)
    per_sample = (torch.cuda.max_memory_allocated(device) - base) / probe
    free, _ = torch.cuda.mem_get_info(device)
    # memory torch's allocator holds but does not use is free for the batches too
    cached = torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
    return auto_batch_size(per_sample, free + cached)


def predict(forward: Callable[[torch.Tensor], torch.Tensor], values: NDArray[np.float64], *,
            device: torch.device, dtype: torch.dtype, batch_size: int,
            precision: str = "float32") -> NDArray[np.float64]:
    """``forward`` on every sample of ``values``, in batches of ``batch_size`` on ``device``.

    Parameters
    ----------
    forward : callable
        Maps ``(batch, *grid, 1)`` tensors of ``dtype`` on ``device`` to ``(batch, *out, 1)``
        (:func:`inference_forward`).
    values : (n_samples, *grid) float array
        The inputs on the model grid.
    device, dtype
        The model's device and input dtype.
    batch_size : int
        Samples per forward pass.
    precision : str
        One of :data:`PRECISIONS` (``"tf32"``: :func:`precision_context`).

    Returns
    -------
    (n_samples, *out) float64 array.

    The inputs are cast to ``dtype`` on the host and cross to the device once (on CUDA from
    pinned memory, asynchronously); the batches' outputs are joined on the device and cross
    back once in the model's dtype. Inputs of more than :data:`TRANSFER_BYTES` cross in parts
    of about that size (whole batches), so that the device holds at most that much of them.
    """
    cuda = device.type == "cuda"
    source = torch.from_numpy(np.ascontiguousarray(values)[..., None])
    if cuda:  # one host copy: cast straight into page-locked memory
        host = torch.empty(source.shape, dtype=dtype, pin_memory=True)
        host.copy_(source)
    else:
        host = source.to(dtype)
    per_sample = host[:1].numel() * host.element_size()
    part = max(1, TRANSFER_BYTES // max(per_sample * batch_size, 1)) * batch_size
    out: list[NDArray[np.float64]] = []
    with torch.inference_mode(), precision_context(precision):
        for first in range(0, len(values), part):
            x = host[first:first + part].to(device, non_blocking=cuda)
            ys = [forward(x[start:start + batch_size]) for start in range(0, len(x), batch_size)]
            y = ys[0] if len(ys) == 1 else torch.cat(ys)
            out.append(y[..., 0].to("cpu").numpy().astype(np.float64))
    return out[0] if len(out) == 1 else np.concatenate(out)


def check_finite_prediction(pred: NDArray[np.float64], name: str,
                            score: NDArray[np.float64] | None) -> None:
    """Raise :class:`InputError` naming the samples whose prediction is not finite (inputs
    far outside the training data; ``score``: their out-of-distribution scores, if any)."""
    bad = ~np.isfinite(pred.reshape(len(pred), -1)).all(axis=1)
    if bad.any():
        which = np.flatnonzero(bad)
        where = "" if score is None else (
            f" (out-of-distribution scores {', '.join(f'{s:.3g}' for s in score[which][:5])})")
        msg = (f"{name}: the model returned non-finite values for {int(bad.sum())} of "
               f"{len(pred)} input samples (positions {which[:10].tolist()}){where}; these "
               "inputs are far outside what it was trained on.")
        raise InputError(msg)
