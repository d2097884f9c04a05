"""Devices, process groups and the batch sampler shared by single- and multi-process runs.

A run launched by ``torchrun`` (environment ``WORLD_SIZE`` > 1, ``RANK``, ``LOCAL_RANK``)
initialises a process group (``nccl`` on CUDA, ``gloo`` on CPU) and trains with
DistributedDataParallel. :class:`GlobalBatchSampler` draws one permutation per epoch from a
seeded generator shared by every process and gives process ``r`` the ``r``-th slice of every
global batch, so a run on W processes with ``batch_size / W`` samples each sees exactly the
batches of a single-process run with ``batch_size`` (the gradients are averaged by DDP).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

import torch
import torch.distributed as dist

from ..errors import ConfigError

__all__ = ["DistContext", "GlobalBatchSampler", "resolve_device"]


def resolve_device(name: str, *, local_rank: int = 0) -> torch.device:
    """``"auto"`` -> ``cuda:LOCAL_RANK`` when CUDA is available, else CPU; others verbatim.

    Raises
    ------
    ConfigError
        If the device string is invalid or names an unavailable CUDA device.
    """
    if name == "auto":
        name = f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu"
    elif name == "cuda":
        name = f"cuda:{local_rank}"
    try:
        device = torch.device(name)
    except RuntimeError:
        msg = f"`device` must be 'auto', 'cpu', 'cuda' or 'cuda:K'; got {name!r}."
        raise ConfigError(msg) from None
    if device.type == "cuda" and not torch.cuda.is_available():
        msg = f"`device` must be an available device; got {name!r} but CUDA is not available."
        raise ConfigError(msg)
    if device.type == "cuda" and (device.index or 0) >= torch.cuda.device_count():
        msg = (f"`device` must be an available device; got {name!r} but this machine has "
               f"{torch.cuda.device_count()} CUDA device(s).")
        raise ConfigError(msg)
    return device


@dataclass
class DistContext:
    """Rank, world size and whether this process initialised the process group."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    owns_group: bool = False

    @property
    def is_main(self) -> bool:
        """True on the process that writes files and logs (rank 0)."""
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    @classmethod
    def from_env(cls, device_name: str) -> tuple[DistContext, torch.device]:
        """Detect a ``torchrun`` launch, initialise the process group, pick the device."""
        world = int(os.environ.get("WORLD_SIZE", "1"))
        rank = int(os.environ.get("RANK", "0"))
        local = int(os.environ.get("LOCAL_RANK", "0"))
        device = resolve_device(device_name, local_rank=local)
        ctx = cls(rank=rank, world_size=world, local_rank=local)
        if world > 1:
            if device.type == "cuda":
                torch.cuda.set_device(device)
            if not dist.is_initialized():
                dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
                ctx.owns_group = True
        return ctx, device

    def barrier(self) -> None:
        if self.distributed:
            dist.barrier()

    def mean(self, value: float, device: torch.device) -> float:
        """Average a Python float over the processes."""
        if not self.distributed:
            return value
        t = torch.tensor([value], dtype=torch.float64, device=device)
        dist.all_reduce(t)
        return float(t.item()) / self.world_size

    def close(self) -> None:
        if self.owns_group and dist.is_initialized():
            dist.destroy_process_group()
            self.owns_group = False


class GlobalBatchSampler(torch.utils.data.Sampler[list[int]]):
    """Shuffled global batches (``drop_last``), sliced for this process.

    Parameters
    ----------
    n : int
        Dataset length.
    batch_size : int
        Global batch size; divisible by ``world_size``.
    seed : int
        Seed of the permutation generator (one permutation drawn per epoch).
    rank, world_size : int
        This process and the number of processes.
    """

    def __init__(self, n: int, batch_size: int, *, seed: int, rank: int = 0, world_size: int = 1):
        if batch_size % world_size:
            msg = (
                f"`batch_size` must be divisible by the number of processes {world_size}; "
                f"got {batch_size}."
            )
            raise ConfigError(msg)
        if n < batch_size:
            msg = (
                f"the training split must hold at least `batch_size`={batch_size} samples "
                f"(incomplete batches are dropped); got {n}."
            )
            raise ConfigError(msg)
        self.n, self.batch_size = n, batch_size
        self.rank, self.world_size = rank, world_size
        self.generator = torch.Generator().manual_seed(int(seed))
        #: Batches of the next epoch to leave out (a run resumed within an epoch); reset to 0
        #: once that epoch's permutation is drawn.
        self.skip = 0

    def __len__(self) -> int:
        return self.n // self.batch_size

    def __iter__(self) -> Iterator[list[int]]:
        perm = torch.randperm(self.n, generator=self.generator).tolist()
        local = self.batch_size // self.world_size
        first, self.skip = self.skip, 0
        for b in range(first, len(self)):
            start = b * self.batch_size + self.rank * local
            yield perm[start : start + local]
