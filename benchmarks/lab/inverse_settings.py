"""The settings of the Darcy inversion on the inverse-Darcy benchmark (Cao 2021, ex3): its
defaults from a constant or a surrogate-like start (:func:`defaults_case`), and the GMG-CG
solves inside it from a start far worse than zero (:func:`linear_start_case`).

Only :func:`linear_start_case` and :func:`linear_start_markdown` are needed to measure an
older ``solvers`` (they use its public names ``ConvergenceError``, ``DarcyFDSolver``,
``NeumannGRF`` and ``threshold`` alone).
"""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np

from solvers import ConvergenceError, DarcyFDSolver, NeumannGRF, threshold

__all__ = ["GRIDS", "POOL", "benchmark_data", "defaults_case", "defaults_markdown",
           "linear_start_case", "linear_start_markdown", "surrogate_standin"]

#: Observation grid n -> its stride from 421.
GRIDS = {85: 5, 141: 3}
#: The pooling of the paper's coarse target (141 -> 36, 85 -> 22).
POOL = 4


def benchmark_data(n_train: int, n_test: int, seed: int) -> dict[str, np.ndarray]:
    """Two-phase coefficients and FD solutions at 421 (``n_train + n_test``, from ``seed``),
    strided to each of :data:`GRIDS` (``u85``, ``a85``, ...); the test samples' targets pooled
    by the stride and by :data:`POOL` (``target85``, ...)."""
    from solvers.darcy_inverse import pool_coefficient  # deferred: absent from older solvers

    a = threshold(NeumannGRF(421).sample(n_train + n_test, rng=np.random.default_rng(seed)))
    u = DarcyFDSolver().solve(a)
    data = {}
    for n, s in GRIDS.items():
        data[f"u{n}"], data[f"a{n}"] = u[:, ::s, ::s], a[:, ::s, ::s]
        data[f"target{n}"] = pool_coefficient(pool_coefficient(a[n_train:], factor=s), factor=POOL)
    return data


def surrogate_standin(target: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Coarse target with 3 % pointwise error, bilinear in log a up to the observation grid
    (two refinements: 22 -> 43 -> 85, 36 -> 71 -> 141)."""
    from solvers.kernels import prolong_nodes  # deferred: absent from older solvers

    m = np.log(target * (1.0 + 0.03 * rng.standard_normal(target.shape)))
    for _ in range(2):
        m = np.stack([prolong_nodes(x) for x in m])
    return np.exp(m)


def defaults_case(data: dict[str, np.ndarray], n: int, epsilon: float, start: str,
                  n_train: int) -> dict[str, Any]:
    """``DarcyInverseSolver()`` on the test samples of :func:`benchmark_data` at grid ``n``
    with the paper's noise ``epsilon`` (sigma from the training solutions), from the ``const``
    or the ``surrogate`` (:func:`surrogate_standin`) start: mean errors, solves, time."""
    # deferred: absent from the older solvers that linear_start_case also measures
    from solvers import DarcyInverseSolver
    from solvers.darcy_inverse import add_noise, coefficient_errors, paper_noise_to_relative

    u, a = data[f"u{n}"], data[f"a{n}"]
    train, clean, truth = u[:n_train], u[n_train:], a[n_train:]
    levels = paper_noise_to_relative(epsilon, train, observed=clean)
    rng = np.random.default_rng(7)
    u_obs = add_noise(clean, epsilon, rng=rng, std_field=train.std(axis=0) + 1e-5)
    guess = None if start == "const" else surrogate_standin(data[f"target{n}"], rng)
    a_est, report = DarcyInverseSolver().solve_with_report(u_obs, noise_level=levels,
                                                           initial_guess=guess)
    errors = coefficient_errors(a_est, truth, pool=POOL, a_true_coarse=data[f"target{n}"])
    row: dict[str, Any] = {
        "n": n, "epsilon": epsilon, "start": start,
        "relative_noise_level": float(np.mean(levels)),
        "error_fine": float(errors["fine"].mean()),
        "error_coarse": float(errors["coarse"].mean()),
        "misclassified": float(errors["misclassified"].mean()),
        "pde_solves": float(report.pde_solves.mean()),
        "equivalent_solves": float(report.equivalent_solves.mean()),
        "iterations": float(report.iterations.mean()),
        "seconds": float(report.solve_time.mean()),
        "stop_reasons": report.stop_reason.tolist(),
    }
    if guess is not None:
        start_errors = coefficient_errors(guess, truth, pool=POOL, a_true_coarse=data[f"target{n}"])
        row["start_error_fine"] = float(start_errors["fine"].mean())
        row["start_error_coarse"] = float(start_errors["coarse"].mean())
    return row


def defaults_markdown(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    """The results file of :func:`defaults_case` rows (``meta``: n_train, n_test, seed,
    hardware)."""
    lines = [
        "# DarcyInverseSolver defaults on the inverse-Darcy benchmark", "",
        f"{meta['n_test']} test samples (seed {meta['seed']}), sigma from {meta['n_train']} "
        "training solutions; means over samples. Errors: relative L2 of the coefficient on the "
        "observation grid (truth: strided 421 coefficient) and after pooling by 4 (truth: the "
        "paper's pooled target); misclassified: fraction of nodes on the wrong side of 7.5. "
        "Solves: forward + adjoint on all grids; equivalent: weighted by grid size.", "",
        "| n | epsilon | rel. level | start (its error fine / coarse) | error fine | error coarse "
        "| misclassified | solves | equivalent | iterations | s / sample | stop |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        stops = ", ".join(f"{k} {v}" for k, v in sorted(
            {s: r["stop_reasons"].count(s) for s in set(r["stop_reasons"])}.items()))
        start = r["start"]
        if "start_error_fine" in r:
            start += f" ({r['start_error_fine']:.3f} / {r['start_error_coarse']:.3f})"
        lines.append(
            f"| {r['n']} | {r['epsilon']} | {r['relative_noise_level']:.4f} | {start} | "
            f"{r['error_fine']:.3f} | {r['error_coarse']:.3f} | {r['misclassified']:.3f} | "
            f"{r['pde_solves']:.0f} | {r['equivalent_solves']:.0f} | {r['iterations']:.0f} | "
            f"{r['seconds']:.2f} | {stops} |")
    lines += ["", f"Hardware and versions: `{json.dumps(meta['hardware'])}`", ""]
    return "\n".join(lines)


def linear_start_case(n: int, jump: float, seed: int) -> dict[str, Any]:
    """GMG-CG (tol 1e-10) on ``a_new`` = a two-phase ``a_old`` with its high phase times
    ``jump``, from zero and from ``a_old``'s solution: iterations and residual, or the
    ConvergenceError's message."""
    a_old = threshold(NeumannGRF(n).sample(1, rng=np.random.default_rng(seed)))[0]
    u_old = DarcyFDSolver().solve(a_old)
    a_new = np.where(a_old > 5, a_old * jump, a_old)
    solver = DarcyFDSolver(linear_solver="gmg", tol=1e-10)
    row: dict[str, Any] = {"n": n, "jump": jump, "seed": seed}
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


def _cell(result: dict[str, Any]) -> str:
    if "error" in result:
        text = str(result["error"])
        residual = text.split("relative residual ")[1].split(" ")[0]
        its = text.split(" after ")[1].split(" ")[0]
        return f"ConvergenceError: residual {residual} after {its} its"
    return f"{result['iterations']} its, {result['residual']:.1e}"


def linear_start_markdown(rows: list[dict[str, Any]]) -> str:
    """The table of :func:`linear_start_case` rows."""
    lines = ["| n | jump | from zero | from the previous state |", "|---|---|---|---|"]
    lines += [f"| {r['n']} | {r['jump']:g} | {_cell(r['zero'])} | {_cell(r['previous state'])} |"
              for r in rows]
    return "\n".join(lines) + "\n"
