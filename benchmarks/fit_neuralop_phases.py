"""Which two-phase coefficient reproduces neuraloperator's small Darcy labels best?

Their ``darcy_train_16.pt`` stores the coefficient as booleans and no forcing. For each phase
ratio, this script maps True -> 1 and False -> 1/ratio (and the reverse), solves the first
``--samples`` coefficients with ``DarcyFDSolver`` (forcing 1) on the 17-node grid that holds
their points ``x_i = i/16`` (the last row and column copied), fits one scale factor per sample
(the forcing over the high phase value, since u is linear in f / a) and reports the median
relative L2 misfit and the median fitted scale. Writes ``results/neuralop_phases.{json,md}``::

    python benchmarks/fit_neuralop_phases.py --data /path/to/darcy_train_16.pt
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from neuralop_fem.environment import environment_record as record
from neuralop_fem.reproduce.results import footer, write_results
from neuralop_fem.reproduce.script import run_script

RESULTS = Path(__file__).resolve().parent / "results"

RATIOS = (5.0, 10.0, 20.0, 50.0, 1000.0)


def fit(x: np.ndarray, y: np.ndarray, high: float, low: float) -> dict[str, float]:
    from solvers.darcy import DarcyFDSolver

    a = np.pad(np.where(x, high, low), ((0, 0), (0, 1), (0, 1)), mode="edge")
    u = DarcyFDSolver(forcing=1.0).solve(a)[:, :-1, :-1]
    scale = (u * y).sum(axis=(1, 2)) / (u * u).sum(axis=(1, 2))
    misfit = (np.linalg.norm((scale[:, None, None] * u - y).reshape(len(y), -1), axis=1)
              / np.linalg.norm(y.reshape(len(y), -1), axis=1))
    return {"median_misfit": float(np.median(misfit)), "median_scale": float(np.median(scale))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="darcy_train_16.pt")
    parser.add_argument("--samples", type=int, default=50)
    args = parser.parse_args(argv)
    from neuralop_fem.data.peers.safe_torch import load_plain

    d = load_plain(args.data)
    x, y = d["x"][: args.samples], d["y"][: args.samples].astype(np.float64)
    rows: list[dict[str, Any]] = []
    for ratio in RATIOS:
        for true_high in (True, False):
            high, low = (1.0, 1.0 / ratio) if true_high else (1.0 / ratio, 1.0)
            rows.append({"ratio": ratio, "true_is_high": true_high, **fit(x, y, high, low)})
    lines = [f"# Phase ratio of neuraloperator's small Darcy set ({len(y)} samples)", "",
             "| ratio | True is | median misfit | median scale |", "|---|---|---|---|"]
    lines += [f"| {r['ratio']:g} | {'high' if r['true_is_high'] else 'low'} | "
              f"{r['median_misfit']:.3f} | {r['median_scale']:.3g} |" for r in rows]
    rec = record()
    write_results(RESULTS, "neuralop_phases", {"rows": rows, "record": rec}, "\n".join([*lines, "",
                                                                               *footer(rec)]))
    return 0


if __name__ == "__main__":
    raise SystemExit(run_script(main))
