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
quiet core would take, less exposed to other load). Writes benchmarks/results/rungs.{json,md}.

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
from solvers.problems import get_problem

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


def _rel_l2(u: np.ndarray, ref: np.ndarray) -> np.ndarray:
    diff = (u - ref).reshape(len(u), -1)
    return np.linalg.norm(diff, axis=1) / np.linalg.norm(ref.reshape(len(ref), -1), axis=1)


def darcy_rows(a421: np.ndarray, u421: np.ndarray, repeats: int) -> list[dict[str, Any]]:
    samples, k = len(a421), len(u421)
    rows = []
    for n in (29, 43, 61, 71):
        stride = 420 // (n - 1)
        a = np.ascontiguousarray(a421[:, ::stride, ::stride])
        exact = DarcyFDSolver(linear_solver="direct").solve(a)
        settings = [("gmg", 1e-10), ("banded", 1e-10), ("dst-cg", 1e-4), ("dst-cg", 1e-6),
                    ("dst-cg", 1e-10)]
        for method, tol in settings:
            solver = DarcyFDSolver(linear_solver=method, tol=tol, batch_size=samples)
            u = solver.solve(a)  # warm-up (caches, imports)
            row = {"problem": "darcy", "n": n, "linear_solver": method, "tol": tol,
                   "batch": samples, **_times(lambda s=solver, a=a: s.solve(a), repeats, samples),
                   "algebraic_rel_l2_max": float(_rel_l2(u, exact).max()),
                   "rel_l2_vs_421_mean": float(_rel_l2(u[:k], u421[:, ::stride, ::stride]).mean())}
            rows.append(row)
    return rows


def darcy_ladder(a421: np.ndarray, u421: np.ndarray, repeats: int,
                 workers: int) -> dict[str, Any]:
    """The forward ladder as compare runs it (comparison grid 43), against the reference."""
    from neuralop_fem.evaluation.fair import measure_ladder

    problem = get_problem("darcy")
    rungs = [r for r in problem.ladder() if r.resolution is not None and r.resolution <= 106]
    truth = np.ascontiguousarray(u421[:, ::10, ::10])
    a = a421[: len(u421)]
    best: dict[str, Any] | None = None
    for _ in range(repeats):  # the least disturbed of a few whole ladders
        m = measure_ladder(rungs, a, truth, problem=problem, workers=workers)
        total = (m["time"].mean(1).sum() + min(len(a), 4) / len(a) * m["time_batch1"].mean(1).sum()
                 + (m["time_all_cores"][:, 0].sum() if m["time_all_cores"] is not None else 0.0))
        if best is None or total < best["ladder_ms"] / 1e3:
            best = {"ladder_ms": 1e3 * total, "measured": m}
    assert best is not None
    m = best["measured"]
    reference = DarcyFDSolver()  # the default solver at the model grid
    coarse = np.ascontiguousarray(a[:, ::10, ::10])
    reference.solve(coarse[:1])
    ref = _times(lambda: reference.solve(coarse), repeats, len(coarse))
    return {"samples": len(a), "workers": workers, "ladder_ms_per_sample": best["ladder_ms"],
            "reference_ms_per_sample": ref["min_ms"], "reference": "DarcyFDSolver() (gmg) at 43",
            "rungs": [{"rung": label, "rel_l2_mean": float(m["rel_l2"][i].mean()),
                       "ms_batch": 1e3 * float(m["time"][i].mean()),
                       "ms_one_per_call": 1e3 * float(m["time_batch1"][i].mean()),
                       "ms_all_cores": (1e3 * float(m["time_all_cores"][i, 0])
                                        if m["time_all_cores"] is not None else None)}
                      for i, label in enumerate(m["labels"])]}


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
             "the min is the least disturbed figure; CPU = least process CPU time per sample. "
             f"{data['conditions']}", "",
             "Darcy: algebraic error = relative L2 against the direct solve of the same FD "
             "system (worst sample); error vs 421 = the rung's relative L2 against the n = 421 "
             f"solution at its nodes (mean over {data['accuracy_samples']} samples: the "
             "discretisation error when the solve is accurate enough).", "",
             "| Darcy FD | linear solver | tol | batch | min ms | median ms | CPU ms | "
             "algebraic error | error vs 421 |", "|---|---|---|---|---|---|---|---|---|"]
    for r in data["darcy"]:
        lines.append(f"| {r['n']} x {r['n']} | {r['linear_solver']} | {r['tol']:g} | {r['batch']} "
                     f"| {r['min_ms']:.2f} | {r['median_ms']:.2f} | {r['cpu_min_ms']:.2f} | "
                     f"{r['algebraic_rel_l2_max']:.1e} | {r['rel_l2_vs_421_mean']:.4e} |")
    lines += ["", "| Burgers spectral | dt | batch | first solve min / median / CPU ms | "
              "repeat solve min / median / CPU ms |", "|---|---|---|---|---|"]
    for r in data["burgers"]:
        f, s = r["first_solve"], r["repeat_solve"]
        lines.append(f"| n = {r['n']} | {r['dt']} | {r['batch']} | {f['min_ms']:.2f} / "
                     f"{f['median_ms']:.2f} / {f['cpu_min_ms']:.2f} | {s['min_ms']:.2f} / "
                     f"{s['median_ms']:.2f} / {s['cpu_min_ms']:.2f} |")
    lad = data["ladder"]
    lines += ["", f"Darcy forward ladder as `compare` runs it ({lad['samples']} samples, "
              f"comparison grid 43 x 43, least of {data['repeats']} whole ladders): ms per "
              "sample.", "", "| rung | rel. L2 vs 421 | ms batch | ms one per call | "
              f"ms {lad['workers']} processes |", "|---|---|---|---|---|"]
    for g in lad["rungs"]:
        allc = f"{g['ms_all_cores']:.3g}" if g["ms_all_cores"] is not None else "n/a"
        lines.append(f"| {g['rung']} | {g['rel_l2_mean']:.2e} | {g['ms_batch']:.3g} | "
                     f"{g['ms_one_per_call']:.3g} | {allc} |")
    lines += ["", f"The ladder's timed solves (batch + four one per call + all processes, as "
              f"benchmarks/bench_fair.py counts them) cost {lad['ladder_ms_per_sample']:.3g} ms "
              f"per sample; the reference solve ({lad['reference']}) "
              f"{lad['reference_ms_per_sample']:.3g} ms: "
              f"{lad['ladder_ms_per_sample'] / lad['reference_ms_per_sample']:.2g}x.",
              "", *footer(data["record"])]
    return "\n".join(lines)


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
