"""How to start the Darcy inversion from a surrogate: five starts compared on the same data.

For the first ``--samples`` test samples of a trained ``darcy-inverse`` run, at observation grid
``--grid`` and noise ``--noise`` (the paper's convention: :mod:`neuralop_fem.reproduce.inverse`),
the same :class:`solvers.DarcyInverseSolver` (defaults; discrepancy-principle stop) is started from

* ``default``: its own multilevel start (best constant, then grids 36 -> 71 -> 141);
* ``surrogate``: the surrogate's coefficient (``Surrogate.solve(resample=True)``) on the
  observation grid;
* ``surrogate, 2 levels``: the same passed through the next coarser grid first
  (``warm_levels=2``);
* ``two-phase``: the surrogate's coefficient snapped to the two phases of the benchmark
  distribution (3 where it is below 7.5, else 12);
* ``two-phase, 2 levels, 15 coarse its``: the snapped start through the next coarser grid
  with ``coarse_maxiter=15``;

and, as bounds on what any surrogate start could give (they read the true coefficient):

* ``oracle: truth at 1/4 resolution, snapped``: the true coefficient average-pooled by 4 (the
  model's 36 x 36 output grid at n = 141), interpolated back and snapped like ``two-phase``:
  a perfect surrogate of the paper's output resolution;
* ``oracle: truth at 1/2 resolution, snapped``: the same pooled by 2 (71 x 71): a perfect
  surrogate with twice the output resolution;
* ``oracle: the true coefficient``.

Reported per start: mean PDE solves in observation-grid equivalents, mean seconds per sample
(inference included for the surrogate starts), mean coefficient errors (relative L2 on the
observation grid and pooled by 4, misclassified nodes) and the stop reasons.

Run::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m benchmarks.inverse_warm_variants \\
        --run RUN_DIR --data darcy_n421.nc [--grid 141] [--noise 0.01] [--samples 8] [--tag T]

Writes ``benchmarks/results/inverse_warm_variants.{json,md}`` (``--tag T``:
``inverse_warm_variants_T.*``); the measurement is
:func:`benchmarks.lab.inverse.compare_starts`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.lab.inverse import compare_starts, markdown_starts, test_split
from neuralop_fem.environment import environment_record as record
from neuralop_fem.reproduce.inverse import grid_data, paper_observations
from neuralop_fem.reproduce.results import write_results
from neuralop_fem.reproduce.script_runner import count, run_script

RESULTS = Path(__file__).resolve().parent / "results"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--run", type=Path, required=True, help="darcy-inverse run directory")
    p.add_argument("--data", type=Path, required=True, help="its Darcy dataset (421 grid)")
    p.add_argument("--grid", type=count(3), default=141)
    p.add_argument("--noise", type=float, default=0.01)
    p.add_argument("--samples", type=count(), default=8)
    p.add_argument("--seed", type=count(0), default=0, help="noise seed (default 0)")
    p.add_argument("--maxiter", type=count(), default=100,
                   help="observation-grid iterations (default 100: every start reaches the rule)")
    p.add_argument("--tag", default="", help="results file suffix")
    args = p.parse_args(argv)
    surrogate, ds, train, test = test_split(args.run, args.data, args.samples)
    obs = paper_observations(grid_data(ds, train, test, args.grid), args.noise, args.seed)
    measured = compare_starts(surrogate, obs, args.maxiter, verbose=True)
    result = {"run": str(args.run), "data": str(args.data), "grid": args.grid,
              "noise": args.noise, "samples": int(len(test)), "maxiter": args.maxiter,
              **measured, "record": record()}
    stem = "inverse_warm_variants" + (f"_{args.tag}" if args.tag else "")
    js, md = write_results(RESULTS, stem, result, markdown_starts(result))
    print(f"wrote {js} and {md}")
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
