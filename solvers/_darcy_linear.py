"""Linear solvers for the symmetric positive definite Darcy systems.

``"direct"``
    scipy's sparse direct solve (SuperLU, COLAMD ordering).
``"cg"``
    Jacobi-preconditioned conjugate gradients.
``"amg"``
    CG preconditioned by one V-cycle of pyamg's algebraic multigrid (:data:`AMG_KIND`:
    smoothed aggregation or Ruge-Stuben, whichever measured faster).
``"banded"``, ``"dst-cg"``
    The batched methods of :mod:`solvers._darcy_batched` (banded Cholesky; CG preconditioned by
    the fast Poisson solver), fastest on small grids when a whole batch is solved at once
    (:class:`~solvers.darcy.DarcyFDSolver`); here, for one system on the node grid, the same
    methods one system at a time.
``"gmg"``
    CG preconditioned by one V-cycle of a geometric multigrid built for the structured
    node grid: tensor-product linear interpolation between nested node sets (every other
    node, plus the last one when the number of intervals is odd, so any ``n`` coarsens),
    Galerkin coarse operators ``P^T A P``, one forward Gauss-Seidel sweep before and one backward
    sweep after the coarse correction (pyamg's compiled kernels), direct solve on the coarsest
    grid (at most 8 x 8 unknowns).

Every method starts from an initial guess, stops when the relative residual
``||b - A x|| / ||b||`` (recomputed from scratch, not the recurrence) is <= ``tol``, and
returns the number of iterations (0 when the guess already meets ``tol``; 1 for a direct
solve) and the final relative residual.

Attainable accuracy of the Krylov methods. In floating point the CG recurrence residual
drifts from the true residual ``b - A x`` by about ``eps`` times the largest residual the
iteration meets (Greenbaum 1997, "Estimating the attainable accuracy of recursively computed
residual methods", SIAM J. Matrix Anal. Appl. 18(3)), so a start whose residual is ``10^13
||b||`` cannot reach ``tol = 1e-10``: the true residual stalls near ``eps 10^13 = 2e-3``
whatever the preconditioner. This happens inside an optimiser, whose trial coefficients can
jump by orders of magnitude between two solves (the previous solution is then a start far
worse than zero). :func:`pcg` therefore (i) starts from zero instead of ``x0`` when ``x0`` is
no better in the energy norm (``x0^T (b + r0) <= 0``) or its residual is so large that
``eps ||r0|| > tol ||b|| / 10`` (a good warm start, e.g. a surrogate's prediction, may have a
residual several times ``||b||``: the operator amplifies its small-scale error), and (ii)
restarts from the current iterate with the true residual when the recurrence claims
convergence that the true residual denies, until ten restarts in a row gain less than a
factor 2 (the residual has then reached the floor that rounding leaves).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np
import pyamg
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import NDArray
from pyamg.multilevel import MultilevelSolver
from pyamg.relaxation.smoothing import change_smoothers

from .errors import InputError

__all__ = ["LINEAR_SOLVERS", "rounding_floor", "solve_linear"]

LINEAR_SOLVERS = ("gmg", "amg", "cg", "direct", "banded", "dst-cg")
# Flavour behind "amg"; benchmarks/bench_darcy.py times both ("amg-sa", "amg-rs").
AMG_KIND = "rs"  # Ruge-Stuben: 0.61 s vs 1.14 s (SA) per sample at n = 421, see results

# Forward Gauss-Seidel before, backward after the coarse correction: the V-cycle is a
# symmetric operator (as CG needs) at half the cost of symmetric sweeps on both sides.
_PRESMOOTHER = ("gauss_seidel", {"sweep": "forward", "iterations": 1})
_POSTSMOOTHER = ("gauss_seidel", {"sweep": "backward", "iterations": 1})
_COARSEST = 8


def _coarse_nodes(coords: NDArray[np.float64]) -> NDArray[np.int64]:
    """Indices of the coarse node set: every other node, plus the last one."""
    idx = np.arange(0, len(coords), 2)
    if idx[-1] != len(coords) - 1:
        idx = np.append(idx, len(coords) - 1)
    return idx


def _prolongation_1d(coords: NDArray[np.float64]) -> tuple[sp.csr_matrix, NDArray[np.float64]]:
    """Linear interpolation from coarse interior nodes to fine interior nodes (1D).

    ``coords`` are the fine node positions including both boundary nodes, whose values are
    zero (Dirichlet) and are therefore dropped from the matrix.
    """
    nf = len(coords)
    cidx = _coarse_nodes(coords)
    # For each fine node, the coarse interval [cidx[q], cidx[q+1]] that contains it.
    q = np.clip(np.searchsorted(cidx, np.arange(nf), side="right") - 1, 0, len(cidx) - 2)
    left, right = cidx[q], cidx[q + 1]
    w_right = (coords - coords[left]) / (coords[right] - coords[left])
    rows = np.concatenate([np.arange(nf), np.arange(nf)])
    cols = np.concatenate([q, q + 1])
    vals = np.concatenate([1.0 - w_right, w_right])
    full = sp.csr_matrix((vals, (rows, cols)), shape=(nf, len(cidx)))
    full.eliminate_zeros()
    return full[1:-1, 1:-1].tocsr(), coords[cidx]


@lru_cache(maxsize=8)
def _grid_prolongations(n: int) -> tuple[sp.csr_matrix, ...]:
    """Tensor-product prolongations for the interior of an ``n x n`` node grid, fine first."""
    coords = np.linspace(0.0, 1.0, n)
    out = []
    while len(coords) - 2 > _COARSEST:
        p1, coords = _prolongation_1d(coords)
        out.append(sp.kron(p1, p1, format="csr"))
    return tuple(out)


def gmg_hierarchy(a_mat: sp.csr_matrix, n: int) -> MultilevelSolver:
    """Geometric multigrid hierarchy for the interior system of an ``n x n`` node grid."""
    levels = []
    current = a_mat
    for p in _grid_prolongations(n):
        lvl = MultilevelSolver.Level()
        lvl.A = current
        lvl.P = p
        lvl.R = p.T.tocsr()
        levels.append(lvl)
        current = (lvl.R @ current @ p).tocsr()
    last = MultilevelSolver.Level()
    last.A = current
    levels.append(last)
    ml = MultilevelSolver(levels, coarse_solver="splu")
    change_smoothers(ml, presmoother=_PRESMOOTHER, postsmoother=_POSTSMOOTHER)
    return ml


def amg_hierarchy(a_mat: sp.csr_matrix, kind: str = "sa") -> MultilevelSolver:
    """pyamg hierarchy: smoothed aggregation (``"sa"``) or Ruge-Stuben (``"rs"``)."""
    if kind == "rs":
        return pyamg.ruge_stuben_solver(
            a_mat, presmoother=_PRESMOOTHER, postsmoother=_POSTSMOOTHER
        )
    return pyamg.smoothed_aggregation_solver(
        a_mat, symmetry="symmetric", presmoother=_PRESMOOTHER, postsmoother=_POSTSMOOTHER
    )


def rounding_floor(a_mat: sp.csr_matrix, x: NDArray[np.float64], b: NDArray[np.float64]) -> float:
    """The relative residual that rounding alone leaves: ``eps || |A| |x| || / ||b||``.

    Evaluating ``b - A x`` in float64 commits an error of about ``eps`` times the sum of
    the magnitudes of the products in each row, so no solver can certify a relative residual
    much below this, however exact ``x`` is. It grows with the coefficient's range: about
    1e-12 for the two-phase 3 / 12 coefficient, 1e-9 for a contrast of 1e7 on a 33 x 33 grid
    (where ``tol = 1e-10`` is then out of reach of any method).
    """
    return float(np.finfo(np.float64).eps * np.linalg.norm(abs(a_mat) @ np.abs(x))
                 / np.linalg.norm(b))


def pcg(
    a_mat: sp.csr_matrix,
    b: NDArray[np.float64],
    x0: NDArray[np.float64],
    precondition: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    *,
    tol: float,
    maxiter: int,
    deflation: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], int, float]:
    """Preconditioned CG for SPD ``A x = b``, optionally deflated by one vector ``w``.

    Stops when the true relative residual ``||b - A x|| / ||b||`` is at most ``tol`` (checked
    whenever the recurrence residual says so). With ``deflation=w`` (e.g. a surrogate's
    prediction) the start is corrected along ``w`` so that ``r0`` is orthogonal to ``w``,
    ``x0 <- x0 + w (w^T r0) / (w^T A w)``, and every search direction is kept A-orthogonal to
    ``w``: ``p = z + beta p - w (w^T A z) / (w^T A w)``; the error component along ``w`` is
    then removed once, at the start, instead of being reduced by the iteration.

    The start is ``x0``, or zero when ``x0`` is no better in the energy norm or its residual
    is beyond what ``tol`` can be reached from (``eps ||r0|| > tol ||b|| / 10``); the iteration
    restarts (``p = z``) from the true residual when the recurrence residual meets ``tol`` but
    the true one does not (see the module notes on attainable accuracy); it gives up early
    when ten restarts in a row gain less than a factor 2.

    Returns
    -------
    x, iterations, final relative residual.
    """
    bnorm = float(np.linalg.norm(b))
    x = x0.copy()
    r = b - a_mat @ x
    # ||x0 - x*||_A^2 - ||x*||_A^2 = -x0^T (b + r0): zero is the better start when >= 0
    worse = float(x @ (b + r)) <= 0.0
    if worse or np.finfo(np.float64).eps * float(np.linalg.norm(r)) > 0.1 * tol * bnorm:
        x = np.zeros_like(b)
        r = b.copy()
    if deflation is None:
        def project(z: NDArray[np.float64]) -> NDArray[np.float64]:
            return z
    else:
        w = deflation
        aw = a_mat @ w
        waw = float(w @ aw)

        def project(z: NDArray[np.float64]) -> NDArray[np.float64]:
            return z - w * (float(aw @ z) / waw)

        x += w * (float(w @ r) / waw)
        r = b - a_mat @ x
    rel = float(np.linalg.norm(r)) / bnorm
    if rel <= tol:
        return x, 0, rel
    z = precondition(r)
    p = project(z).copy()
    rz = float(r @ z)
    restart_rel, weak = rel, 0
    for it in range(1, maxiter + 1):
        ap = a_mat @ p
        alpha = rz / float(p @ ap)
        x += alpha * p
        r -= alpha * ap
        if float(np.linalg.norm(r)) <= tol * bnorm:
            r = b - a_mat @ x  # guard against drift of the recurrence
            rel = float(np.linalg.norm(r)) / bnorm
            if rel <= tol:
                return x, it, rel
            weak = weak + 1 if rel > 0.5 * restart_rel else 0
            if weak == 10:  # ten restarts in a row gained less than 2x: the rounding floor
                return x, it, rel
            restart_rel = min(rel, restart_rel)
            z = precondition(r)  # restart: the old directions belong to the drifted residual
            p = project(z).copy()
            rz = float(r @ z)
            continue
        z = precondition(r)
        rz_new = float(r @ z)
        p = project(z) + (rz_new / rz) * p
        rz = rz_new
    rel = float(np.linalg.norm(b - a_mat @ x)) / bnorm
    return x, maxiter, rel


def solve_linear(
    a_mat: sp.csr_matrix,
    b: NDArray[np.float64],
    *,
    method: str,
    tol: float,
    maxiter: int,
    x0: NDArray[np.float64] | None = None,
    grid_n: int | None = None,
    deflation: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], int, float]:
    """Solve ``A x = b`` to relative residual ``tol``.

    Parameters
    ----------
    a_mat : (N, N) CSR matrix
        Symmetric positive definite.
    b : (N,) array
    method
        One of :data:`LINEAR_SOLVERS`.
    tol, maxiter
        Relative-residual tolerance and iteration cap of the iterative methods.
    x0 : (N,) array or None
        Initial guess (zero when None).
    grid_n
        Node-grid size when the unknowns are the interior of an ``n x n`` grid in x-major
        order; required by ``"gmg"``.
    deflation : (N,) array or None
        Deflation vector ``w`` of the Krylov methods (e.g. a surrogate prediction; see
        :func:`pcg`); not allowed with ``"direct"``.

    Returns
    -------
    x : (N,) array
    iterations : int
    residual : float
        Final relative residual ``||b - A x|| / ||b||`` (0 when ``b = 0``).
        The caller compares it with ``tol`` and raises on failure.
    """
    if not np.any(b):
        return np.zeros_like(b), 0, 0.0
    x0 = np.zeros_like(b) if x0 is None else np.asarray(x0, dtype=np.float64)
    if method in ("direct", "banded") and deflation is not None:
        msg = f"`deflation` applies to the Krylov solvers, not to {method!r}."
        raise InputError(msg)
    if method == "direct":
        bnorm = float(np.linalg.norm(b))
        rel0 = float(np.linalg.norm(b - a_mat @ x0)) / bnorm
        if rel0 <= tol:
            return x0.copy(), 0, rel0
        x = spla.spsolve(a_mat.tocsc(), b)
        return x, 1, float(np.linalg.norm(b - a_mat @ x)) / bnorm
    if method == "banded":
        assert grid_n is not None  # guaranteed by the callers
        return _banded_system(a_mat, b, x0, grid_n, tol=tol)
    if method == "dst-cg":
        assert grid_n is not None  # guaranteed by the callers
        return pcg(a_mat, b, x0, _dst_preconditioner(a_mat, grid_n), tol=tol, maxiter=maxiter,
                   deflation=deflation)
    if method == "cg":
        inv_diag = 1.0 / a_mat.diagonal()
        return pcg(a_mat, b, x0, lambda r: inv_diag * r, tol=tol, maxiter=maxiter,
                   deflation=deflation)
    if method == "gmg":
        assert grid_n is not None  # guaranteed by the callers
        ml = gmg_hierarchy(a_mat, grid_n)
    else:  # "amg" (the faster flavour by measurement), or "amg-sa" / "amg-rs" explicitly
        ml = amg_hierarchy(a_mat, AMG_KIND if method == "amg" else method.removeprefix("amg-"))
    m_op = ml.aspreconditioner(cycle="V")
    return pcg(a_mat, b, x0, m_op.matvec, tol=tol, maxiter=maxiter, deflation=deflation)


def _banded_system(a_mat: sp.csr_matrix, b: NDArray[np.float64], x0: NDArray[np.float64],
                   n: int, *, tol: float) -> tuple[NDArray[np.float64], int, float]:
    """One node-grid system by banded Cholesky (half bandwidth ``n - 2``)."""
    import scipy.linalg

    bnorm = float(np.linalg.norm(b))
    rel0 = float(np.linalg.norm(b - a_mat @ x0)) / bnorm
    if rel0 <= tol:
        return x0.copy(), 0, rel0
    m = n - 2
    ab = np.zeros((m + 1, len(b)))
    for k in range(m + 1):  # upper storage: A[i, i + k] at ab[m - k, i + k]
        ab[m - k, k:] = a_mat.diagonal(k)
    x = scipy.linalg.solveh_banded(ab, b, check_finite=False)
    return x, 1, float(np.linalg.norm(b - a_mat @ x)) / bnorm


def _dst_preconditioner(a_mat: sp.csr_matrix, n: int
                        ) -> Callable[[NDArray[np.float64]], NDArray[np.float64]]:
    """The fast Poisson solver (DST-I) scaled by the mean diagonal / 4 (one system)."""
    import scipy.fft

    m = n - 2
    lam1 = 2.0 - 2.0 * np.cos(np.pi * np.arange(1, m + 1) / (m + 1))
    scale = float(a_mat.diagonal().mean()) / 4.0
    inv = 1.0 / ((lam1[:, None] + lam1[None, :]) * scale * (2.0 * (m + 1)) ** 2)

    def apply(r: NDArray[np.float64]) -> NDArray[np.float64]:
        z = scipy.fft.dstn(r.reshape(m, m), type=1) * inv
        return scipy.fft.dstn(z, type=1).ravel()

    return apply
