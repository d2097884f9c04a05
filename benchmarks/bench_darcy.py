"""Speed and accuracy of the Darcy solvers on the benchmark 12/3 coefficient.

Speed: seconds per sample (assembly and linear solve separately) of ``DarcyFDSolver`` with
every linear solver at n = 141, 211, 421, iterations, final relative residual and the
relative L2 distance to scipy's direct solution ("accuracy reached").

Accuracy: FD (harmonic / arithmetic faces) and FEM (P1 / Q1) at modest n against a 4x refined
reference (and the 2x refined solution), for the same coefficient: the GRF sampled at the
coarse nodes is interpolated bicubically to the fine grid and thresholded there, so the
coarse coefficient is the fine one sampled at the coarse nodes.

Run (single-threaded BLAS as the results are reported)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m benchmarks.bench_darcy
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m benchmarks.bench_darcy --quick

Writes ``benchmarks/results/darcy_solver.json`` and ``.md``; the measurements are
:mod:`benchmarks.lab.solvers`'.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.lab.solvers import darcy_accuracy, darcy_speed, markdown_darcy
from benchmarks.lab.timing import hardware
from neuralop_fem.reproduce.results import write_results
from neuralop_fem.reproduce.script_runner import run_script

RESULTS = Path(__file__).parent / "results"
METHODS = ["direct", "cg", "amg-sa", "amg-rs", "gmg"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: small grids, one sample")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.quick:
        settings = {"sizes": [33, 65], "methods": METHODS, "samples": 1, "repeats": 1,
                    "accuracy_sizes": [17], "accuracy_samples": 1}
    else:
        settings = {"sizes": [141, 211, 421], "methods": METHODS, "samples": 3, "repeats": 3,
                    "accuracy_sizes": [43, 85], "accuracy_samples": 4}
    speed = darcy_speed(settings["sizes"], METHODS, settings["samples"], settings["repeats"],
                        verbose=True)
    accuracy = darcy_accuracy(settings["accuracy_sizes"], settings["accuracy_samples"],
                              verbose=True)
    import pyamg  # noqa: F401  (loaded: its version goes into the record, as scipy's, skfem's)

    result = {"hardware": hardware("2-core box shared with other engineers' jobs; best of "
                                   "`repeats` per sample"),
              "settings": settings, "speed": speed, "accuracy": accuracy}
    name = "darcy_solver.quick" if args.quick else "darcy_solver"
    write_results(args.out, name, result, markdown_darcy(result))
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
