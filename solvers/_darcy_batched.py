"""Batched linear solvers for the 5-point FD Darcy systems: no per-sample Python set-up.

The per-sample solvers of :mod:`solvers._darcy_linear` pay a fixed cost per sample (building a
CSR matrix, a multigrid hierarchy, a Krylov loop in Python) that dominates on small grids:
4-7 ms per sample at 43 x 43 and 71 x 71 where the arithmetic is a fraction of that. The two
methods here work on a whole batch of samples with array operations:

``"banded"``
    Banded Cholesky (LAPACK ``pbtrf``/``pbtrs`` through :func:`scipy.linalg.solveh_banded`) of
    the block-diagonal system of the batch: ``m = n - 2`` interior nodes per side, half
    bandwidth ``m`` in the x-major order, cost ``O(m^4)`` per sample; exact to rounding.
    The faster of the two below about ``n = 29`` (``benchmarks/bench_rungs.py``).
``"dst-cg"``
    Matrix-free conjugate gradients vectorised over samples, preconditioned by the
    constant-coefficient fast Poisson solver (the discrete sine transform diagonalises the
    5-point Laplacian with zero boundary values), scaled per sample by ``sqrt(min a_f max a_f)``
    of its face coefficients. The preconditioned condition number is at most the contrast
    ``max a_f / min a_f`` (4 for the 12/3 benchmark coefficient), so CG reduces the error by
    about ``(sqrt(k) - 1) / (sqrt(k) + 1)`` per iteration whatever the grid: 15-25 iterations
    to ``1e-6``-``1e-10``. Each sample stops at its own tolerance (its updates are frozen
    after). The sine transform is two dense products with the orthonormal DST-I matrix per
    direction (faster than the FFT-based DST at these sizes) in single precision (half the
    time again; the preconditioner's rounding, about ``1e-7`` relative, is absorbed by the
    flexible Polak-Ribiere form of CG: the residual itself is in double precision and
    reaches ``1e-12``); the batch is cut into chunks of about ``48 000`` unknowns so that the
    iteration's work arrays stay in cache. Iterations, not set-up, dominate: measured in
    ``benchmarks/bench_rungs.py``.

Both solve the scaled system of :func:`solvers._darcy_fd.assemble_fd` (``h^2 A u = h^2 f`` on
the interior nodes) and return, per sample, the iterations (1 for a banded solve, 0 when the
initial guess already meets ``tol``) and the true relative residual ``||b - A x|| / ||b||``.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import scipy.linalg
from numpy.typing import NDArray

from ._darcy_fd import face_coefficients

__all__ = ["BATCHED_SOLVERS", "apply_fd", "solve_batched"]

BATCHED_SOLVERS = ("banded", "dst-cg")

Array = NDArray[np.float64]

#: Unknowns per CG chunk: about ten (s, m, m) work arrays of this size stay in a core's cache
#: (measured on a shared 2-core EPYC: 10 samples at 71 x 71 ran 1.3x faster per sample than 48).
_CHUNK_UNKNOWNS = 48_000


def _stencil(ax: Array, ay: Array) -> tuple[Array, Array, Array]:
    """The operator's coefficients on the interior: diagonal ``d`` (s, m, m), couplings ``cx``
    (s, m - 1, m) between interior nodes ``(p, q)`` and ``(p + 1, q)``, ``cy`` (s, m, m - 1)
    between ``(p, q)`` and ``(p, q + 1)``."""
    d = ax[:, :-1, 1:-1] + ax[:, 1:, 1:-1]
    d += ay[:, 1:-1, :-1]
    d += ay[:, 1:-1, 1:]
    return d, np.ascontiguousarray(ax[:, 1:-1, 1:-1]), np.ascontiguousarray(ay[:, 1:-1, 1:-1])


def _apply(stencil: tuple[Array, Array, Array], x: Array) -> Array:
    """``h^2 A x`` from :func:`_stencil`'s coefficients (no padded copy of ``x``)."""
    d, cx, cy = stencil
    out = d * x
    tx = cx * x[:, 1:, :]
    out[:, :-1, :] -= tx
    np.multiply(cx, x[:, :-1, :], out=tx)
    out[:, 1:, :] -= tx
    ty = cy * x[:, :, 1:]
    out[:, :, :-1] -= ty
    np.multiply(cy, x[:, :, :-1], out=ty)
    out[:, :, 1:] -= ty
    return out


def apply_fd(ax: Array, ay: Array, x: Array) -> Array:
    """The scaled 5-point operator ``h^2 A`` applied to interior fields, batched.

    Parameters
    ----------
    ax, ay : (s, n - 1, n) and (s, n, n - 1) arrays
        Face coefficients (:func:`solvers._darcy_fd.face_coefficients`).
    x : (s, m, m) array, ``m = n - 2``
        Interior values (zero on the boundary implied).

    Returns
    -------
    (s, m, m) array
    """
    return _apply(_stencil(ax, ay), x)


def _norms(x: Array) -> Array:
    return np.sqrt(np.einsum("sij,sij->s", x, x))


def _banded(ax: Array, ay: Array, b: Array) -> Array:
    """Solve the batch's block-diagonal system by one banded Cholesky (upper storage)."""
    s, m, _ = b.shape
    ab = np.zeros((m + 1, s * m * m))
    diag = ax[:, :-1, 1:-1] + ax[:, 1:, 1:-1] + ay[:, 1:-1, :-1] + ay[:, 1:-1, 1:]
    ab[m] = diag.ravel()
    # A[k, k+1] (neighbour along y) sits in row m-1 at column k+1; zero across grid lines.
    sup1 = np.zeros((s, m, m))
    sup1[:, :, 1:] = -ay[:, 1:-1, 1:-1]
    ab[m - 1] = sup1.ravel()
    # A[k, k+m] (neighbour along x) sits in row 0 at column k+m; zero across samples.
    supm = np.zeros((s, m, m))
    supm[:, 1:, :] = -ax[:, 1:-1, 1:-1]
    ab[0] = supm.ravel()
    x = scipy.linalg.solveh_banded(ab, b.ravel(), check_finite=False)
    return x.reshape(s, m, m)


@lru_cache(maxsize=8)
def _sine_basis(m: int) -> tuple[Array, Array]:
    """The orthonormal DST-I matrix ``Q`` of order ``m`` and ``1 / eigenvalues`` of the scaled
    5-point Laplacian ``h^2 A`` (unit coefficient, zero boundary values) on an ``m x m``
    interior: ``(h^2 A)^{-1} X = Q ((Q X Q) / Lambda) Q`` with ``Q = Q^T = Q^{-1}``,
    ``Q_jk = sqrt(2 / (m + 1)) sin(pi j k / (m + 1))`` and
    ``Lambda_jk = lambda_j + lambda_k``, ``lambda_j = 2 - 2 cos(pi j / (m + 1))``."""
    k = np.arange(1, m + 1)
    q = np.sqrt(2.0 / (m + 1)) * np.sin(np.pi * np.outer(k, k) / (m + 1))
    lam1 = 2.0 - 2.0 * np.cos(np.pi * k / (m + 1))
    inv = 1.0 / (lam1[:, None] + lam1[None, :])
    q.setflags(write=False)
    inv.setflags(write=False)
    return q, inv


def _sine_transform(x: Array, q: Array) -> Array:
    """``Q X Q`` for every sample of ``x`` (s, m, m): two dense products per sample.

    On the grids where the batched solvers are used (``m`` below a few hundred) dense products
    with the sine matrix beat the FFT-based DST (``2 m^3`` flops per product and sample, in
    BLAS). One product per sample, not one over the stacked batch: a sample's answer must
    not depend on the batch it is solved in (BLAS kernels round differently by shape).
    """
    return np.matmul(np.matmul(q, x), q)


def _dst_cg(ax: Array, ay: Array, stencil: tuple[Array, Array, Array], b: Array, x0: Array,
            *, tol: float, maxiter: int) -> tuple[Array, NDArray[np.int64]]:
    """Preconditioned CG vectorised over samples; per-sample stopping (updates frozen)."""
    s, m, _ = b.shape
    faces = np.concatenate([ax[:, :, 1:-1].reshape(s, -1), ay[:, 1:-1, :].reshape(s, -1)],
                           axis=1)  # every face that enters an interior equation
    scale = np.sqrt(faces.min(axis=1) * faces.max(axis=1))
    q, inv1 = _sine_basis(m)
    q32 = q.astype(np.float32)
    inv = (inv1[None] / scale[:, None, None]).astype(np.float32)

    def precondition(r: Array) -> Array:  # in single precision: half the time of double
        z = _sine_transform(r.astype(np.float32), q32)
        z *= inv
        return _sine_transform(z, q32).astype(np.float64)

    bound = tol * _norms(b)
    x = x0.copy()
    r = b - _apply(stencil, x)
    iterations = np.zeros(s, dtype=np.int64)
    active = _norms(r) > bound
    z = precondition(r)
    p = z.copy()
    rz = np.einsum("sij,sij->s", r, z)
    for it in range(1, maxiter + 1):
        if not active.any():
            break
        ap = _apply(stencil, p)
        pap = np.einsum("sij,sij->s", p, ap)
        alpha = np.where(active, rz / np.where(active, pap, 1.0), 0.0)[:, None, None]
        x += alpha * p
        ap *= alpha
        r -= ap
        iterations[active] = it
        newly = active & (_norms(r) <= bound)
        if newly.any():  # the recurrence says so: check the true residual (drift guard)
            sel = np.flatnonzero(newly)
            true = b[sel] - _apply(tuple(c[sel] for c in stencil), x[sel])
            r[sel] = true
            active[sel[_norms(true) <= bound[sel]]] = False
        z_old, z = z, precondition(r)
        rz_new = np.einsum("sij,sij->s", r, z)
        # Polak-Ribiere beta (flexible CG): robust to the rounding of the single-precision
        # preconditioner, which is symmetric only to about 1e-7
        rdz = rz_new - np.einsum("sij,sij->s", r, z_old)
        beta = np.where(active, rdz / np.where(rz == 0, 1.0, rz), 0.0)[:, None, None]
        p *= beta
        p += z
        rz = rz_new
    return x, iterations


def solve_batched(a: Array, rhs: Array, *, method: str, averaging: str, tol: float,
                  maxiter: int, x0: Array | None = None
                  ) -> tuple[Array, NDArray[np.int64], Array]:
    """Solve the scaled FD systems of a batch of coefficients.

    Parameters
    ----------
    a : (s, n, n) array
        Nodal coefficient (> 0), boundary included.
    rhs : (s, n - 2, n - 2) array
        Scaled right-hand side ``h^2 f`` at the interior nodes.
    method
        One of :data:`BATCHED_SOLVERS`.
    averaging
        Face averaging (:data:`solvers._darcy_fd.AVERAGINGS`).
    tol, maxiter
        Relative-residual tolerance and iteration cap (``"dst-cg"``; ``"banded"`` only uses
        ``tol`` to accept an initial guess).
    x0 : (s, n - 2, n - 2) array or None
        Initial guess at the interior nodes.

    Returns
    -------
    x : (s, n - 2, n - 2) array
        Interior solution.
    iterations : (s,) int array
    residual : (s,) array
        True relative residual ``||b - A x|| / ||b||`` (0 where ``b = 0``).
    """
    ax, ay = face_coefficients(a, averaging=averaging)
    bnorm = _norms(rhs)
    safe = np.where(bnorm > 0, bnorm, 1.0)
    stencil = _stencil(ax, ay)
    start = np.zeros_like(rhs) if x0 is None else np.array(x0, dtype=np.float64)
    if method == "banded":
        done = bnorm == 0
        if x0 is not None:  # accept a guess that already meets the tolerance
            done |= _norms(rhs - _apply(stencil, start)) <= tol * safe
        x = start.copy()
        iterations = np.zeros(len(a), dtype=np.int64)
        todo = np.flatnonzero(~done)
        if todo.size:
            x[todo] = _banded(ax[todo], ay[todo], rhs[todo])
            iterations[todo] = 1
    else:
        x = np.empty_like(start)
        iterations = np.empty(len(a), dtype=np.int64)
        step = max(1, _CHUNK_UNKNOWNS // rhs[0].size)
        for lo in range(0, len(a), step):  # chunks that keep CG's working set in cache
            sl = slice(lo, lo + step)
            x[sl], iterations[sl] = _dst_cg(ax[sl], ay[sl], tuple(c[sl] for c in stencil),
                                            rhs[sl], start[sl], tol=tol, maxiter=maxiter)
    x[bnorm == 0] = 0.0
    residual = np.where(bnorm > 0, _norms(rhs - _apply(stencil, x)) / safe, 0.0)
    return x, iterations, residual
