"""The inverse Darcy problem with a trained surrogate: the surrogate alone, the classical
inversion and the inversion warm-started from the surrogate (:func:`compare_cell`), and the
ways of starting the inversion from the surrogate against oracle starts (:func:`compare_starts`).

The observations are the paper's (:mod:`neuralop_fem.reproduce.inverse`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from neuralop_fem.data.io import load_dataset
from neuralop_fem.evaluation import compare
from neuralop_fem.reproduce.results import footer
from neuralop_fem.surrogate import Surrogate, resample_nodes
from solvers.darcy_inverse import DarcyInverseSolver, coefficient_errors, pool_coefficient
from solvers.grf import threshold

__all__ = ["compare_cell", "compare_starts", "markdown_cells", "markdown_starts", "snap",
           "starts", "test_split"]


def test_split(run: Path, data: Path, samples: int) -> tuple[Any, Any, np.ndarray, np.ndarray]:
    """The surrogate of ``run`` (CPU), the dataset ``data``, the run's training indices and
    its first ``samples`` test indices."""

    surrogate = Surrogate.load(run, device="cpu")
    splits = surrogate.run_info["splits"]
    return (surrogate, load_dataset(data), np.asarray(splits["train"]),
            np.asarray(splits["test"])[:samples])


def _means(ds: Any) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for approach in ds["approach"].values:
        sub = ds.sel(approach=approach)
        out[str(approach)] = {k: float(np.nanmean(sub[k].values)) for k in (
            "rel_l2", "rel_l2_coarse", "misclassified", "misfit", "pde_solves",
            "equivalent_solves", "iterations", "time")}
    return out


def compare_cell(surrogate: Any, solver: Any, obs: dict[str, np.ndarray],
                 warm_phases: tuple[float, float] | None = None) -> dict[str, Any]:
    """One (grid, noise) cell of observations ``obs`` (:func:`paper_observations`): the
    inverse comparison's means per approach, the warm start's ratios of solves and time
    against the default start, and the per-sample arrays."""

    t0 = time.perf_counter()
    ds = compare(solver, surrogate, obs["noisy"], reference_solution=obs["truth"],
                 warm_start=True, noise_level=obs["levels"], warm_phases=warm_phases)
    means = _means(ds)
    cl, warm = means["classical"], means["warm_started"]
    return {
        "means": means,
        "solve_ratio": cl["equivalent_solves"] / max(warm["equivalent_solves"], 1e-12),
        "raw_solve_ratio": cl["pde_solves"] / max(warm["pde_solves"], 1e-12),
        "time_ratio": cl["time"] / max(warm["time"], 1e-12),
        "warm_error_no_worse": bool(warm["rel_l2_coarse"] <= cl["rel_l2_coarse"] * 1.0001),
        "noise_level_mean": float(np.mean(obs["levels"])),
        "per_sample": {k: ds[k].values.tolist() for k in (
            "rel_l2", "rel_l2_coarse", "misclassified", "misfit", "equivalent_solves",
            "pde_solves", "time")},
        "stop_reason": ds["stop_reason"].values.tolist(),
        "wall_s": time.perf_counter() - t0,
    }


def markdown_cells(result: dict[str, Any]) -> str:
    """The results file of :func:`compare_cell` over grids and noise levels (``result``:
    ``cells`` keyed ``"n/epsilon"``, the run, data, samples, ``warm_phases`` and ``record``)."""

    phases = result.get("warm_phases")
    lines = [
        "# Inverse Darcy problem: surrogate, classical inversion, warm-started inversion", "",
        f"Run `{result['run']}` ({result['run_note']}); data `{result['data']}`; "
        f"{result['samples']} test samples per cell, observation noise in the paper's "
        "convention (epsilon), fixed draws.", "",
        "Each cell: coarse-grid rel. L2 / observation-grid rel. L2 / misclassified / relative "
        "data misfit / PDE solves (observation-grid equivalents) / seconds per sample (incl. "
        "inference). Last column: the warm start's saving in PDE solves and wall time against "
        "the default start.", "",
        "Warm start: " + ("the surrogate's coefficient as it is." if not phases
                          else "the surrogate's coefficient snapped to the phases "
                               f"{phases[0]:g} / {phases[1]:g} "
                               "(`compare(..., warm_phases=...)`)."), "",
        "| n | epsilon | surrogate alone | classical inversion | warm-started inversion | "
        "saving |", "|---|---|---|---|---|---|",
    ]
    for key, r in result["cells"].items():
        n, eps = key.split("/")
        cells = [f"{x['rel_l2_coarse']:.3f} / {x['rel_l2']:.3f} / {x['misclassified']:.1%} / "
                 f"{x['misfit']:.1e} / {x['equivalent_solves']:.0f} / {x['time']:.2f}"
                 for x in (r["means"][a] for a in ("surrogate", "classical", "warm_started"))]
        lines.append(f"| {int(n)} | {float(eps):g} | " + " | ".join(cells) +
                     f" | {r['solve_ratio']:.2f}x / {r['time_ratio']:.2f}x |")
    lines += ["", *footer(result["record"])]
    return "\n".join(lines)


def snap(a: np.ndarray) -> np.ndarray:
    """The benchmark's two phases: 12 where ``a > 7.5``, else 3.

    >>> snap(np.array([2.0, 7.4, 7.6, 20.0])).tolist()
    [3.0, 3.0, 12.0, 12.0]
    """
    return np.asarray(threshold(a - 7.5, high=12.0, low=3.0))


def _pooled_truth(truth: np.ndarray, factor: int) -> np.ndarray:
    """The true coefficient average-pooled by ``factor`` and interpolated back, snapped."""

    coarse = pool_coefficient(truth, factor=factor)
    return snap(resample_nodes(coarse, truth.shape[-1], order=1))


def starts(guess: np.ndarray, truth: np.ndarray, maxiter: int) -> dict[
        str, tuple[DarcyInverseSolver, np.ndarray | None, bool]]:
    """The (solver, initial guess, made from the surrogate) triples: the default start, four
    starts from the surrogate's coefficient ``guess``, three oracles from ``truth``."""
    snapped = snap(guess)
    plain = DarcyInverseSolver(maxiter=maxiter)
    return {
        "default": (plain, None, False),
        "surrogate": (plain, guess, True),
        "surrogate, 2 levels": (DarcyInverseSolver(maxiter=maxiter, warm_levels=2), guess, True),
        "two-phase": (plain, snapped, True),
        "two-phase, 2 levels, 15 coarse its": (
            DarcyInverseSolver(maxiter=maxiter, warm_levels=2, coarse_maxiter=15), snapped, True),
        "oracle: truth at 1/4 resolution, snapped": (plain, _pooled_truth(truth, 4), False),
        "oracle: truth at 1/2 resolution, snapped": (plain, _pooled_truth(truth, 2), False),
        "oracle: the true coefficient": (plain, truth, False),
    }


def _errors(a: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    e = coefficient_errors(a, truth, pool=4)
    return {"rel_l2": float(e["fine"].mean()), "rel_l2_coarse": float(e["coarse"].mean()),
            "misclassified": float(e["misclassified"].mean())}


def compare_starts(surrogate: Any, obs: dict[str, np.ndarray], maxiter: int, *,
                   verbose: bool = False) -> dict[str, Any]:
    """Each of :func:`starts` on the observations ``obs``: mean PDE solves (observation-grid
    equivalents and raw), seconds per sample (the surrogate's inference included where the
    start is made from it), stop reasons and coefficient errors; and the surrogate alone."""
    t0 = time.perf_counter()
    guess = np.asarray(surrogate.solve(obs["noisy"], resample=True))
    inference = (time.perf_counter() - t0) / len(guess)
    out: dict[str, Any] = {}
    for name, (solver, start, from_surrogate) in starts(guess, obs["truth"], maxiter).items():
        a, report = solver.solve_with_report(obs["noisy"], initial_guess=start,
                                             noise_level=obs["levels"])
        reasons, counts = np.unique(report.stop_reason, return_counts=True)
        out[name] = {"equivalent_solves": float(report.equivalent_solves.mean()),
                     "pde_solves": float(report.pde_solves.mean()),
                     "time": float(report.solve_time.mean()) + (inference if from_surrogate
                                                                 else 0.0),
                     "stop_reasons": {str(r): int(c) for r, c in zip(reasons, counts,
                                                                     strict=True)},
                     **_errors(np.asarray(a), obs["truth"])}
        if verbose:
            print(name, out[name], flush=True)  # noqa: T201 (a long run's progress)
    return {"starts": out, "surrogate_alone": {**_errors(guess, obs["truth"]), "time": inference}}


def markdown_starts(result: dict[str, Any]) -> str:
    """The results file of :func:`compare_starts` (with the run, data, grid, noise, samples,
    maxiter and the environment ``record``)."""

    lines = [
        "# Starting the Darcy inversion from a surrogate", "",
        f"Run `{result['run']}`; data `{result['data']}`; n = {result['grid']}, noise "
        f"{result['noise']:g} (paper's convention); {result['samples']} test samples; "
        f"`DarcyInverseSolver` defaults but maxiter {result['maxiter']}, discrepancy-principle "
        "stop. Means per sample.", "",
        "| start | PDE solves (n-grid equivalents) | seconds (saving) | "
        "rel. L2 (n / pooled by 4) | misclassified | stop reasons |", "|---|---|---|---|---|---|",
    ]
    base = result["starts"]["default"]
    for name, r in result["starts"].items():
        ratio = base["equivalent_solves"] / r["equivalent_solves"]
        reasons = ", ".join(f"{k} {v}" for k, v in r["stop_reasons"].items())
        lines.append(f"| {name} | {r['equivalent_solves']:.1f} ({ratio:.2f}x) | "
                     f"{r['time']:.2f} ({base['time'] / r['time']:.2f}x) | "
                     f"{r['rel_l2']:.4f} / {r['rel_l2_coarse']:.4f} | "
                     f"{r['misclassified']:.2%} | {reasons} |")
    lines += ["", "The oracle rows start from the true coefficient (pooled to a coarser grid, "
              "interpolated back and snapped to the two phases, or as it is): what a perfect "
              "surrogate with that output resolution would give. Times of the surrogate rows "
              "include its inference."]
    s = result["surrogate_alone"]
    lines += ["", f"The surrogate alone: rel. L2 {s['rel_l2']:.4f} / {s['rel_l2_coarse']:.4f}, "
              f"misclassified {s['misclassified']:.2%}, {s['time']:.3f} s per sample.", ""]
    lines += footer(result["record"])
    return "\n".join(lines)
