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

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/inverse_warm_variants.py \\
        --run RUN_DIR --data darcy_n421.nc [--grid 141] [--noise 0.01] [--samples 8] [--tag T]

Writes ``benchmarks/results/inverse_warm_variants.{json,md}`` (``--tag T``:
``inverse_warm_variants_T.*``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from neuralop_fem import Surrogate, load_dataset
from neuralop_fem.environment import environment_record as record
from neuralop_fem.reproduce.inverse import grid_data, paper_observations
from neuralop_fem.reproduce.results import footer, write_results
from neuralop_fem.reproduce.script import count, run_script
from neuralop_fem.surrogate import resample_nodes
from solvers import DarcyInverseSolver
from solvers.darcy_inverse import coefficient_errors, pool_coefficient
from solvers.grf import threshold

RESULTS = Path(__file__).resolve().parent / "results"


def _snap(a: np.ndarray) -> np.ndarray:
    """The benchmark's two phases: 12 where ``a > 7.5``, else 3."""
    return np.asarray(threshold(a - 7.5, high=12.0, low=3.0))


def _pooled_truth(truth: np.ndarray, factor: int) -> np.ndarray:
    """The true coefficient average-pooled by ``factor`` and interpolated back, snapped."""
    coarse = pool_coefficient(truth, factor=factor)
    return _snap(resample_nodes(coarse, truth.shape[-1], order=1))


def starts(guess: np.ndarray, truth: np.ndarray, maxiter: int) -> dict[
        str, tuple[DarcyInverseSolver, np.ndarray | None, bool]]:
    """The (solver, initial guess, made from the surrogate) triples: the default start, four
    starts from the surrogate, three oracles."""
    snapped = _snap(guess)
    plain = DarcyInverseSolver(maxiter=maxiter)
    return {
        "default": (plain, None, False),
        "surrogate": (plain, guess, True),
        "surrogate, 2 levels": (DarcyInverseSolver(maxiter=maxiter, warm_levels=2), guess, True),
        "two-phase": (plain, snapped, True),
        "two-phase, 2 levels, 15 coarse its": (
            DarcyInverseSolver(maxiter=maxiter, warm_levels=2, coarse_maxiter=15), snapped, True),
        "oracle: truth at 1/4 resolution, snapped": (plain, _pooled_truth(truth, 4), False),
        "oracle: truth at 1/2 resolution, snapped": (plain, _pooled_truth(truth, 2), False),
        "oracle: the true coefficient": (plain, truth, False),
    }


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "# Starting the Darcy inversion from a surrogate", "",
        f"Run `{result['run']}`; data `{result['data']}`; n = {result['grid']}, noise "
        f"{result['noise']:g} (paper's convention); {result['samples']} test samples; "
        f"`DarcyInverseSolver` defaults but maxiter {result['maxiter']}, discrepancy-principle "
        "stop. Means per sample.", "",
        "| start | PDE solves (n-grid equivalents) | seconds (saving) | "
        "rel. L2 (n / pooled by 4) | misclassified | stop reasons |", "|---|---|---|---|---|---|",
    ]
    base = result["starts"]["default"]
    for name, r in result["starts"].items():
        ratio = base["equivalent_solves"] / r["equivalent_solves"]
        reasons = ", ".join(f"{k} {v}" for k, v in r["stop_reasons"].items())
        lines.append(f"| {name} | {r['equivalent_solves']:.1f} ({ratio:.2f}x) | "
                     f"{r['time']:.2f} ({base['time'] / r['time']:.2f}x) | "
                     f"{r['rel_l2']:.4f} / {r['rel_l2_coarse']:.4f} | "
                     f"{r['misclassified']:.2%} | {reasons} |")
    lines += ["", "The oracle rows start from the true coefficient (pooled to a coarser grid, "
              "interpolated back and snapped to the two phases, or as it is): what a perfect "
              "surrogate with that output resolution would give. Times of the surrogate rows "
              "include its inference."]
    s = result["surrogate_alone"]
    lines += ["", f"The surrogate alone: rel. L2 {s['rel_l2']:.4f} / {s['rel_l2_coarse']:.4f}, "
              f"misclassified {s['misclassified']:.2%}, {s['time']:.3f} s per sample.", ""]
    rec = result["record"]
    lines += footer(rec)
    return "\n".join(lines)


def _errors(a: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    e = coefficient_errors(a, truth, pool=4)
    return {"rel_l2": float(e["fine"].mean()), "rel_l2_coarse": float(e["coarse"].mean()),
            "misclassified": float(e["misclassified"].mean())}


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
    surrogate = Surrogate.load(args.run, device="cpu")
    ds = load_dataset(args.data)
    splits = surrogate.run_info["splits"]
    train, test = np.asarray(splits["train"]), np.asarray(splits["test"])[: args.samples]
    obs = paper_observations(grid_data(ds, train, test, args.grid), args.noise, args.seed)
    t0 = time.perf_counter()
    guess = np.asarray(surrogate.solve(obs["noisy"], resample=True))
    inference = (time.perf_counter() - t0) / len(test)
    out: dict[str, Any] = {}
    for name, (solver, start, from_surrogate) in starts(guess, obs["truth"],
                                                        args.maxiter).items():
        a, report = solver.solve_with_report(obs["noisy"], initial_guess=start,
                                             noise_level=obs["levels"])
        reasons, counts = np.unique(report.stop_reason, return_counts=True)
        out[name] = {"equivalent_solves": float(report.equivalent_solves.mean()),
                     "pde_solves": float(report.pde_solves.mean()),
                     "time": float(report.solve_time.mean()) + (inference if from_surrogate
                                                                 else 0.0),
                     "stop_reasons": {str(r): int(c) for r, c in zip(reasons, counts,
                                                                     strict=True)},
                     **_errors(np.asarray(a), obs["truth"])}
        print(name, out[name], flush=True)
    result = {"run": str(args.run), "data": str(args.data), "grid": args.grid,
              "noise": args.noise, "samples": int(len(test)), "maxiter": args.maxiter,
              "starts": out,
              "surrogate_alone": {**_errors(guess, obs["truth"]), "time": inference},
              "record": record()}
    stem = "inverse_warm_variants" + (f"_{args.tag}" if args.tag else "")
    js, md = write_results(RESULTS, stem, result, markdown(result))
    print(f"wrote {js} and {md}")
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
