"""Darcy solves warm-started from predictions: iterations and time saved per variant
(:data:`neuralop_fem.surrogate.warmstart.VARIANTS`), for predictions with a controlled error
or a trained surrogate's."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from neuralop_fem.metrics import relative_l2
from neuralop_fem.models import build_model
from neuralop_fem.surrogate import resample_nodes
from neuralop_fem.surrogate.warmstart import VARIANTS, measure_warm_start
from solvers.darcy import DarcyFDSolver
from solvers.grf import NeumannGRF

from .timing import best_time

__all__ = ["coarse_prediction", "inference_time", "markdown", "smooth_error", "warm_start_rows"]


def inference_time(n: int, repeats: int, *, preset: str = "darcy-galerkin") -> float:
    """Least seconds of one CPU forward pass (one thread, batch 1) of ``preset`` (random
    weights: the cost does not depend on them) at ``n`` x ``n``, after one warm-up."""
    import torch


    torch.set_num_threads(1)
    model = build_model(preset).eval()
    x = torch.ones(1, n, n, 1)
    with torch.no_grad():
        model(x)
        return best_time(lambda: model(x), repeats)


def smooth_error(u: np.ndarray, level: float, rng: np.random.Generator) -> np.ndarray:
    """``u`` (k, n, n) plus a smooth random field (Neumann GRF times sin(pi x) sin(pi y))
    scaled to relative L2 ``level`` per sample."""
    n = u.shape[-1]
    x = np.linspace(0, 1, n)
    bump = np.sin(np.pi * x)[:, None] * np.sin(np.pi * x)[None, :]
    g = NeumannGRF(n).sample(len(u), rng=rng) * bump
    scale = level * np.linalg.norm(u.reshape(len(u), -1), axis=1) / np.linalg.norm(
        g.reshape(len(u), -1), axis=1)
    return u + scale[:, None, None] * g


def coarse_prediction(a: np.ndarray) -> np.ndarray:
    """The FD solution on the half-resolution grid, bilinearly interpolated back to ``a``'s:
    a prediction whose error sits at the coefficient's interfaces."""

    return resample_nodes(DarcyFDSolver().solve(a[:, ::2, ::2]), a.shape[-1], order=1)


def warm_start_rows(a: np.ndarray, u: np.ndarray, predictions: dict[str, np.ndarray], *,
                    tolerances: tuple[float, ...], inference: float, repeats: int,
                    linear_solvers: tuple[str, ...] = ("gmg", "cg"),
                    verbose: bool = False) -> list[dict[str, Any]]:
    """One row per (prediction, linear solver, tolerance, variant): the mean iterations, solve
    time and total time (solve + ``inference`` for every start but zero) per sample of
    ``DarcyFDSolver`` on ``a`` (k, n, n) started from each prediction (``u``: the solutions)."""

    rows = []
    n = a.shape[-1]
    for kind, pred in predictions.items():
        err = relative_l2(pred, u)
        for linear_solver in linear_solvers:
            solver = dataclasses.replace(DarcyFDSolver(), linear_solver=linear_solver)
            ds = measure_warm_start(solver, a, pred, tolerances=tolerances, variants=VARIANTS,
                                    prediction_time=inference, repeats=repeats)
            for tol in tolerances:
                for v in VARIANTS:
                    sel = ds.sel(tol=tol, variant=v)
                    rows.append({"n": n, "prediction": kind, "prediction_rel_l2": float(err.mean()),
                                 "linear_solver": linear_solver, "tol": tol, "variant": v,
                                 "iterations": float(sel["iterations"].mean()),
                                 "solve_time": float(sel["solve_time"].mean()),
                                 "total_time": float(sel["total_time"].mean()),
                                 "inference_time": inference})
            if verbose:
                print(f"n={n} {kind:12s} ({err.mean():.1e}) {linear_solver}: done",  # noqa: T201
                      flush=True)
    return rows


def markdown(result: dict[str, Any]) -> str:
    """The results file of :func:`warm_start_rows` (``result``: ``rows``, ``settings`` and the
    ``hardware`` block)."""
    rows = result["rows"]
    hw = result["hardware"]
    lines = ["# Warm-starting the Darcy solver from predictions", "",
             f"CPU {hw['cpu_model']} ({hw['cpu_count']} cores), OMP/OPENBLAS threads "
             f"{hw['OMP_NUM_THREADS']}/{hw['OPENBLAS_NUM_THREADS']}; {hw['note']}. "
             f"Samples per cell: {result['settings']['samples']}. Time = mean seconds per sample; "
             "'total' adds the darcy-galerkin forward pass (CPU, batch 1) to every non-zero start.",
             "", "Per variant: mean iterations, solve time / zero-start solve time, total time "
             "(solve + inference) / zero-start time. Ratios < 1 pay.", ""]
    keys = sorted({(r["n"], r["linear_solver"], r["prediction"]) for r in rows},
                  key=lambda k: (k[0], k[1] != "gmg", k[2]))
    lines.append("| n | solver | prediction (rel L2) | tol | zero: its, s | warm: its, solve/zero, "
                 "total/zero | projected | deflated |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for n, ls, kind in keys:
        for tol in result["settings"]["tolerances"]:
            cell = {r["variant"]: r for r in rows if (r["n"], r["linear_solver"], r["prediction"],
                                                       r["tol"]) == (n, ls, kind, tol)}
            z = cell["zero"]
            parts = [f"{cell[v]['iterations']:.1f}, {cell[v]['solve_time'] / z['solve_time']:.2f}, "
                     f"{cell[v]['total_time'] / z['total_time']:.2f}"
                     for v in ("warm", "projected", "deflated")]
            lines.append(f"| {n} | {ls} | {kind} ({z['prediction_rel_l2']:.1e}) | {tol:g} | "
                         f"{z['iterations']:.1f}, {z['total_time']:.3g} s | "
                         + " | ".join(parts) + " |")
    inf = sorted({(r["n"], r["inference_time"]) for r in rows})
    lines += ["", "Surrogate inference (darcy-galerkin forward, CPU, 1 thread): "
              + ", ".join(f"n={n}: {t:.3g} s" for n, t in inf), "",
              "Reproduce: "
              "`OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m benchmarks.bench_warmstart`"]
    return "\n".join(lines) + "\n"
