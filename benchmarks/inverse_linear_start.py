"""GMG-CG from a start far worse than zero: the linear solves inside the Darcy inversion.

An optimiser's trial coefficient can jump by orders of magnitude between two objective
evaluations, and each linear solve starts from the previous evaluation's state. This script
builds that situation with the public solver: the two-phase coefficient ``a_old`` (3 / 12) and
its solution ``u_old``, then ``a_new`` = ``a_old`` with the high phase multiplied by ``jump``,
solved by ``DarcyFDSolver(linear_solver="gmg", tol=1e-10)`` from ``initial_guess=u_old`` and
from zero. Recorded per case: iterations, final relative residual, or the ConvergenceError.

Run (any checkout: the figures before the fix come from the same script on the older code)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m benchmarks.inverse_linear_start
    git archive 3662572 solvers | tar -x -C /tmp/old && OMP_NUM_THREADS=1 \
        PYTHONPATH=/tmp/old:. python -P -m benchmarks.inverse_linear_start --tag before

Writes ``benchmarks/results/inverse_linear_start[_TAG].{json,md}``; each row is
:func:`benchmarks.lab.inverse_settings.linear_start_case`.
"""

from __future__ import annotations

import argparse
import platform
from pathlib import Path

from benchmarks.lab.inverse_settings import linear_start_case, linear_start_markdown
from neuralop_fem.reproduce.results import write_results

RESULTS = Path(__file__).resolve().parent / "results"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tag", default="", help="suffix of the results files")
    args = parser.parse_args()
    rows = [linear_start_case(n, jump, seed=0) for n in (17, 33, 65, 141)
            for jump in (1e2, 1e4, 1e6)]
    record = {"machine": platform.platform(), "python": platform.python_version(),
              "settings": "DarcyFDSolver(linear_solver='gmg', tol=1e-10), maxiter 200",
              "rows": rows}
    text = linear_start_markdown(rows)
    write_results(RESULTS, "inverse_linear_start" + (f"_{args.tag}" if args.tag else ""),
                  record, text)
    print(text, end="")


if __name__ == "__main__":
    main()
