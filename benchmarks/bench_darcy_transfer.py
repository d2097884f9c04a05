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

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_darcy_transfer.py \\
        --data darcy_n421.nc --runs runs/transfer [--train-grid 43] [--grids 43 85 141 211]

Writes ``benchmarks/results/darcy_transfer.{json,md}``. Existing finished runs under ``--runs``
are reused (delete them to retrain).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from neuralop_fem.environment import environment_record as record
from neuralop_fem.evaluation import evaluate_run
from neuralop_fem.models import PRESETS
from neuralop_fem.reproduce.results import footer, write_results
from neuralop_fem.reproduce.script import count, run_script
from neuralop_fem.training import TrainConfig, Trainer, read_run_info

RESULTS = Path(__file__).resolve().parent / "results"

#: Narrow versions of the presets (same layer types and depth pattern, fewer channels).
_NARROW: dict[str, dict[str, int]] = {
    "darcy-galerkin": {"d_model": 32, "num_layers": 2, "d_ff": 64, "num_heads": 2,
                       "freq_dim": 16, "modes": 6, "decoder_ff": 32},
    "darcy-fourier": {"d_model": 32, "num_layers": 2, "d_ff": 64, "num_heads": 2,
                      "freq_dim": 16, "modes": 6, "decoder_ff": 32},
    "darcy-fno": {"width": 16, "modes": 8},
}


def train(name: str, data: Path, run: Path, args: argparse.Namespace) -> None:
    """Train the narrow ``name`` model at ``args.train_grid`` unless ``run`` is finished."""
    if (run / "run.json").exists() and read_run_info(run)["status"] == "finished":
        return
    model = PRESETS[name].replace(**_NARROW[name])
    cfg = TrainConfig(task="darcy", resolution=args.train_grid, epochs=args.epochs,
                      batch_size=8, gamma=0.5, n_train=args.n_train, n_val=args.n_eval,
                      n_test=args.n_eval, lr_max=5e-4 if name == "darcy-fourier" else 1e-3,
                      seed=args.seed)
    with Trainer(run, data, model_config=model, config=cfg, preset=name) as trainer:
        trainer.fit()


def markdown(result: dict[str, Any]) -> str:
    grids = result["grids"]
    lines = [
        "# Darcy resolution transfer", "",
        f"Narrow versions of the Darcy presets trained at n = {result['train_grid']} on "
        f"{result['n_train']} samples of `{result['data']}` ({result['epochs']} epochs), "
        f"evaluated on their {result['n_eval']} test samples at each grid. Mean test relative "
        "L2; `direct`: the model fed the new grid; `resample`: predicted on the training grid "
        "and interpolated (the default for Darcy, `transfer=\"auto\"`).", "",
        "| model | parameters | " + " | ".join(f"n = {g} direct / resample" for g in grids) + " |",
        "|---|---|" + "---|" * len(grids),
    ]
    for name, row in result["models"].items():
        cells = [f"{row[f'{g}/direct']:.2e} / {row[f'{g}/resample']:.2e}" for g in grids]
        lines.append(f"| {name} | {row['n_parameters']:,} | " + " | ".join(cells) + " |")
    rec = result["record"]
    lines += ["", *footer(rec)]
    return "\n".join(lines)


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
    for name in _NARROW:
        run = args.runs / f"{name}_n{args.train_grid}"
        train(name, args.data, run, args)
        row: dict[str, Any] = {}
        for n in args.grids:
            # at the training grid both ways feed the model the same data: evaluate once
            for mode in ("direct",) if n == args.train_grid else ("direct", "resample"):
                r = evaluate_run(run, args.data, resolution=n, transfer=mode)
                row[f"{n}/{mode}"] = float(r["summary"]["rel_l2"]["mean"])
            row.setdefault(f"{n}/resample", row[f"{n}/direct"])
        row["n_parameters"] = int(read_run_info(run)["n_parameters"])
        models[name] = row
        print(name, {k: f"{v:.3e}" for k, v in row.items() if k != "n_parameters"}, flush=True)
    result = {"data": str(args.data), "train_grid": args.train_grid, "grids": args.grids,
              "n_train": args.n_train, "n_eval": args.n_eval, "epochs": args.epochs,
              "seed": args.seed, "models": models, "record": record()}
    js, md = write_results(RESULTS, "darcy_transfer", result, markdown(result))
    print(f"wrote {js} and {md}")
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
