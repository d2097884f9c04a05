"""Deterministic kernels for the span of one training call."""

from __future__ import annotations

import os
from collections.abc import Callable

import torch

__all__ = ["enable_deterministic"]


def enable_deterministic(enabled: bool, device_type: str) -> Callable[[], None]:
    """Switch torch to deterministic algorithms when ``enabled`` and return the function that
    restores the previous setting.

    On CUDA, cuBLAS needs ``CUBLAS_WORKSPACE_CONFIG`` for reproducible matrix products (set
    here unless the user set it), and kernels without a deterministic CUDA version warn instead
    of stopping the run (the backward of bilinear interpolation, used by the Darcy models' CiNN
    samplers, had none before torch 2.11); on the CPU such a kernel is an error.
    """
    previous = (torch.are_deterministic_algorithms_enabled(),
                torch.is_deterministic_algorithms_warn_only_enabled())
    if enabled:
        cuda = device_type == "cuda"
        if cuda:
            os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True, warn_only=cuda)

    def restore() -> None:
        torch.use_deterministic_algorithms(previous[0], warn_only=previous[1])

    return restore
