"""Darcy resolution transfer: a model trained on one grid, evaluated on finer ones.

Trains small-width versions of the ``darcy-galerkin``, ``darcy-fourier`` and ``darcy-fno``
presets (the presets' architecture with narrower layers, so that the three train in minutes on
one core) at ``--train-grid`` on samples of a Darcy file, then evaluates each on the run's test
samples at every ``--grids`` resolution in the two ways :func:`neuralop_fem.evaluation.evaluate_run`
offers:

* ``direct``: the model is fed the coefficient at the new grid;
* ``resample``: the coefficient is sampled onto the training grid, the model predicts there and
  the prediction is interpolated (bilinear) to the new grid (``transfer="auto"`` does this for
  Darcy, as ``Surrogate.solve(resample=True)`` does).

The question answered: does a Darcy model trained on one grid give the same error on another
without retraining? Errors are mean test relative L2 against the data's solution on each grid.

Run::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m benchmarks.bench_darcy_transfer \\
        --data darcy_n421.nc --runs runs/transfer [--train-grid 43] [--grids 43 85 141 211]

Writes ``benchmarks/results/darcy_transfer.{json,md}``. Existing finished runs under ``--runs``
are reused (delete them to retrain). The measurements: :mod:`benchmarks.lab.transfer`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from benchmarks.lab.transfer import NARROW, evaluate_on_grids, markdown, train_narrow
from neuralop_fem.environment import environment_record as record
from neuralop_fem.reproduce.results import write_results
from neuralop_fem.reproduce.script_runner import count, run_script

RESULTS = Path(__file__).resolve().parent / "results"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, required=True, help="Darcy dataset (e.g. 421 grid)")
    p.add_argument("--runs", type=Path, required=True, help="directory for the three runs")
    p.add_argument("--train-grid", type=count(3), default=43)
    p.add_argument("--grids", type=count(3), nargs="+", default=[43, 85, 141, 211])
    p.add_argument("--n-train", type=count(), default=256)
    p.add_argument("--n-eval", type=count(), default=32, help="validation and test samples each")
    p.add_argument("--epochs", type=count(), default=40)
    p.add_argument("--seed", type=count(0), default=1)
    args = p.parse_args(argv)
    models: dict[str, dict[str, Any]] = {}
    for name in NARROW:
        run = args.runs / f"{name}_n{args.train_grid}"
        train_narrow(name, args.data, run, train_grid=args.train_grid, epochs=args.epochs,
                     n_train=args.n_train, n_eval=args.n_eval, seed=args.seed)
        row = models[name] = evaluate_on_grids(run, args.data, args.grids, args.train_grid)
        print(name, {k: f"{v:.3e}" for k, v in row.items() if k != "n_parameters"}, flush=True)
    result = {"data": str(args.data), "train_grid": args.train_grid, "grids": args.grids,
              "n_train": args.n_train, "n_eval": args.n_eval, "epochs": args.epochs,
              "seed": args.seed, "models": models, "record": record()}
    js, md = write_results(RESULTS, "darcy_transfer", result, markdown(result))
    print(f"wrote {js} and {md}")
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
