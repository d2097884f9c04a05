"""Cost per sample of the cheap solver settings (ladder rungs) on small grids, one core.

Darcy FD (benchmark 12/3 coefficient subsampled from 421, f = 1) at 29 ... 71: the per-sample
GMG path (the default solver, what the rungs cost before the batched methods) against the batched
``"banded"`` Cholesky and ``"dst-cg"`` at tolerances 1e-4, 1e-6 and 1e-10. Beside each time, the
algebraic error (relative L2 against the direct solve of the same FD system, worst sample) and
the rung's error against the n = 421 solution strided to the rung's nodes (mean over the first
``--accuracy-samples``): the tolerance is adequate when the second does not move with it (the
rung's error is the discretisation's, not the solver's). Burgers spectral (nu = 0.1/(2 pi),
dt = 0.02) at n = 64, 128, 256, batch 1 and a large batch: the first solve with new settings
(ETDRK4 coefficients computed) and repeat solves. The Darcy forward ladder as ``compare`` runs
it (rungs up to 106 x 106, answers interpolated to a 43 x 43 comparison grid, the samples in one
batch, four samples one per call, and the samples over ``--workers`` processes) against the
default solver at 43 x 43 (the reference solve of a darcy-fno comparison). Each time is the min
and the median over ``--repeats`` timed repeats divided by the batch size (the machine may be
shared: the min is the least disturbed), and the least process CPU time (one thread: what a
quiet core would take, less exposed to other load). Writes benchmarks/results/rungs.{json,md}
(the measurements: :mod:`benchmarks.lab.rungs`).

Run: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python -m benchmarks.bench_rungs
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from benchmarks.lab.rungs import burgers_rows, darcy_ladder, darcy_rows, markdown
from neuralop_fem.environment import environment_record as record
from neuralop_fem.reproduce.results import write_results
from neuralop_fem.reproduce.script_runner import count, run_script
from solvers import DarcyFDSolver, NeumannGRF, threshold

RESULTS = Path(__file__).resolve().parent / "results"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=count(1), default=32, help="batch size (default 32)")
    parser.add_argument("--repeats", type=count(1), default=7, help="timed repeats (default 7)")
    parser.add_argument("--accuracy-samples", type=count(2), default=12,
                        help="samples solved at 421 for the Darcy errors and the ladder "
                             "(default 12)")
    parser.add_argument("--workers", type=count(1), default=2,
                        help="processes of the ladder's all-core timing (default 2)")
    parser.add_argument("--conditions", default="",
                        help="a sentence on the machine's load during the run")
    args = parser.parse_args(argv)
    a421 = threshold(NeumannGRF(421).sample(args.samples, rng=np.random.default_rng(0)))
    k = min(args.accuracy_samples, args.samples)
    u421 = DarcyFDSolver().solve(a421[:k])  # GMG to 1e-10: the fine reference
    data = {"samples": args.samples, "repeats": args.repeats, "accuracy_samples": k,
            "conditions": args.conditions,
            "darcy": darcy_rows(a421, u421, args.repeats),
            "burgers": burgers_rows(args.samples, args.repeats),
            "ladder": darcy_ladder(a421, u421, min(args.repeats, 3), args.workers),
            "record": record()}
    text = markdown(data)
    js, md = write_results(RESULTS, "rungs", data, text)
    print(text)
    print(f"wrote {js} and {md}")
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
