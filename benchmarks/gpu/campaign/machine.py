"""The device machine of the GPU campaign: its limits, a stage's deadline, the offline wheels.

The machine runs one command of at most 10 minutes on a bare copy of the repository, returns at
most :data:`MAX_FILES` files of under :data:`MAX_FILE_BYTES` from its output folder, and its
Python image lacks the packages of :data:`NEEDED`, which a stage installs offline from a folder
of wheels (``benchmarks/gpu/fetch_wheels.sh`` downloads them) before it imports anything that
needs them. This module imports only the standard library, so it runs before that install.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from neuralop_fem.environment import torch_environment

__all__ = ["DEVICE_PLATFORMS", "DEVICE_PYTHON", "MAX_FILES", "MAX_FILE_BYTES", "MAX_TOTAL_BYTES",
           "NEEDED", "ROOT", "CampaignError", "Deadline", "ensure_packages", "environment",
           "install_wheels", "missing_modules", "pip_install_command"]

#: The checkout the campaign runs in: its ``tests/gpu`` (the correctness stage) and ``.whl``.
ROOT = Path(__file__).resolve().parents[3]
#: Files one stage may leave in its output directory, the size of each, and of all together.
MAX_FILES = 8
MAX_FILE_BYTES = 16 * 2**20 - 1
MAX_TOTAL_BYTES = 64 * 2**20 - 1
#: Import name -> distribution of the packages the device image lacks (benchmarks/gpu/
#: fetch_wheels.sh downloads their wheels; each is installed with --no-deps).
NEEDED = {"skfem": "scikit-fem", "pyamg": "pyamg", "dask": "dask", "partd": "partd",
          "locket": "locket", "netCDF4": "netCDF4", "cftime": "cftime", "meshio": "meshio"}
#: The GPU machine image's interpreter and platform (Python 3.12 on x86-64 Linux).
DEVICE_PYTHON = "3.12"
DEVICE_PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_24_x86_64",
                    "manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux1_x86_64")
_T0_VAR = "NEURALOP_FEM_CAMPAIGN_T0"
_SITE_VAR = "NEURALOP_FEM_CAMPAIGN_SITE"

log = logging.getLogger("campaign")


class CampaignError(RuntimeError):
    """A stage cannot run (missing wheels, no GPU, outputs over the limits)."""


class Deadline:
    """Wall-clock budget of one stage, counted from the first start of the command."""

    def __init__(self, budget_s: float) -> None:
        self.t0 = float(os.environ.get(_T0_VAR, time.time()))
        os.environ[_T0_VAR] = repr(self.t0)
        self.budget_s = float(budget_s)

    def elapsed(self) -> float:
        return time.time() - self.t0

    def left(self) -> float:
        return self.budget_s - self.elapsed()


# -- packages -------------------------------------------------------------------------------

def missing_modules() -> list[str]:

    return [m for m in NEEDED if importlib.util.find_spec(m) is None]


def pip_install_command(wheels: Path, target: Path, *, python_version: str | None) -> list[str]:
    """Offline ``pip install`` of :data:`NEEDED` from ``wheels`` into ``target``; for another
    interpreter (``python_version``) pip picks the device's wheels without importing them."""
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
           "--no-compile", "--no-cache-dir", "--disable-pip-version-check", "--upgrade",
           "--target", str(target), "--find-links", str(wheels)]
    if python_version is not None:
        cmd += ["--python-version", python_version, "--implementation", "cp",
                "--only-binary=:all:"]
        for plat in DEVICE_PLATFORMS:
            cmd += ["--platform", plat]
    return cmd + sorted(NEEDED.values())


def install_wheels(wheels: Path, target: Path, *, python_version: str | None = None) -> str:
    """Install the wheels; the command line (for the record). Raises CampaignError."""
    if not wheels.is_dir():
        msg = (f"--wheels {wheels}: no such folder; run benchmarks/gpu/fetch_wheels.sh first "
               f"(the packages {', '.join(sorted(NEEDED.values()))} are missing here); on a "
               "borrowed machine carry .whl with this call, or run the prepare stage with it "
               "first on the same warm machine")
        raise CampaignError(msg)
    cmd = pip_install_command(wheels, target, python_version=python_version)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        msg = f"offline install from {wheels} failed: {proc.stderr.strip()[-2000:]}"
        raise CampaignError(msg)
    return shlex.join(cmd)


def ensure_packages(wheels: Path, work: Path) -> str | None:
    """Install the missing packages from ``wheels`` and run this command again with them on
    the path (so that subprocesses see them too); the install command when it ran."""
    if os.environ.get(_SITE_VAR):
        return os.environ[_SITE_VAR]
    missing = missing_modules()
    if not missing:
        return None
    site = work / "site"
    command = install_wheels(wheels, site)
    env = {**os.environ, _SITE_VAR: command,
           "PYTHONPATH": os.pathsep.join([str(site), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    log.info("installed %s from %s; starting again with them", ", ".join(missing), wheels)
    sys.stdout.flush()
    sys.stderr.flush()
    # the interpreter's own arguments: ``-m benchmarks.gpu.campaign`` runs again as a module
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)
    return command  # pragma: no cover - execve does not return


# -- environment ----------------------------------------------------------------------------

def environment(commit: str | None) -> dict[str, Any]:
    """:func:`neuralop_fem.environment.torch_environment`, with ``--commit`` beside the code's
    (the copy on the device machine is no git checkout)."""

    env = torch_environment()
    if commit is not None:
        env["code"] = {**env["code"], "given": commit}
    return env


