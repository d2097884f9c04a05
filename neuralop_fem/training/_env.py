"""Versions and hardware recorded in ``run.json`` (from :mod:`neuralop_fem.environment`)."""

from __future__ import annotations

import os
import platform
import sys
from typing import Any

import numpy as np
import torch

from .._version import __version__
from ..environment import code_version, cpu_model

__all__ = ["environment_info"]


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
