"""Versions and hardware recorded in ``run.json`` (from :mod:`neuralop_fem.environment`)."""

from __future__ import annotations

import os
import platform
import sys
from typing import Any

import numpy as np
import torch

from .. import __version__
from ..environment import code_version, cpu_model

__all__ = ["environment_info", "threads_note"]


def environment_info(device: torch.device | None = None) -> dict[str, Any]:
    """Versions, code commit, CPU model, core count, thread settings and the GPU name."""
    info: dict[str, Any] = {
        "versions": {
            "neuralop_fem": __version__,
            "torch": torch.__version__,
            "numpy": np.__version__,
            "python": sys.version.split()[0],
        },
        "code": code_version(),
        "hardware": {
            "cpu_model": cpu_model(),
            "cpu_count": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
            "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
            "platform": platform.platform(),
        },
    }
    if device is not None and device.type == "cuda":
        info["hardware"]["gpu"] = torch.cuda.get_device_name(device)
        info["versions"]["cuda"] = torch.version.cuda
    return info


def threads_note(threads: int, *, load: float, cores: int) -> str | None:
    """A warning when ``threads`` CPU threads would share busy cores, else None.

    torch's CPU threads wait for each other at every parallel region, so a thread that
    shares its core with another busy process stalls all of them: measured on a 2-core
    machine at load average ~7, two threads trained 6-8x slower than one
    (``benchmarks/bench_threads.py``; on the idle machine two threads were 1.4-1.6x faster).

    Parameters
    ----------
    threads : int
        Threads the training will use (>= 1).
    load : float
        The one-minute load average before the training starts (``os.getloadavg()[0]``).
    cores : int
        Logical cores of the machine.

    Examples
    --------
    >>> threads_note(1, load=7.0, cores=2) is None
    True
    >>> threads_note(2, load=0.1, cores=2) is None
    True
    >>> threads_note(2, load=6.9, cores=2)[:43]
    'threads: 2 on 2 cores at load average 6.9: '
    """
    if threads <= 1 or load + threads <= cores + 0.5:
        return None
    return (f"threads: {threads} on {cores} cores at load average {load:.1f}: threads sharing "
            "busy cores wait for each other; --threads 1 is likely faster here")
