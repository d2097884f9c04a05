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
from ..runs import Environment

__all__ = ["environment_info", "training_environment"]


def training_environment(device: torch.device | None = None) -> Environment:
    """Versions, code commit, CPU model, core count, thread settings and the GPU name."""
    versions: dict[str, Any] = {
        "neuralop_fem": __version__,
        "torch": torch.__version__,
        "numpy": np.__version__,
        "python": sys.version.split()[0],
    }
    hardware: dict[str, Any] = {
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
        "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
        "platform": platform.platform(),
    }
    if device is not None and device.type == "cuda":
        hardware = {**hardware, "gpu": torch.cuda.get_device_name(device)}
        versions = {**versions, "cuda": torch.version.cuda}
    return Environment(versions=versions, code=code_version(), hardware=hardware)


def environment_info(device: torch.device | None = None) -> dict[str, Any]:
    """:func:`training_environment` as ``run.json``'s ``versions``, ``code``, ``hardware``."""
    env = training_environment(device)
    return {"versions": env.versions, "code": env.code, "hardware": env.hardware}
