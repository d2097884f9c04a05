"""Versions and hardware, recorded in ``run.json`` and benchmark results."""

from __future__ import annotations

import os
import platform
import sys
from typing import Any

import numpy as np
import torch

from .. import __version__
from ..data.float_paths import cpu_model as _cpu_model

__all__ = ["environment_info"]


def code_version() -> dict[str, Any]:
    """The git commit of the source tree this package runs from (None when it is not a git
    checkout, e.g. an installed wheel) and whether tracked files had uncommitted changes."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]

    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                                 text=True, check=True, timeout=20)
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip()

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no") if commit else None
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
