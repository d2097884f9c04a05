"""The cost per sample of the cheap solver settings (the ladder's rungs) on small grids.

Darcy FD (the benchmark coefficient subsampled from 421) with the per-sample GMG path, the
batched ``"banded"`` Cholesky and ``"dst-cg"``; Burgers spectral, the first solve with new
settings and repeat solves; the Darcy forward ladder as ``compare`` runs it against the
default solver at 43 x 43.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from neuralop_fem.evaluation.fair import measure_ladder
from neuralop_fem.metrics import relative_l2
from neuralop_fem.reproduce.results import footer
from solvers import BurgersSpectralSolver, DarcyFDSolver, PeriodicGRF
from solvers.problems import get_problem

from .timing import per_sample_times

__all__ = ["burgers_rows", "darcy_ladder", "darcy_rows", "ladder_seconds", "markdown"]

#: (linear solver, tolerance) of the Darcy rows.
DARCY_SETTINGS = (("gmg", 1e-10), ("banded", 1e-10), ("dst-cg", 1e-4), ("dst-cg", 1e-6),
                  ("dst-cg", 1e-10))


def darcy_rows(a421: np.ndarray, u421: np.ndarray, repeats: int, *,
               sizes: tuple[int, ...] = (29, 43, 61, 71)) -> list[dict[str, Any]]:
    """Per-sample times of :data:`DARCY_SETTINGS` at each size (the coefficients ``a421``
    (k, 421, 421) strided), the algebraic error against the direct solve (worst sample) and
    the error against the 421 solutions ``u421`` of the first samples (mean)."""
    samples, k = len(a421), len(u421)
    rows = []
    for n in sizes:
        stride = 420 // (n - 1)
        a = np.ascontiguousarray(a421[:, ::stride, ::stride])
        exact = DarcyFDSolver(linear_solver="direct").solve(a)
        for method, tol in DARCY_SETTINGS:
            solver = DarcyFDSolver(linear_solver=method, tol=tol, batch_size=samples)
            u = solver.solve(a)  # warm-up (caches, imports)
            rows.append({"problem": "darcy", "n": n, "linear_solver": method, "tol": tol,
                         "batch": samples,
                         **per_sample_times(lambda s=solver, a=a: s.solve(a), repeats, samples),
                         "algebraic_rel_l2_max": float(relative_l2(u, exact).max()),
                         "rel_l2_vs_421_mean": float(relative_l2(
                             u[:k], u421[:, ::stride, ::stride]).mean())})
    return rows


def ladder_seconds(time: np.ndarray, time_batch1: np.ndarray,
                   time_all_cores: np.ndarray | None) -> float:
    """Seconds per sample of a ladder's timed solves, as the fair verdict runs them: each rung
    at the full batch (``time``, (rungs, samples)), four samples one per call (``time_batch1``,
    (rungs, samples)) and the samples on all cores (``time_all_cores``, (rungs,), or None).

    >>> t = np.ones((2, 8))
    >>> ladder_seconds(t, t, None), ladder_seconds(t, t, np.ones(2))
    (3.0, 5.0)
    """
    n = time.shape[1]
    total = float(time.mean(1).sum() + min(n, 4) / n * time_batch1.mean(1).sum())
    return total + (float(np.sum(time_all_cores)) if time_all_cores is not None else 0.0)


def darcy_ladder(a421: np.ndarray, u421: np.ndarray, repeats: int,
                 workers: int) -> dict[str, Any]:
    """The Darcy forward ladder (rungs up to 106) as ``compare`` runs it on the first
    ``len(u421)`` samples (comparison grid 43: the 421 solutions strided by 10), the least
    costly of ``repeats`` whole ladders, against the default solver at 43."""

    problem = get_problem("darcy")
    rungs = [r for r in problem.ladder() if r.resolution is not None and r.resolution <= 106]
    truth = np.ascontiguousarray(u421[:, ::10, ::10])
    a = a421[: len(u421)]
    best: tuple[float, Any] | None = None
    for _ in range(repeats):  # the least disturbed of a few whole ladders
        m = measure_ladder(rungs, a, truth, problem=problem, workers=workers)
        allc = m["time_all_cores"]
        total = ladder_seconds(m["time"], m["time_batch1"],
                               allc[:, 0] if allc is not None else None)
        if best is None or total < best[0]:
            best = (total, m)
    assert best is not None
    total, m = best
    reference = DarcyFDSolver()  # the default solver at the model grid
    coarse = np.ascontiguousarray(a[:, ::10, ::10])
    reference.solve(coarse[:1])
    ref = per_sample_times(lambda: reference.solve(coarse), repeats, len(coarse))
    allc = m["time_all_cores"]
    return {"samples": len(a), "workers": workers, "ladder_ms_per_sample": 1e3 * total,
            "reference_ms_per_sample": ref["min_ms"], "reference": "DarcyFDSolver() (gmg) at 43",
            "rungs": [{"rung": label, "rel_l2_mean": float(m["rel_l2"][i].mean()),
                       "ms_batch": 1e3 * float(m["time"][i].mean()),
                       "ms_one_per_call": 1e3 * float(m["time_batch1"][i].mean()),
                       "ms_all_cores": 1e3 * float(allc[i, 0]) if allc is not None else None}
                      for i, label in enumerate(m["labels"])]}


def burgers_rows(samples: int, repeats: int, *,
                 sizes: tuple[int, ...] = (64, 128, 256)) -> list[dict[str, Any]]:
    """Burgers spectral (dt = 0.02) at each size, batch 1 and ``samples``: the first solve
    with new settings (ETDRK4 coefficients computed) and repeat solves, per sample."""
    u0 = PeriodicGRF(8192).sample(samples, rng=np.random.default_rng(0))
    rows = []
    for n in sizes:
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
                         "first_solve": per_sample_times(first_solve, repeats, batch),
                         "repeat_solve": per_sample_times(
                             lambda s=solver, b=batch, x=x: s.solve(x[:b]), repeats, batch)})
    return rows


def markdown(data: dict[str, Any]) -> str:
    """The results file of the three measurements (``data``: their rows, ``repeats``,
    ``conditions``, ``accuracy_samples`` and the environment ``record``)."""

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
    lines += [f"| {r['n']} x {r['n']} | {r['linear_solver']} | {r['tol']:g} | {r['batch']} "
              f"| {r['min_ms']:.2f} | {r['median_ms']:.2f} | {r['cpu_min_ms']:.2f} | "
              f"{r['algebraic_rel_l2_max']:.1e} | {r['rel_l2_vs_421_mean']:.4e} |"
              for r in data["darcy"]]
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
