"""Speed and accuracy of BurgersSpectralSolver on benchmark GRF data against Cole-Hopf.

Reports, for nu = 0.1/(2 pi) and 0.1: seconds per sample (batch, best of repeats), time
steps, FFT pairs and the FFT floor (time of one batched full-length rfft+irfft pair times the
number of pairs, scaled by the mean FFT length actually used), and the relative L2 error
against :func:`solvers.exact.burgers_exact`. Writes benchmarks/results/burgers_solver.json/.md
(:func:`benchmarks.lab.solvers.burgers_speed_accuracy`).

Run: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m benchmarks.bench_burgers [--quick]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.lab.solvers import burgers_speed_accuracy, markdown_burgers
from benchmarks.lab.timing import hardware
from neuralop_fem.reproduce.results import write_results
from neuralop_fem.reproduce.script_runner import run_script

RESULTS = Path(__file__).parent / "results"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: n=512, batch 2")
    args = parser.parse_args(argv)
    size = dict(n=512, batch=2, repeats=1) if args.quick else dict(n=8192, batch=8, repeats=3)
    res = burgers_speed_accuracy(**size)
    res["hardware"] = hardware("2-core box shared with three other engineers' jobs; timings "
                               "are best of repeats")
    name = "burgers_solver.quick" if args.quick else "burgers_solver"
    write_results(RESULTS, name, res, markdown_burgers(res))
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
