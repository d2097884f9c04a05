"""Test error against the epoch budget of the Burgers rows of ``results/reproduction.json``.

The series are :mod:`neuralop_fem.reproduce.epoch_budget`'s. The figure draws each seed's test
relative L2 (small dots) and the mean over the seeds (line) against the epochs, on a log axis,
with a goal line and the paper's number for each model (dashed, the model's colour); the same
numbers are printed as a markdown table
(:func:`benchmarks.lab.plots.epoch_budget_figure`).

Run::

    python -m benchmarks.plot_epoch_budget --data-name burgers_nugt_n8192_N1224 \\
        --out benchmarks/results/burgers_nugt_epoch_budget.png [--resolution 512] [--goal 1e-3]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.lab.plots import epoch_budget_figure, epoch_budget_series
from neuralop_fem.plotting import save
from neuralop_fem.reproduce.epoch_budget import table
from neuralop_fem.reproduce.script_runner import run_script

RESULTS = Path(__file__).resolve().parent / "results" / "reproduction.json"


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0:
        msg = f"must be a positive number; got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--results", type=Path, default=RESULTS, help="a reproduction.json")
    p.add_argument("--data-name", required=True,
                   help="the dataset's file name without .nc, e.g. burgers_nugt_n8192_N1224")
    p.add_argument("--resolution", default="512", help="evaluation grid (default 512)")
    p.add_argument("--goal", type=_positive, default=1e-3, help="goal line (default 1e-3)")
    p.add_argument("--out", type=Path, required=True, help="PNG file to write")
    args = p.parse_args(argv)
    groups = epoch_budget_series(args.results, args.data_name, args.resolution)
    print(table(groups))
    fig = epoch_budget_figure(groups, data_name=args.data_name, resolution=args.resolution,
                              goal=args.goal)
    print(f"wrote {save(fig, args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
