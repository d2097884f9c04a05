"""Stage ``solvers``: the torch twins of the solvers on the GPU against the numpy solvers on all
cores, in one call.

:func:`benchmarks.lab.gpu_solvers.run` (``benchmarks/bench_gpu_solvers.py``) with the
GPU plan: Burgers n = 128, 1024, 8192 and Darcy 43, 141, 421, the twins at batch sizes 1 to 1024
from this process, the numpy solvers in one worker process per core. It writes the figures of
issue 48's goals: Darcy generation at 421 and Burgers at 8192 against the numpy generator on
all cores of the same machine (a batch that does not fit is reported as out of memory, a
measurement the budget leaves no room for as skipped). With ``--rehearse``: two tiny cases on
the CPU.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from benchmarks.lab.gpu_solvers import markdown
from benchmarks.lab.gpu_solvers import run as measure

from .machine import Deadline

__all__ = ["MARGIN_S", "run"]

log = logging.getLogger("campaign.solvers")

#: Seconds of the budget kept for writing the results.
MARGIN_S = 30.0


def run(args: argparse.Namespace, deadline: Deadline, out: Path) -> tuple[dict, list[str], int]:
    info = measure(args.device, rehearse=args.rehearse,
                   remaining=lambda: deadline.left() - MARGIN_S, log=log.info)
    title = f"# GPU campaign: solvers{' (rehearsal: not a measurement)' if args.rehearse else ''}"
    lines = [title, "", *markdown(info).splitlines()[1:]]
    finished = all(r["status"] != "skipped (time budget)" for r in info["rows"])
    return {**info, "finished": finished}, lines, 0
