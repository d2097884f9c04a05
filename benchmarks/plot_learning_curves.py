"""Validation error per epoch of several training runs in one figure.

Reads the ``metrics.csv`` files that training writes (``epoch, train_loss, val_rel_l2, lr,
epoch_time_s``) and draws the validation relative L2 against the epoch on a log axis, one
line per run, optionally with a horizontal reference line (e.g. a paper's test error).

Run::

    python benchmarks/plot_learning_curves.py --out benchmarks/results/curves.png \\
        --run "preset=runs/gt/metrics.csv" --run "long=runs/gt-long/metrics.csv" \\
        [--reference "paper 1.203e-3=1.203e-3"] [--title TEXT]
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np

from neuralop_fem.errors import InputError
from neuralop_fem.plotting import fit_title, legend_beside, log_axis, save
from neuralop_fem.reproduce.script import run_script


def read_curve(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Epochs and validation relative L2 of one ``metrics.csv``."""
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    msg = f"--run {path}: expected a training metrics.csv with epoch and val_rel_l2 columns"
    if not rows or not {"epoch", "val_rel_l2"} <= set(rows[0]):
        raise InputError(msg + "; got none")
    try:
        epochs = np.array([int(r["epoch"]) for r in rows])
        val = np.array([float(r["val_rel_l2"]) for r in rows])
    except (TypeError, ValueError) as exc:
        msg += f"; a row is not numeric ({exc})"
        raise InputError(msg) from exc
    return epochs, val


def _pair(text: str, what: str) -> tuple[str, str]:
    label, sep, value = text.rpartition("=")
    if not sep or not label or not value:
        msg = f"{what} must be LABEL=VALUE; got {text!r}."
        raise argparse.ArgumentTypeError(msg)
    return label, value


def _reference(text: str) -> tuple[str, float]:
    label, value = _pair(text, "--reference")
    try:
        return label, float(value)
    except ValueError:
        msg = f"--reference must be LABEL=NUMBER; got {text!r}."
        raise argparse.ArgumentTypeError(msg) from None


def main(argv: list[str] | None = None) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--run", action="append", required=True, metavar="LABEL=METRICS_CSV",
                   type=lambda s: _pair(s, "--run"), help="a run's label and metrics.csv")
    p.add_argument("--reference", action="append", default=[], metavar="LABEL=VALUE",
                   type=_reference, help="a horizontal reference line")
    p.add_argument("--title", default="Validation relative L2 per epoch")
    p.add_argument("--out", type=Path, required=True, help="PNG file to write")
    args = p.parse_args(argv)
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for label, path in args.run:
        epochs, val = read_curve(Path(path))
        ax.plot(epochs, val, lw=1.2, label=label)
    for i, (label, value) in enumerate(args.reference):  # told apart by their line style
        ax.axhline(value, color="k", ls=("--", ":", "-.")[i % 3], lw=0.8, label=label)
    log_axis(ax, "y")
    ax.set_xlabel("epoch")
    ax.set_ylabel("validation relative L2 (-)")
    ax.set_title(fit_title(args.title, fig, share=0.6))
    legend_beside(ax)
    fig.tight_layout()
    print(f"wrote {save(fig, args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
