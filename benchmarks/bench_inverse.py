"""Inverse Darcy problem: a trained surrogate, the classical inversion, and the two combined.

For the test samples of a trained ``darcy-inverse`` run (its dataset, the split in its
run.json), at observation grids n = 85 and 141 (strided from the 421 data) and the paper's
noise levels epsilon = 0, 0.01, 0.1, the observations are the solutions plus the paper's noise
``epsilon (sigma(x) + 1e-5) N(0, 1)`` (``sigma`` the pointwise std of the training solutions on
that grid; fixed draws, seed 0), and three answers are compared against the true coefficient
(:func:`neuralop_fem.evaluation.compare`, inverse case):

* the surrogate alone (``Surrogate.solve``; at a grid other than its training grid with
  ``resample=True``: observations interpolated to the model grid, its coarse coefficient
  interpolated back);
* ``DarcyInverseSolver`` from its default (multilevel, constant) start;
* the same inversion warm-started from the surrogate's coefficient.

The inversion's discrepancy principle gets each sample's relative noise level
(``paper_noise_to_relative``); ``--maxiter`` (default 100, the solver's default is 40) lets both
starts reach that rule rather than stop at the iteration cap. Reported per (n, epsilon): errors
on the observation grid and pooled to the coarse grid (n -> (n-1)/4+1), misclassified phases,
data misfit, PDE solves (observation-grid equivalents and raw), wall time including inference,
and the warm start's ratios against the default start.

Run::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m benchmarks.bench_inverse \\
        --run RUN_DIR --data darcy_n421.nc [--samples 8] [--grids 85 141] [--noise 0 0.01 0.1] \\
        [--warm-phases 3 12] [--tag T]

Writes ``benchmarks/results/inverse.{json,md}`` (``--tag T``: ``inverse_T.*``); each cell is
:func:`benchmarks.lab.inverse.compare_cell`.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from benchmarks.lab.inverse import compare_cell, markdown_cells, test_split
from neuralop_fem.environment import environment_record as record
from neuralop_fem.reproduce.inverse import grid_data, paper_observations
from neuralop_fem.reproduce.results import write_results
from neuralop_fem.reproduce.script_runner import count, run_script

RESULTS = Path(__file__).resolve().parent / "results"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--run", type=Path, required=True, help="darcy-inverse run directory")
    p.add_argument("--data", type=Path, required=True, help="its Darcy dataset (421 grid)")
    p.add_argument("--samples", type=count(), default=8, help="test samples per cell (default 8)")
    p.add_argument("--grids", type=count(3), nargs="+", default=[85, 141])
    p.add_argument("--noise", type=float, nargs="+", default=[0.0, 0.01, 0.1])
    p.add_argument("--seed", type=count(0), default=0, help="noise seed (default 0)")
    p.add_argument("--maxiter", type=count(), default=100,
                   help="observation-grid iterations of the inversion (default 100, so that "
                        "both starts reach the stopping rule)")
    p.add_argument("--warm-phases", dest="warm_phases", type=float, nargs=2, default=None,
                   metavar=("LOW", "HIGH"),
                   help="start the warm-started inversion from the surrogate's answer snapped "
                        "to these two phase values (the benchmark's: 3 12)")
    p.add_argument("--tag", default="", help="results file suffix")
    p.add_argument("--note", default="", help="how the run was trained (for the report)")
    args = p.parse_args(argv)
    surrogate, ds, train, test = test_split(args.run, args.data, args.samples)
    solver = dataclasses.replace(surrogate.reference_solver(), maxiter=args.maxiter)
    phases = None if args.warm_phases is None else (args.warm_phases[0], args.warm_phases[1])
    cells = {}
    for n in args.grids:
        grid = grid_data(ds, train, test, n)
        for eps in args.noise:
            obs = paper_observations(grid, eps, args.seed)
            r = cells[f"{n}/{eps:g}"] = compare_cell(surrogate, solver, obs, phases)
            print(f"n={n} eps={eps:g}: solves {r['solve_ratio']:.2f}x, time {r['time_ratio']:.2f}x"
                  f" ({r['wall_s']:.0f} s)", flush=True)
    result = {"run": str(args.run), "run_note": args.note or surrogate.name,
              "data": str(args.data), "samples": int(len(test)), "grids": args.grids,
              "noise": args.noise, "cells": cells, "record": record(),
              "test_indices": test.tolist(), "solver": solver.config,
              "warm_phases": None if phases is None else list(phases)}
    stem = "inverse" + (f"_{args.tag}" if args.tag else "")
    js, md = write_results(RESULTS, stem, result, markdown_cells(result))
    print(f"wrote {js} and {md}")
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
