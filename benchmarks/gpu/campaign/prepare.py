"""Stage ``prepare``: install the missing packages and generate the Darcy data, no training.

A ``darcy`` call that continues from ``--from`` must carry its state (about 37 MB for
darcy-galerkin), the wheels (about 16 MB) and the working tree, and one call carries at most
64 MiB. When the three do not fit, the continuation takes two calls on the same warm machine:
``prepare`` with the wheels carried, then, within the machine's idle release, ``darcy --from``
with only the state carried. The machine keeps the first call's scratch folder (``--work``: the
installed packages and the data) and its ignored copies (the wheels) between calls that follow
each other, so the second call neither installs from scratch nor regenerates the data
(docs/training.md, "What has run on a GPU").
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

from .darcy import data_file
from .machine import Deadline

__all__ = ["run"]

log = logging.getLogger("campaign.prepare")


def run(args: argparse.Namespace, deadline: Deadline, out: Path) -> tuple[dict, list[str], int]:
    started = deadline.elapsed()
    data = data_file(args.work, args.rehearse)
    seconds, size = deadline.elapsed() - started, data.stat().st_size
    log.info("data ready: %s (%.0f s)", data, seconds)
    result: dict[str, Any] = {"data": str(data), "data_bytes": size,
                              "data_seconds": round(seconds, 1), "work": str(args.work)}
    lines = [f"# GPU campaign: prepare{' (rehearsal)' if args.rehearse else ''}", "",
             f"Data `{data.name}` ready in {seconds:.0f} s ({size / 2**20:.0f} MiB)"
             f" in `{args.work}`. Next, on this machine before it is released: the `darcy` "
             "stage with `--from` the state to continue (only the state carried).", ""]
    return result, lines, 0
