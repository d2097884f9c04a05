"""The defaults of ``DarcyInverseSolver`` on the inverse-Darcy benchmark (Cao 2021, ex3).

Data: ``n_train + n_test`` two-phase coefficients (12 where a Neumann GRF
``N(0, (-Delta + 9 I)^-2)`` is positive, 3 elsewhere) at n = 421, solved with ``DarcyFDSolver``
(f = 1), strided to n = 141 (stride 3) and 85 (stride 5). The training solutions only give
the pointwise std ``sigma`` of the paper's noise ``epsilon (sigma + 1e-5) N(0, 1)``, converted
per test sample by ``paper_noise_to_relative`` (the level passed to the solver). Truth on the
observation grid: the strided coefficient (two-valued); coarse truth: the paper's target, the
421 coefficient average-pooled by the stride and then by 4 (141 -> 36, 85 -> 22).

Starts: ``const`` (the default multilevel start from the best constant) and ``surrogate``
(a stand-in for a surrogate's prediction: the coarse target times ``1 + 0.03 N(0, 1)``,
interpolated bilinearly in ``log a`` to the observation grid).

Run (single-threaded BLAS as reported)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m benchmarks.inverse_defaults
    OMP_NUM_THREADS=1 python -m benchmarks.inverse_defaults --test 2 --train 16  # quick

Writes ``benchmarks/results/inverse_defaults.json`` and ``.md``; each row is
:func:`benchmarks.lab.inverse_settings.defaults_case`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from benchmarks.lab import inverse_settings as bi
from benchmarks.lab.timing import hardware
from neuralop_fem.reproduce.results import write_results
from neuralop_fem.reproduce.script_runner import count, run_script
from solvers import DarcyInverseSolver

RESULTS = Path(__file__).parent / "results"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=count(), default=48)
    parser.add_argument("--test", type=count(), default=8)
    parser.add_argument("--seed", type=count(0), default=2024)
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    data = bi.benchmark_data(args.train, args.test, args.seed)
    rows = []
    for n in bi.GRIDS:
        for epsilon in (0.0, 0.01, 0.1):
            for start in ("const", "surrogate"):
                rows.append(bi.defaults_case(data, n, epsilon, start, args.train))
                print(json.dumps(rows[-1]), flush=True)
    meta = {"n_train": args.train, "n_test": args.test, "seed": args.seed,
            "solver": DarcyInverseSolver().method, "total_seconds": time.perf_counter() - t0,
            "hardware": hardware("2-core box shared with two training jobs")}
    write_results(RESULTS, "inverse_defaults", {"meta": meta, "rows": rows},
                  bi.defaults_markdown(rows, meta))
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
