"""How far an epoch's mean training loss rises above the lowest before it, in recorded runs
(``benchmarks/bench_loss_jumps.py``): the evidence for the divergence guard's threshold
(:mod:`neuralop_fem.training.divergence`).

* :func:`largest_jump`: a run's largest :func:`~neuralop_fem.training.divergence.loss_jump`
  over its epochs, and the epoch.
* :func:`jump_rows`: one row per ``metrics.csv``-shaped file (an ``epoch`` and a
  ``train_loss`` column), with whether the guard at a factor would have undone an epoch.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from neuralop_fem.training.divergence import loss_jump

__all__ = ["jump_rows", "largest_jump", "markdown"]


def largest_jump(train_loss: list[float]) -> tuple[float, int]:
    """The largest ``loss_jump(train_loss[i], train_loss[:i])`` and its epoch (from 1;
    ``(0.0, 0)`` for fewer than two epochs).

    >>> largest_jump([1.0, 0.5, 0.6, 40.0, 0.4])
    (80.0, 4)
    """
    best, at = 0.0, 0
    for i in range(1, len(train_loss)):
        jump = loss_jump(train_loss[i], train_loss[:i])
        if jump > best:
            best, at = jump, i + 1
    return best, at


def jump_rows(paths: Iterable[Path], *, factor: float) -> list[dict[str, Any]]:
    """One row per file of ``paths``: name, epochs, largest jump and its epoch, and whether
    the guard at ``factor`` would have undone an epoch; sorted by the jump, largest first."""
    rows = []
    for path in paths:
        with path.open(newline="") as fh:
            losses = [float(r["train_loss"]) for r in csv.DictReader(fh)]
        jump, epoch = largest_jump(losses)
        rows.append({"run": path.name.removesuffix("_metrics.csv").removesuffix(".csv"),
                     "epochs": len(losses), "largest_jump": jump, "at_epoch": epoch,
                     "guard_fires": jump > factor})
    return sorted(rows, key=lambda r: -r["largest_jump"])


def markdown(rows: list[dict[str, Any]], *, factor: float) -> list[str]:
    """The rows as a markdown table under a one-paragraph summary."""
    fired = [r for r in rows if r["guard_fires"]]
    calm = [r["largest_jump"] for r in rows if not r["guard_fires"]]
    lines = [
        "# Loss jumps of recorded runs (divergence guard threshold)", "",
        f"{len(rows)} runs; the guard (factor {factor:g}) would have undone an epoch in "
        f"{len(fired)}. The largest jump of the others: "
        f"{max(calm, default=math.nan):.3g} times the lowest epoch mean before it.", "",
        "| run | epochs | largest jump (loss / lowest before) | at epoch | guard fires |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| {r['run']} | {r['epochs']} | {r['largest_jump']:.3g} | {r['at_epoch']} | "
              f"{'yes' if r['guard_fires'] else 'no'} |" for r in rows]
    return lines
