"""Surrogate predictions inside iterative Darcy solves: residual check, warm starts, policy.

For the discrete Darcy system ``A x = b`` of a classical solver
(:class:`~solvers.darcy.DarcyFDSolver` or :class:`~solvers.darcy.DarcyFEMSolver` on the node grid),
a surrogate prediction ``p`` can

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
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
import xarray as xr
from numpy.typing import NDArray

from solvers.checks import check_real
from solvers.contract import SolverInput, SolverOutput, SupportsSolve, as_batch

from ..errors import ConvergenceError, InputError

if TYPE_CHECKING:  # pragma: no cover
    from solvers.darcy import DarcySolver

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


def _check_darcy_solver(solver: object) -> None:
    if not hasattr(solver, "systems") or not hasattr(solver, "linear_solver"):
        msg = (f"`solver` must be a DarcyFDSolver or DarcyFEMSolver (node grid); got "
               f"{type(solver).__name__}.")
        raise InputError(msg)


def discrete_systems(
    solver: DarcySolver, a: NDArray[np.float64]
) -> list[tuple[sp.csr_matrix, NDArray[np.float64]]]:
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


def relative_residual(
    solver: DarcySolver, a: NDArray[np.float64], u: NDArray[np.float64]
) -> NDArray[np.float64]:
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


def deflated_pcg(solver: DarcySolver, a_mat: sp.csr_matrix, b: NDArray[np.float64],
                 w: NDArray[np.float64], *, n: int) -> tuple[NDArray[np.float64], int, float]:
    """Deflated preconditioned CG from zero with one deflation vector ``w`` (a prediction).

    The solver's own linear solve (:meth:`solvers.darcy.DarcyFDSolver.solve_system`: same
    preconditioner, tolerance and iteration cap) started from the Galerkin projection
    ``x0 = w (w^T b)/(w^T A w)`` (so ``r0`` is orthogonal to ``w``), every search direction kept
    A-orthogonal to ``w``. Stops on the true relative residual ``||b - A x|| / ||b|| <= tol``.

    Returns
    -------
    x, iterations, final relative residual.
    """
    return solver.solve_system(a_mat, b, n=n, x0=np.zeros_like(b), deflation=w)


def _start(variant: str, a_mat: sp.csr_matrix, b: NDArray[np.float64],
           p: NDArray[np.float64]) -> dict[str, Any]:
    """The keyword arguments of ``solve_system`` that make ``variant``'s start."""
    if variant == "zero":
        return {}
    if variant == "warm":
        return {"x0": p}
    if variant == "projected":
        return {"x0": p * (float(p @ b) / float(p @ (a_mat @ p)))}
    return {"x0": np.zeros_like(b), "deflation": p}


def _timed_solve(solver: DarcySolver, a: NDArray[np.float64], pred: NDArray[np.float64],
                 variant: str) -> tuple[int, float, float]:
    """(iterations, residual, seconds) of one sample: assembly + start + the solver's solve.

    Every variant goes through the same code (the solver's assembly and its own linear solve
    with its own preconditioner), so the variants differ only in their start.
    """
    n = a.shape[-1]
    t0 = time.perf_counter()
    (a_mat, b), = solver.systems(a[None])
    p = pred[1:-1, 1:-1].ravel()
    _, its, res = solver.solve_system(a_mat, b, n=n, **_start(variant, a_mat, b, p))
    return int(its), float(res), time.perf_counter() - t0


def measure_warm_start(solver: DarcySolver, a: NDArray[np.float64],
                       prediction: NDArray[np.float64], *, tolerances: Sequence[float],
                       variants: Sequence[str] = VARIANTS,
                       prediction_time: NDArray[np.float64] | float = 0.0,
                       repeats: int = 1) -> xr.Dataset:
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
        msg = (f"`prediction` must have the shape of `a` (n_samples, n, n) {a.shape}; "
               f"got {prediction.shape}.")
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
        for s in range(len(a)):
            for _ in range(repeats):  # variants interleaved, so load drifts hit all alike
                for i, variant in enumerate(variants):
                    out = _timed_solve(sol, a[s], prediction[s], variant)
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
    accepted as is; otherwise the solver runs from ``initial_guess=p`` (a warm start) when ``p``
    is a better start than zero (relative residual below 1, the zero start's); if that fails
    (:class:`~solvers.errors.ConvergenceError`), or the prediction is not finite or worse than
    zero, the solver runs from zero.

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

    def __init__(self, surrogate: SupportsSolve, solver: DarcySolver, *,
                 accept_residual: float = 1e-6) -> None:
        _check_darcy_solver(solver)
        self.accept_residual = check_real(accept_residual, name="accept_residual", low=0.0,
                                          high=1.0, high_open=True, kind="a relative residual")
        self.surrogate = surrogate
        self.solver = solver

    def solve(self, inputs: SolverInput) -> tuple[SolverOutput, xr.Dataset]:
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
            # A prediction is a better start than zero only if its residual is below the zero
            # start's, ||b - A 0|| / ||b|| = 1.
            guess = pred[s] if np.isfinite(r_sur[s]) and r_sur[s] < 1.0 else None
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
