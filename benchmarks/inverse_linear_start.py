"""GMG-CG from a start far worse than zero: the linear solves inside the Darcy inversion.

An optimiser's trial coefficient can jump by orders of magnitude between two objective
evaluations, and each linear solve starts from the previous evaluation's state. This script
builds that situation with the public solver: the two-phase coefficient ``a_old`` (3 / 12) and
its solution ``u_old``, then ``a_new`` = ``a_old`` with the high phase multiplied by ``jump``,
solved by ``DarcyFDSolver(linear_solver="gmg", tol=1e-10)`` from ``initial_guess=u_old`` and
from zero. Recorded per case: iterations, final relative residual, or the ConvergenceError.

Run (any checkout: the figures before the fix come from the same script on the older code)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/inverse_linear_start.py
    git archive 3662572 solvers | tar -x -C /tmp/old && OMP_NUM_THREADS=1 \
        PYTHONPATH=/tmp/old:. python benchmarks/inverse_linear_start.py --tag before

Writes ``benchmarks/results/inverse_linear_start[_TAG].{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np

from solvers import ConvergenceError, DarcyFDSolver, NeumannGRF, threshold

RESULTS = Path(__file__).resolve().parent / "results"


def _case(n: int, jump: float, seed: int) -> dict[str, object]:
    a_old = threshold(NeumannGRF(n).sample(1, rng=np.random.default_rng(seed)))[0]
    u_old = DarcyFDSolver().solve(a_old)
    a_new = np.where(a_old > 5, a_old * jump, a_old)
    solver = DarcyFDSolver(linear_solver="gmg", tol=1e-10)
    row: dict[str, object] = {"n": n, "jump": jump, "seed": seed}
    for start, guess in (("zero", None), ("previous state", u_old)):
        t0 = time.perf_counter()
        try:
            _, report = solver.solve_with_report(a_new, initial_guess=guess)
            row[start] = {"iterations": int(report.iterations[0]),
                          "residual": float(report.residual[0]),
                          "seconds": time.perf_counter() - t0}
        except ConvergenceError as exc:
            row[start] = {"error": str(exc), "seconds": time.perf_counter() - t0}
    return row


def _cell(result: dict[str, object]) -> str:
    if "error" in result:
        text = str(result["error"])
        residual = text.split("relative residual ")[1].split(" ")[0]
        its = text.split(" after ")[1].split(" ")[0]
        return f"ConvergenceError: residual {residual} after {its} its"
    return f"{result['iterations']} its, {result['residual']:.1e}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tag", default="", help="suffix of the results files")
    args = parser.parse_args()
    rows = [_case(n, jump, seed=0) for n in (17, 33, 65, 141) for jump in (1e2, 1e4, 1e6)]
    stem = "inverse_linear_start" + (f"_{args.tag}" if args.tag else "")
    record = {"machine": platform.platform(), "python": platform.python_version(),
              "settings": "DarcyFDSolver(linear_solver='gmg', tol=1e-10), maxiter 200",
              "rows": rows}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{stem}.json").write_text(json.dumps(record, indent=2) + "\n")
    lines = ["| n | jump | from zero | from the previous state |", "|---|---|---|---|"]
    lines += [f"| {r['n']} | {r['jump']:g} | {_cell(r['zero'])} | {_cell(r['previous state'])} |"
              for r in rows]
    (RESULTS / f"{stem}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
