"""Versions and hardware, recorded in ``run.json`` and benchmark results."""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .. import __version__
from ..data.float_paths import cpu_model as _cpu_model

__all__ = ["environment_info"]


def code_version(root: Path | None = None) -> dict[str, Any]:
    """The git commit of the source tree this package runs from (None when it is not a git
    checkout, e.g. an installed wheel) and whether tracked files other than the benchmark
    results (``benchmarks/results/``) had uncommitted changes. ``root``: the source tree
    (default: the one this package is imported from)."""
    import subprocess

    root = Path(__file__).resolve().parents[2] if root is None else root

    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                                 text=True, check=True, timeout=20)
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip()

    commit = git("rev-parse", "HEAD")
    # Results files the benchmarks write (benchmarks/results/) are outputs, not code: a run
    # started after a benchmark recorded a row still runs the committed code.
    status = git("status", "--porcelain", "--untracked-files=no", "--", ".",
                 ":(exclude)benchmarks/results") if commit else None
    return {"commit": commit, "dirty": None if status is None else bool(status)}


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
            "cpu_model": _cpu_model(),
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
