"""What every stage of the GPU campaign shares: limits, deadline, environment, wheels, outputs.

A stage writes at most :data:`MAX_FILES` files into its output directory, each under
:data:`MAX_FILE_BYTES` (the device machine returns no more), and carries its state to the next
call as an uncompressed tar archive split into parts of :data:`PART_BYTES`.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shlex
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
#: Files one stage may leave in its output directory, the size of each, and of all together.
MAX_FILES = 8
MAX_FILE_BYTES = 16 * 2**20 - 1
MAX_TOTAL_BYTES = 64 * 2**20 - 1
#: Size of one part of a state archive (under the per-file limit, with room to spare).
PART_BYTES = 15 * 2**20
STATE = "state.tar"
_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
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
    import importlib.util

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
               f"(the packages {', '.join(sorted(NEEDED.values()))} are missing here)")
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
    os.execve(sys.executable, [sys.executable, *sys.argv], env)
    return command  # pragma: no cover - execve does not return


# -- environment ----------------------------------------------------------------------------

def environment(commit: str | None) -> dict[str, Any]:
    """:func:`neuralop_fem.environment.torch_environment`, with ``--commit`` beside the code's
    (the copy on the device machine is no git checkout)."""
    from neuralop_fem.environment import torch_environment

    env = torch_environment()
    if commit is not None:
        env["code"] = {**env["code"], "given": commit}
    return env


# -- outputs --------------------------------------------------------------------------------

def setup_logging(out: Path, stage: str) -> None:
    handler = logging.FileHandler(out / f"{stage}.log")
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    logging.getLogger().addHandler(handler)
    for name in ("neuralop_fem.training.trainer", "neuralop_fem.data.generation"):
        logging.getLogger(name).setLevel(logging.INFO)


def write_result(out: Path, stage: str, result: dict[str, Any], lines: list[str]) -> None:
    """``STAGE.json`` and ``STAGE.md`` (the environment and the commands at the end)."""
    from neuralop_fem.environment import describe_torch_environment

    (out / f"{stage}.json").write_text(json.dumps(result, indent=1, default=str) + "\n")
    md = [*lines, "", "## Environment", "", *describe_torch_environment(result["environment"]), "",
          "## Commands", "", *(f"    {c}" for c in result["commands"]), ""]
    (out / f"{stage}.md").write_text("\n".join(md))


def check_outputs(out: Path) -> list[dict[str, Any]]:
    """The files of ``out`` (name, bytes); CampaignError when the device could not return them."""
    files = sorted(p for p in out.rglob("*") if p.is_file())
    listed = [{"name": str(p.relative_to(out)), "bytes": p.stat().st_size} for p in files]
    problems = [f"{f['name']}: {f['bytes']} bytes" for f in listed
                if f["bytes"] > MAX_FILE_BYTES]
    problems += [f"{f['name']}: name" for f in listed if not _NAME.match(f["name"])]
    if len(files) > MAX_FILES:
        problems.append(f"{len(files)} files (at most {MAX_FILES})")
    if sum(f["bytes"] for f in listed) > MAX_TOTAL_BYTES:
        problems.append("more than 64 MiB together")
    if problems:
        msg = f"{out}: outputs the device machine cannot return: {'; '.join(problems)}"
        raise CampaignError(msg)
    return listed


def pack_state(out: Path, root: Path, members: Iterable[Path]) -> list[str]:
    """Tar ``members`` (paths under ``root``) into ``out/state.tar.NN`` parts."""
    for old in out.glob(f"{STATE}.*"):
        old.unlink()
    tmp = out.parent / f".{out.name}.{STATE}"
    with tarfile.open(tmp, "w") as tar:
        for path in members:
            tar.add(path, arcname=str(path.relative_to(root)))
    names = []
    with tmp.open("rb") as fh:
        while chunk := fh.read(PART_BYTES):
            name = f"{STATE}.{len(names):02d}"
            (out / name).write_bytes(chunk)
            names.append(name)
    tmp.unlink()
    return names


def unpack_state(source: Path, dest: Path) -> list[str]:
    """Extract the ``state.tar.NN`` parts of ``source`` into ``dest``; the member names."""
    parts = sorted(source.glob(f"{STATE}.[0-9][0-9]"))
    if not parts:
        return []
    dest.mkdir(parents=True, exist_ok=True)
    tmp = dest / f".{STATE}"
    with tmp.open("wb") as fh:
        for part in parts:
            fh.write(part.read_bytes())
    with tarfile.open(tmp) as tar:
        names = tar.getnames()
        if any(n.startswith(("/", "..")) or "/../" in n for n in names):
            msg = f"{source}: the state archive names paths outside its folder"
            raise CampaignError(msg)
        tar.extractall(dest, filter="data")
    tmp.unlink()
    return names


#: Suffix of a finished run's weights returned beside the state (``RUN.best.pt``).
BEST_SUFFIX = ".best.pt"


def unpack_runs(source: Path, dest: Path) -> list[str]:
    """:func:`unpack_state`, then each ``RUN.best.pt`` of ``source`` as ``dest/RUN/best.pt``."""
    names = unpack_state(source, dest)
    for path in sorted(source.glob(f"*{BEST_SUFFIX}")):
        run = dest / path.name[: -len(BEST_SUFFIX)]
        run.mkdir(parents=True, exist_ok=True)
        (run / "best.pt").write_bytes(path.read_bytes())
        names.append(f"{run.name}/best.pt")
    return names


def previous_results(source: Path | None) -> dict[str, Any]:
    """``{stage: summary}`` of the stage results in ``source`` (the --from folder)."""
    if source is None:
        return {}
    out = {}
    for path in sorted(source.glob("*.json")):
        try:
            data = json.loads(path.read_text())
        except ValueError:
            continue
        if isinstance(data, dict) and "stage" in data:
            out[data["stage"]] = {"summary": data.get("summary"),
                                  "previous": data.get("previous", {})}
    return out
