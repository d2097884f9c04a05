"""Cost per sample of the cheap solver settings (ladder rungs) on small grids, one core.

Darcy FD (benchmark 12/3 coefficient subsampled from 421, f = 1) at 43 x 43 and 71 x 71: the
per-sample GMG path (the default solver, what the rungs cost before the batched methods) against
the batched ``"banded"`` Cholesky and ``"dst-cg"`` (tolerances 1e-6 and 1e-10). Burgers spectral
(nu = 0.1/(2 pi), dt = 0.02) at n = 64, 128, 256, batch 1 and a large batch: the first solve with
new settings (ETDRK4 coefficients computed, as every solve did before they were shared) and
repeat solves. Each figure is the min and the median over ``--repeats`` timed repeats of the
batch, divided by its size (the machine may be shared: the min is the least disturbed), and the
least process CPU time (one thread: what a quiet core would take, less exposed to other load).
Writes benchmarks/results/rungs.{json,md}.

Run: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python benchmarks/bench_rungs.py
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from neuralop_fem.environment import environment_record as record
from neuralop_fem.reproduce.results import footer, write_results
from neuralop_fem.reproduce.script import count, run_script
from solvers import BurgersSpectralSolver, DarcyFDSolver, NeumannGRF, PeriodicGRF, threshold

RESULTS = Path(__file__).resolve().parent / "results"


def _times(fn: Any, repeats: int, size: int) -> dict[str, float]:
    """Wall and process CPU time per sample (ms), min and median over repeats."""
    wall, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append((time.perf_counter() - t0) / size)
        cpu.append((time.process_time() - c0) / size)
    return {"min_ms": 1e3 * min(wall), "median_ms": 1e3 * float(np.median(wall)),
            "cpu_min_ms": 1e3 * min(cpu)}


def darcy_rows(samples: int, repeats: int) -> list[dict[str, Any]]:
    a421 = threshold(NeumannGRF(421).sample(samples, rng=np.random.default_rng(0)))
    rows = []
    for n in (43, 71):
        stride = 420 // (n - 1)
        a = np.ascontiguousarray(a421[:, ::stride, ::stride])
        exact = DarcyFDSolver(linear_solver="direct").solve(a)
        settings = [("gmg", 1e-10), ("banded", 1e-10), ("dst-cg", 1e-6), ("dst-cg", 1e-10)]
        for method, tol in settings:
            solver = DarcyFDSolver(linear_solver=method, tol=tol, batch_size=samples)
            u = solver.solve(a)  # warm-up (caches, imports)
            row = {"problem": "darcy", "n": n, "linear_solver": method, "tol": tol,
                   "batch": samples, **_times(lambda s=solver, a=a: s.solve(a), repeats, samples),
                   "max_rel_diff_vs_direct": float(np.abs(u - exact).max() / np.abs(exact).max())}
            rows.append(row)
    return rows


def burgers_rows(samples: int, repeats: int) -> list[dict[str, Any]]:
    u0 = PeriodicGRF(8192).sample(samples, rng=np.random.default_rng(0))
    rows = []
    for n in (64, 128, 256):
        x = np.ascontiguousarray(u0[:, :: 8192 // n])
        for batch in (1, samples):
            counter = iter(range(10**6))

            def first_solve(b: int = batch, x: np.ndarray = x, counter: Any = counter) -> None:
                # new settings each call: the ETDRK4 coefficients are computed
                nu = 0.1 / (2 * np.pi) * (1 + 1e-12 * next(counter))
                BurgersSpectralSolver(viscosity=nu, dt=0.02).solve(x[:b])

            solver = BurgersSpectralSolver(dt=0.02)
            solver.solve(x[:batch])
            rows.append({"problem": "burgers", "n": n, "dt": 0.02, "batch": batch,
                         "first_solve": _times(first_solve, repeats, batch),
                         "repeat_solve": _times(lambda s=solver, b=batch, x=x: s.solve(x[:b]),
                                                repeats, batch)})
    return rows


def markdown(data: dict[str, Any]) -> str:
    lines = ["# Cost of cheap solver settings on small grids (one core)", "",
             f"Per sample, min / median over {data['repeats']} repeats (ms). Shared machine: "
             "the min is the least disturbed figure; CPU = least process CPU time per sample.", "",
             "| Darcy FD | linear solver | tol | batch | min ms | median ms | CPU ms | "
             "max diff vs direct |", "|---|---|---|---|---|---|---|---|"]
    for r in data["darcy"]:
        lines.append(f"| {r['n']} x {r['n']} | {r['linear_solver']} | {r['tol']:g} | {r['batch']} "
                     f"| {r['min_ms']:.2f} | {r['median_ms']:.2f} | {r['cpu_min_ms']:.2f} | "
                     f"{r['max_rel_diff_vs_direct']:.1e} |")
    lines += ["", "| Burgers spectral | dt | batch | first solve min / median / CPU ms | "
              "repeat solve min / median / CPU ms |", "|---|---|---|---|---|"]
    for r in data["burgers"]:
        f, s = r["first_solve"], r["repeat_solve"]
        lines.append(f"| n = {r['n']} | {r['dt']} | {r['batch']} | {f['min_ms']:.2f} / "
                     f"{f['median_ms']:.2f} / {f['cpu_min_ms']:.2f} | {s['min_ms']:.2f} / "
                     f"{s['median_ms']:.2f} / {s['cpu_min_ms']:.2f} |")
    lines += ["", *footer(data["record"])]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=count(1), default=32, help="batch size (default 32)")
    parser.add_argument("--repeats", type=count(1), default=7, help="timed repeats (default 7)")
    args = parser.parse_args(argv)
    data = {"samples": args.samples, "repeats": args.repeats,
            "darcy": darcy_rows(args.samples, args.repeats),
            "burgers": burgers_rows(args.samples, args.repeats), "record": record()}
    text = markdown(data)
    js, md = write_results(RESULTS, "rungs", data, text)
    print(text)
    print(f"wrote {js} and {md}")
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
