"""Warm-starting the Darcy solvers from surrogate predictions: iterations and time saved.

For benchmark coefficients (12/3 two-phase GRF, f = 1) at resolutions 85/141/211 and
tolerances 1e-4..1e-10, measures per sample the Krylov iterations and wall time of

* ``zero``       the solver from a zero initial guess (the baseline),
* ``warm``       ``initial_guess = prediction``,
* ``projected``  ``initial_guess = alpha * prediction`` (Galerkin projection onto span{p}),
* ``deflated``   deflated PCG with the prediction as deflation vector,

with the linear solvers ``gmg`` (CG + geometric multigrid, the default) and ``cg`` (Jacobi).

Predictions. Training a Darcy surrogate to the paper's ~1e-2 takes GPU hours, so the
predictions here are the discrete solution plus a controlled error, at relative L2 levels
1e-1, 1e-2, 1e-3:

* ``smooth``: a smooth random field (Neumann GRF, tau = 3, times sin(pi x) sin(pi y));
* ``coarse``: the FD solution on the half-resolution grid, bilinearly interpolated, whose
  error sits at the coefficient's interfaces like a neural operator's (its level is what it
  is, ~1e-2 at these resolutions).

With ``--run RUN_DIR`` a trained Darcy surrogate's own predictions are measured too.
Inference time: the measured CPU forward pass of the ``darcy-galerkin`` preset (random
weights; the cost does not depend on them) at each resolution, added to every variant
but ``zero`` in ``total_time``.

Writes ``benchmarks/results/warmstart.json`` and ``.md`` (``--quick``: ``warmstart_quick.*``); the
measurements are :mod:`benchmarks.lab.warmstart`'.

Run: ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m benchmarks.bench_warmstart [--quick]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.lab import warmstart as bw
from benchmarks.lab.timing import hardware
from neuralop_fem.reproduce.results import write_results
from neuralop_fem.reproduce.script_runner import count, run_script
from neuralop_fem.surrogate.warmstart import VARIANTS
from solvers.darcy import DarcyFDSolver
from solvers.grf import NeumannGRF, threshold

RESULTS = Path(__file__).parent / "results"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run (n=85, 2 samples)")
    parser.add_argument("--samples", type=count(), default=3)
    parser.add_argument("--run", type=Path, default=None, help="a trained Darcy run directory")
    parser.add_argument("--resolution", type=count(3), action="append", default=None,
                        help="grid size (repeatable; default 85, 141, 211)")
    parser.add_argument("--predictions", choices=("all", "surrogate"), default="all",
                        help="'surrogate': only the trained run's predictions (needs --run)")
    args = parser.parse_args(argv)
    if args.predictions == "surrogate" and args.run is None:
        parser.error("--predictions surrogate needs --run")
    resolutions = (85,) if args.quick else tuple(args.resolution or (85, 141, 211))
    tolerances = (1e-4, 1e-10) if args.quick else (1e-4, 1e-6, 1e-8, 1e-10)
    n_samples = 2 if args.quick else args.samples
    repeats = 1 if args.quick else 2
    rng = np.random.default_rng(2024)
    rows = []
    t_start = time.perf_counter()
    for n in resolutions:
        a = threshold(NeumannGRF(n).sample(n_samples, rng=rng))
        u = DarcyFDSolver().solve(a)
        t_inf = bw.inference_time(n, repeats)
        preds = {}
        if args.predictions == "all":
            preds = {f"smooth {lvl:g}": bw.smooth_error(u, lvl, rng) for lvl in (1e-1, 1e-2, 1e-3)}
            preds["coarse"] = bw.coarse_prediction(a)
        if args.run is not None:
            from neuralop_fem.surrogate import Surrogate

            preds["surrogate"] = Surrogate.load(args.run, device="cpu").solve(a, resample=True)
        rows += bw.warm_start_rows(a, u, preds, tolerances=tolerances, inference=t_inf,
                                   repeats=repeats, verbose=True)
    result = {"hardware": hardware("2-core box shared with other engineers' jobs; times are "
                                   "best of repeats"), "settings": {
        "resolutions": resolutions, "tolerances": tolerances, "samples": n_samples,
        "repeats": repeats, "coefficient": "threshold(NeumannGRF(n), 12, 3), f = 1, FD harmonic",
        "variants": VARIANTS}, "rows": rows, "wall_time_s": time.perf_counter() - t_start}
    name = "warmstart_quick" if args.quick else "warmstart"
    if args.run is not None:
        name += "_surrogate"
        result["settings"]["run"] = str(args.run)
    write_results(RESULTS, name, result, bw.markdown(result))
    print(bw.markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
