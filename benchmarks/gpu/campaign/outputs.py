"""What a stage of the GPU campaign leaves in its output folder, and what the next call reads.

A stage writes ``STAGE.json``, ``STAGE.md`` and ``STAGE.log`` and at most
:data:`~benchmarks.gpu.campaign.machine.MAX_FILES` files in all, each under
:data:`~benchmarks.gpu.campaign.machine.MAX_FILE_BYTES` (the device machine returns no more),
and carries its state to the next call as a gzip-compressed tar archive (level 1: about 7 % off
float32 checkpoints, in about a second) split into parts of :data:`PART_BYTES`
(``state.tar.00``, ``state.tar.01`` ...). Uncompressed archives of earlier calls still unpack.
"""

from __future__ import annotations

import json
import logging
import re
import tarfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from neuralop_fem.environment import describe_torch_environment

from .machine import MAX_FILE_BYTES, MAX_FILES, MAX_TOTAL_BYTES, CampaignError

__all__ = ["BEST_SUFFIX", "PART_BYTES", "STATE", "check_outputs", "clear_outputs", "pack_state",
           "previous_results", "setup_logging", "unpack_runs", "unpack_state", "write_result"]

#: Size of one part of a state archive (under the per-file limit, with room to spare).
PART_BYTES = 15 * 2**20
STATE = "state.tar"
#: Suffix of a finished run's weights returned beside the state (``RUN.best.pt``).
BEST_SUFFIX = ".best.pt"
_NAME = re.compile(r"^[A-Za-z0-9._-]+$")


def _own(name: str, stage: str) -> bool:
    """Whether file ``name`` is one a run of ``stage`` writes into its output folder."""
    if name in (f"{stage}.json", f"{stage}.md", f"{stage}.log"):
        return True
    return stage == "darcy" and (re.fullmatch(rf"{re.escape(STATE)}\.\d\d", name) is not None
                                 or name.endswith(BEST_SUFFIX))


def clear_outputs(out: Path, stage: str) -> None:
    """Remove an earlier run's outputs of ``stage`` from ``out``; refuse a folder holding other
    files (another stage's results, say: removing them would lose them, keeping them could push
    the folder over the device's limit of returned files)."""
    files = sorted(p.name for p in out.iterdir() if p.is_file())
    others = [name for name in files if not _own(name, stage)]
    if others:
        shown = ", ".join(others[:4]) + (f" and {len(others) - 4} more" if len(others) > 4 else "")
        msg = (f"--out {out} holds files that are not outputs of the {stage} stage ({shown}); "
               f"give each stage a folder of its own, e.g. --out $OUT/{stage}")
        raise CampaignError(msg)
    for name in files:
        (out / name).unlink()


def setup_logging(out: Path, stage: str) -> None:
    handler = logging.FileHandler(out / f"{stage}.log")
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    logging.getLogger().addHandler(handler)
    for name in ("neuralop_fem.training.trainer", "neuralop_fem.data.generation"):
        logging.getLogger(name).setLevel(logging.INFO)


def write_result(out: Path, stage: str, result: dict[str, Any], lines: list[str]) -> None:
    """``STAGE.json`` and ``STAGE.md`` (the environment and the commands at the end)."""

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
    """Tar and gzip ``members`` (paths under ``root``) into ``out/state.tar.NN`` parts."""
    for old in out.glob(f"{STATE}.*"):
        old.unlink()
    tmp = out.parent / f".{out.name}.{STATE}"
    with tarfile.open(tmp, "w:gz", compresslevel=1) as tar:
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
    with tarfile.open(tmp, "r:*") as tar:  # gzip (this version) or plain (earlier calls)
        names = tar.getnames()
        if any(n.startswith(("/", "..")) or "/../" in n for n in names):
            msg = f"{source}: the state archive names paths outside its folder"
            raise CampaignError(msg)
        tar.extractall(dest, filter="data")
    tmp.unlink()
    return names


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
