"""Validation error per epoch of several training runs in one figure.

Reads the ``metrics.csv`` files that training writes (``epoch, train_loss, val_rel_l2, lr,
epoch_time_s``) and draws the validation relative L2 against the epoch on a log axis, one
line per run, optionally with a horizontal reference line (e.g. a paper's test error)
(:func:`benchmarks.lab.plots.learning_curves_figure`).

Run::

    python -m benchmarks.plot_learning_curves --out benchmarks/results/curves.png \\
        --run "preset=runs/gt/metrics.csv" --run "long=runs/gt-long/metrics.csv" \\
        [--reference "paper 1.203e-3=1.203e-3"] [--title TEXT]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.lab.plots import learning_curves_figure
from neuralop_fem.plotting import save
from neuralop_fem.reproduce.script_runner import run_script


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
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--run", action="append", required=True, metavar="LABEL=METRICS_CSV",
                   type=lambda s: _pair(s, "--run"), help="a run's label and metrics.csv")
    p.add_argument("--reference", action="append", default=[], metavar="LABEL=VALUE",
                   type=_reference, help="a horizontal reference line")
    p.add_argument("--title", default="Validation relative L2 per epoch")
    p.add_argument("--out", type=Path, required=True, help="PNG file to write")
    args = p.parse_args(argv)
    fig = learning_curves_figure([(label, Path(path)) for label, path in args.run],
                                 args.reference, args.title)
    print(f"wrote {save(fig, args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
