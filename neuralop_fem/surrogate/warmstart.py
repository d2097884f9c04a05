"""Surrogate predictions inside iterative Darcy solves: residual check, warm starts, policy.

For the discrete Darcy system ``A x = b`` of a classical solver (:class:`~solvers.darcy.DarcyFDSolver`
or :class:`~solvers.darcy.DarcyFEMSolver` on the node grid), a surrogate prediction ``p`` can

* be **accepted** when its relative residual ``||b - A p|| / ||b||`` is small enough;
* **warm-start** the Krylov solver (``initial_guess=p``);
* be **projected** first: ``x0 = alpha p`` with ``alpha = p^T b / p^T A p``, the Galerkin
  projection of the solution onto ``span{p}`` (the best multiple of ``p`` in the energy norm,
  one extra matrix-vector product);
* **deflate** CG: preconditioned CG in the A-orthogonal complement of ``span{p}``
  (deflated PCG, Saad, Yeung, Erhel & Guyomarc'h 2000), started from the Galerkin projection.

:func:`measure_warm_start` times these against a start from zero;
``benchmarks/bench_warmstart.py`` reports which pays (see ``benchmarks/results/warmstart.md``).
:class:`SurrogatePolicy` chooses per sample between accepting, warm-starting and solving from
scratch.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
import xarray as xr
from numpy.typing import NDArray

from solvers._darcy_linear import amg_hierarchy, gmg_hierarchy, pcg
from solvers.contract import as_batch

from ..errors import ConvergenceError, InputError

__all__ = [
    "DECISIONS",
    "VARIANTS",
    "SurrogatePolicy",
    "deflated_pcg",
    "discrete_systems",
    "measure_warm_start",
    "relative_residual",
]

DECISIONS = ("accept", "warm_start", "scratch")
VARIANTS = ("zero", "warm", "projected", "deflated")


def _check_darcy_solver(solver: Any) -> None:
    if not hasattr(solver, "systems") or not hasattr(solver, "linear_solver"):
        msg = (f"`solver` must be a DarcyFDSolver or DarcyFEMSolver (node grid); got "
               f"{type(solver).__name__}.")
        raise InputError(msg)


def discrete_systems(solver: Any, a: NDArray[np.float64]) -> list[tuple[sp.csr_matrix, NDArray[np.float64]]]:
    """The interior systems ``(A, b)`` that ``solver`` solves for each coefficient sample.

    Parameters
    ----------
    solver
        :class:`~solvers.darcy.DarcyFDSolver` or :class:`~solvers.darcy.DarcyFEMSolver`.
    a : (n_samples, n, n) array
        Nodal coefficient.

    Returns
    -------
    list of (A, b), one per sample; unknowns ``u[1:-1, 1:-1].ravel()`` (x-major).
    """
    _check_darcy_solver(solver)
    return solver.systems(np.asarray(a, dtype=np.float64))


def relative_residual(solver: Any, a: NDArray[np.float64], u: NDArray[np.float64]) -> NDArray[np.float64]:
    """``||b - A u|| / ||b||`` of each sample with the solver's own discrete operator.

    Parameters
    ----------
    solver
        A node-grid Darcy solver.
    a, u : (n_samples, n, n) arrays
        Coefficient and candidate solution (boundary values of ``u`` are ignored; the
        solver imposes ``u = 0`` there). NaN in ``u`` gives NaN.

    Returns
    -------
    (n_samples,) array.
    """
    res = np.empty(len(a))
    for s, (a_mat, b) in enumerate(discrete_systems(solver, a)):
        x = np.asarray(u[s, 1:-1, 1:-1], dtype=np.float64).ravel()
        if not np.isfinite(x).all():
            res[s] = np.nan
            continue
        res[s] = float(np.linalg.norm(b - a_mat @ x) / np.linalg.norm(b))
    return res


def _preconditioner(solver: Any, a_mat: sp.csr_matrix, n: int) -> Any:
    if solver.linear_solver == "gmg":
        return gmg_hierarchy(a_mat, n).aspreconditioner(cycle="V").matvec
    if solver.linear_solver == "amg":
        return amg_hierarchy(a_mat).aspreconditioner(cycle="V").matvec
    inv_diag = 1.0 / a_mat.diagonal()
    return lambda r: inv_diag * r


def deflated_pcg(a_mat: sp.csr_matrix, b: NDArray[np.float64], w: NDArray[np.float64],
                 precondition: Any, *, tol: float, maxiter: int) -> tuple[NDArray[np.float64], int, float]:
    """Deflated preconditioned CG from zero with one deflation vector ``w`` (a prediction).

    Starts from the Galerkin projection ``x0 = w (w^T b)/(w^T A w)`` (so ``r0`` is orthogonal
    to ``w``) and keeps every search direction A-orthogonal to ``w`` (the solvers' own CG,
    :func:`solvers._darcy_linear.pcg` with ``deflation=w``). Stops on the true relative
    residual ``||b - A x|| / ||b|| <= tol``.

    Returns
    -------
    x, iterations, final relative residual.
    """
    return pcg(a_mat, b, np.zeros_like(b), precondition, tol=tol, maxiter=maxiter, deflation=w)


def _one(solver: Any, a: NDArray[np.float64], guess: NDArray[np.float64] | None) -> tuple[int, float, float]:
    """(iterations, residual, seconds) of the solver's own solve of one sample."""
    _, rep = solver.solve_with_report(a, initial_guess=guess)
    return int(rep.iterations[0]), float(rep.residual[0]), float(rep.solve_time[0])


def _projected(solver: Any, a: NDArray[np.float64], pred: NDArray[np.float64]) -> tuple[int, float, float]:
    t0 = time.perf_counter()
    (a_mat, b), = discrete_systems(solver, a[None])
    p = pred[1:-1, 1:-1].ravel()
    alpha = float(p @ b) / float(p @ (a_mat @ p))
    t_proj = time.perf_counter() - t0
    its, res, t = _one(solver, a, alpha * pred)
    return its, res, t + t_proj


def _deflated(solver: Any, a: NDArray[np.float64], pred: NDArray[np.float64]) -> tuple[int, float, float]:
    t0 = time.perf_counter()
    (a_mat, b), = discrete_systems(solver, a[None])
    n = a.shape[-1]
    maxiter = solver.maxiter or (max(1000, 10 * n) if solver.linear_solver == "cg" else 200)
    _, its, res = deflated_pcg(a_mat, b, pred[1:-1, 1:-1].ravel(), _preconditioner(solver, a_mat, n),
                               tol=solver.tol, maxiter=maxiter)
    return its, res, time.perf_counter() - t0


def measure_warm_start(solver: Any, a: NDArray[np.float64], prediction: NDArray[np.float64], *,
                       tolerances: Sequence[float], variants: Sequence[str] = VARIANTS,
                       prediction_time: NDArray[np.float64] | float = 0.0, repeats: int = 1) -> xr.Dataset:
    """Iterations and wall time to each tolerance, from zero and from a prediction.

    Parameters
    ----------
    solver
        Node-grid Darcy solver; its ``tol`` is replaced by each of ``tolerances``.
    a, prediction : (n_samples, n, n) arrays
        Coefficients and (finite) surrogate predictions.
    tolerances
        Relative residual targets, e.g. ``(1e-4, 1e-6, 1e-8, 1e-10)``.
    variants
        Subset of :data:`VARIANTS`: ``"zero"`` (no guess), ``"warm"`` (guess = prediction),
        ``"projected"`` (guess = Galerkin projection onto the prediction), ``"deflated"``
        (deflated PCG with the prediction as deflation vector).
    prediction_time
        Surrogate inference seconds per sample, added to ``total_time`` of every variant but
        ``"zero"``.
    repeats
        Solves per entry; the minimum time is kept (iterations are deterministic).

    Returns
    -------
    xr.Dataset with ``iterations``, ``residual``, ``solve_time`` and ``total_time`` on
    dims ``(variant, tol, sample)``.
    """
    _check_darcy_solver(solver)
    a = np.asarray(a, dtype=np.float64)
    prediction = np.asarray(prediction, dtype=np.float64)
    if a.shape != prediction.shape or a.ndim != 3:
        msg = f"`prediction` must have the shape of `a` (n_samples, n, n) {a.shape}; got {prediction.shape}."
        raise InputError(msg)
    bad = [v for v in variants if v not in VARIANTS]
    if bad:
        msg = f"`variants` must be a subset of {VARIANTS}; got {bad}."
        raise InputError(msg)
    shape = (len(variants), len(tolerances), len(a))
    its = np.zeros(shape, dtype=np.int64)
    res = np.zeros(shape)
    secs = np.full(shape, np.inf)
    t_pred = np.broadcast_to(np.asarray(prediction_time, dtype=np.float64), (len(a),))
    for j, tol in enumerate(tolerances):
        sol = dataclasses.replace(solver, tol=float(tol))
        for i, variant in enumerate(variants):
            for s in range(len(a)):
                for _ in range(repeats):
                    if variant == "zero":
                        out = _one(sol, a[s], None)
                    elif variant == "warm":
                        out = _one(sol, a[s], prediction[s])
                    elif variant == "projected":
                        out = _projected(sol, a[s], prediction[s])
                    else:
                        out = _deflated(sol, a[s], prediction[s])
                    its[i, j, s], res[i, j, s] = out[0], out[1]
                    secs[i, j, s] = min(secs[i, j, s], out[2])
    extra = np.array([0.0 if v == "zero" else 1.0 for v in variants])[:, None, None] * t_pred
    dims = ("variant", "tol", "sample")
    return xr.Dataset(
        {"iterations": (dims, its), "residual": (dims, res), "solve_time": (dims, secs),
         "total_time": (dims, secs + extra)},
        coords={"variant": list(variants), "tol": np.asarray(tolerances, dtype=np.float64),
                "sample": np.arange(len(a))},
        attrs={"solver": type(solver).__name__, "linear_solver": solver.linear_solver,
               "resolution": int(a.shape[-1])},
    )


class SurrogatePolicy:
    """Accept, warm-start or solve from scratch, per sample, with a residual check.

    For each coefficient sample the surrogate's prediction ``p`` is checked against the
    solver's own discrete system: if ``||b - A p|| / ||b|| <= accept_residual`` it is
    accepted as is; otherwise the solver runs from ``initial_guess=p`` (a warm start); if that
    fails (:class:`~solvers.errors.ConvergenceError`) or the prediction is not finite, the
    solver runs from zero.

    Parameters
    ----------
    surrogate
        Anything with ``solve(a)`` for ``a`` of shape (n_samples, n, n) returning the same shape.
    solver
        A node-grid Darcy solver (:class:`~solvers.darcy.DarcyFDSolver` / ``DarcyFEMSolver``).
    accept_residual
        Relative residual at or below which the prediction is accepted, in (0, 1). The
        default 1e-6 only accepts predictions that are nearly discrete solutions: the error of
        an accepted answer is at most ``cond(A) * accept_residual`` in relative terms, and
        ``cond(A) ~ 4 (n-1)^2 contrast / pi^2`` (~3e5 at n = 421 with contrast 4).
    """

    def __init__(self, surrogate: Any, solver: Any, *, accept_residual: float = 1e-6) -> None:
        _check_darcy_solver(solver)
        if isinstance(accept_residual, bool) or not isinstance(accept_residual, int | float) \
                or not 0.0 < accept_residual < 1.0:
            msg = f"`accept_residual` must be a relative residual in (0, 1); got {accept_residual!r}."
            raise InputError(msg)
        self.surrogate = surrogate
        self.solver = solver
        self.accept_residual = float(accept_residual)

    def solve(self, inputs: Any) -> tuple[Any, xr.Dataset]:
        """Solve each sample by the policy.

        Parameters
        ----------
        inputs : (n_samples, n, n) or (n, n) array, or DataArray with dims ("sample", "x", "y")
            Coefficient ``a`` (> 0).

        Returns
        -------
        u
            Solution in the form of ``inputs``.
        records : xr.Dataset
            Per sample (dim ``sample``): ``decision`` (one of :data:`DECISIONS`),
            ``surrogate_residual`` (NaN for a non-finite prediction), ``residual`` (of the
            returned solution), ``iterations`` (Krylov iterations, 0 when accepted),
            ``surrogate_time``, ``solver_time`` and ``total_time`` (seconds).
        """
        batch = as_batch(inputs, name="a", core_dims=("x", "y"))
        a = batch.values
        n_s = len(a)
        t0 = time.perf_counter()
        pred = np.asarray(self.surrogate.solve(a), dtype=np.float64)
        t_sur = (time.perf_counter() - t0) / n_s
        if pred.shape != a.shape:
            msg = f"`surrogate.solve` must return shape {a.shape}; got {pred.shape}."
            raise InputError(msg)
        t0 = time.perf_counter()
        r_sur = relative_residual(self.solver, a, pred)
        t_check = (time.perf_counter() - t0) / n_s
        u = np.zeros_like(a)
        decision = np.empty(n_s, dtype=object)
        its = np.zeros(n_s, dtype=np.int64)
        res = np.zeros(n_s)
        t_sol = np.full(n_s, t_check)
        for s in range(n_s):
            if np.isfinite(r_sur[s]) and r_sur[s] <= self.accept_residual:
                decision[s], u[s], res[s] = "accept", pred[s], r_sur[s]
                u[s, [0, -1], :] = 0.0
                u[s, :, [0, -1]] = 0.0
                continue
            guess = pred[s] if np.isfinite(r_sur[s]) else None
            decision[s] = "warm_start" if guess is not None else "scratch"
            try:
                sol, rep = self.solver.solve_with_report(a[s], initial_guess=guess)
            except ConvergenceError:
                decision[s] = "scratch"
                sol, rep = self.solver.solve_with_report(a[s])
            u[s], its[s], res[s] = sol, rep.iterations[0], rep.residual[0]
            t_sol[s] += float(rep.solve_time.sum())
        records = xr.Dataset(
            {"decision": ("sample", decision.astype(str)), "surrogate_residual": ("sample", r_sur),
             "residual": ("sample", res), "iterations": ("sample", its),
             "surrogate_time": ("sample", np.full(n_s, t_sur)), "solver_time": ("sample", t_sol),
             "total_time": ("sample", t_sol + t_sur)},
            coords={"sample": np.arange(n_s)},
            attrs={"accept_residual": self.accept_residual, "solver_tol": float(self.solver.tol)},
        )
        return batch.restore(u, name="u"), records
