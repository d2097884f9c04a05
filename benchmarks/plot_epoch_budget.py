"""Test error against the epoch budget of the Burgers rows of ``results/reproduction.json``.

The series are :mod:`neuralop_fem.reproduce.epoch_budget`'s. The figure draws each seed's test
relative L2 (small dots) and the mean over the seeds (line) against the epochs, on a log axis,
with a goal line and the paper's number for each model (dashed, the model's colour); the same
numbers are printed as a markdown table.

Run::

    python benchmarks/plot_epoch_budget.py --data-name burgers_nugt_n8192_N1224 \\
        --out benchmarks/results/burgers_nugt_epoch_budget.png [--resolution 512] [--goal 1e-3]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from neuralop_fem.errors import InputError
from neuralop_fem.plotting import fit_title, legend_beside, log_axis, save
from neuralop_fem.reproduce.epoch_budget import collect, mean_error, series, table
from neuralop_fem.reproduce.rows import paper_value
from neuralop_fem.reproduce.script import run_script

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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--results", type=Path, default=RESULTS, help="a reproduction.json")
    p.add_argument("--data-name", required=True,
                   help="the dataset's file name without .nc, e.g. burgers_nugt_n8192_N1224")
    p.add_argument("--resolution", default="512", help="evaluation grid (default 512)")
    p.add_argument("--goal", type=_positive, default=1e-3, help="goal line (default 1e-3)")
    p.add_argument("--out", type=Path, required=True, help="PNG file to write")
    args = p.parse_args(argv)
    try:
        runs = json.loads(args.results.read_text())["runs"]
    except (ValueError, KeyError, TypeError):  # not JSON, no "runs", not an object
        runs = None
    if not isinstance(runs, Mapping):
        msg = f"--results {args.results}: expected a reproduction.json with a 'runs' mapping"
        raise InputError(msg)
    try:
        groups = series(collect(runs, args.data_name, args.resolution))
    except InputError as exc:
        msg = f"--results {args.results}: {exc}"
        raise InputError(msg) from exc
    if not groups:
        msg = (f"--data-name {args.data_name!r} / --resolution {args.resolution}: no recorded "
               f"Burgers run of {args.results} matches")
        raise InputError(msg)
    print(table(groups))

    fig, ax = plt.subplots(figsize=(8.0, 4.6))
    colours = {m: f"C{i}" for i, m in enumerate(dict.fromkeys(k[0] for k in groups))}
    markers = {}
    for (model, lr, gamma), by_epochs in groups.items():
        marker = markers.setdefault((lr, gamma), "os^Dv<>"[len(markers) % 7])
        epochs = np.array(list(by_epochs))
        means = np.array([mean_error(pts) for pts in by_epochs.values()])
        ax.plot(epochs, means, marker=marker, color=colours[model], lw=1.2,
                label=f"{model}, peak lr {lr:g}, H1 weight {gamma:g}")
        for e, pts in by_epochs.items():
            ax.plot([e] * len(pts), [q.error for q in pts], ".", color=colours[model], alpha=0.5)
    for model, colour in colours.items():
        value = paper_value("burgers", f"burgers-{model}", args.resolution, None)
        if value is not None:
            ax.axhline(value, color=colour, ls="--", lw=0.8, label=f"paper, {model}")
    ax.axhline(args.goal, color="k", lw=0.8, label=f"goal {args.goal:g}")
    log_axis(ax, "y")
    ax.set_xticks(sorted({e for by_epochs in groups.values() for e in by_epochs}))
    ax.set_xlabel("epochs")
    ax.set_ylabel(f"test relative L2 at n = {args.resolution} (-)")
    title = (f"{args.data_name}: test error against the epoch budget "
             "(line: mean over seeds; dots: each seed)")
    ax.set_title(fit_title(title, fig, share=0.6))
    legend_beside(ax)
    fig.tight_layout()
    print(f"wrote {save(fig, args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
