"""Private kernels of the Darcy coefficient inversion.

Adjoint gradient, smoothed TV, one sample's objective and L-BFGS-B run
(:class:`InversionProblem`), the nested grids of the multilevel start, average pooling.

Notation as in :mod:`solvers._darcy_fd`: ``n x n`` node grid, ``h = 1 / (n - 1)``, interior
unknowns ``u[1:-1, 1:-1].ravel()`` (x-major), scaled system ``A(a) u = h^2 f`` with

.. math::

    A(a) = \\sum_{\\text{faces } e} a_e\\, d_e d_e^T ,

``d_e = e_p - e_q`` for a face between two interior nodes and ``d_e = e_p`` for a face between
an interior node ``p`` and a boundary node (where ``u = 0``). ``a_e`` is the harmonic or
arithmetic mean of the two nodal values (:func:`solvers._darcy_fd.face_coefficients`).

Discrete adjoint of ``J(a) = 0.5 h^2 ||u(a) - d||^2``: since ``A`` is symmetric, the adjoint
state solves ``A lambda = h^2 (u - d)`` with the same matrix (and preconditioner), and

.. math::

    \\frac{\\partial J}{\\partial a_e} = -(d_e^T\\lambda)(d_e^T u)
    = -(\\Lambda_q - \\Lambda_p)(U_q - U_p)

with ``U``, ``Lambda`` the states padded by their zero boundary values. The face derivatives
chain to the nodal coefficient through the averaging rule (:func:`face_derivatives`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import scipy.optimize as so
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import NDArray

from ._darcy_fd import assemble_fd
from ._darcy_linear import AMG_KIND, amg_hierarchy, gmg_hierarchy, pcg, rounding_floor
from .errors import ConvergenceError

__all__ = [
    "Evaluation",
    "FactorisedSystem",
    "InversionProblem",
    "InversionSettings",
    "average_pool_nodes",
    "coarse_grids",
    "face_derivatives",
    "misfit_gradient",
    "prolong_nodes",
    "smoothed_tv",
]

DIRECT_BELOW = 48  # coarse grids with n <= 48 use the sparse direct solver (faster there)
MIN_COARSE = 9  # smallest coarse grid of the multilevel start

Array = NDArray[np.float64]


def face_derivatives(a: Array, *, averaging: str) -> tuple[Array, Array, Array, Array]:
    """Derivatives of the face coefficients with respect to the two nodal values.

    Parameters
    ----------
    a : (n, n) array
        Nodal coefficient, > 0.
    averaging
        ``"harmonic"`` (``a_e = 2 a_1 a_2 / (a_1 + a_2)``, so
        ``da_e/da_1 = 2 a_2^2 / (a_1 + a_2)^2``) or ``"arithmetic"`` (``da_e/da_1 = 1/2``).

    Returns
    -------
    dx1, dx2 : (n - 1, n) arrays
        ``d a_{i+1/2, j} / d a_{i, j}`` and ``/ d a_{i+1, j}``.
    dy1, dy2 : (n, n - 1) arrays
        ``d a_{i, j+1/2} / d a_{i, j}`` and ``/ d a_{i, j+1}``.
    """
    if averaging == "arithmetic":
        half_x = np.full((a.shape[0] - 1, a.shape[1]), 0.5)
        half_y = np.full((a.shape[0], a.shape[1] - 1), 0.5)
        return half_x, half_x, half_y, half_y
    a1x, a2x = a[:-1, :], a[1:, :]
    a1y, a2y = a[:, :-1], a[:, 1:]
    sx, sy = (a1x + a2x) ** 2, (a1y + a2y) ** 2
    return 2.0 * a2x**2 / sx, 2.0 * a1x**2 / sx, 2.0 * a2y**2 / sy, 2.0 * a1y**2 / sy


def misfit_gradient(a: Array, u: Array, lam: Array, *, averaging: str) -> Array:
    """Gradient ``-lambda^T (dA/da) u`` of the output functional with respect to nodal ``a``.

    Parameters
    ----------
    a : (n, n) array
        Nodal coefficient.
    u, lam : (n, n) arrays
        Forward and adjoint states on the node grid, zero on the boundary.
    averaging
        Face averaging of the forward model.

    Returns
    -------
    (n, n) array
        ``dJ/da`` at every node (corner nodes enter no face: 0 there).
    """
    gx = -(lam[1:, :] - lam[:-1, :]) * (u[1:, :] - u[:-1, :])  # (n-1, n): dJ/da_e, x-faces
    gy = -(lam[:, 1:] - lam[:, :-1]) * (u[:, 1:] - u[:, :-1])  # (n, n-1): y-faces
    dx1, dx2, dy1, dy2 = face_derivatives(a, averaging=averaging)
    grad = np.zeros_like(a)
    grad[:-1, :] += gx * dx1
    grad[1:, :] += gx * dx2
    grad[:, :-1] += gy * dy1
    grad[:, 1:] += gy * dy2
    return grad


def smoothed_tv(m: Array, *, smoothing: float) -> tuple[float, Array]:
    """Smoothed total variation of a nodal field and its gradient.

    .. math::

        TV_\\varepsilon(m) = h^2 \\sum_{\\text{cells } c}
            \\sqrt{|\\nabla m|_c^2 + \\varepsilon^2},
        \\qquad |\\nabla m|_c^2 = \\frac{1}{2h^2}
            \\sum_{\\text{4 edges } e \\text{ of } c}(\\delta_e m)^2,

    ``delta_e m`` the difference of ``m`` along edge ``e``: the mean of the squared forward
    differences on the two x-edges and the two y-edges of the cell. Unlike the cell-centred
    average gradient, this form has no checkerboard null space (a checkerboard ``a`` gives
    constant harmonic face means, so the data cannot see it either). A midpoint rule for
    :math:`\\int\\sqrt{|\\nabla m|^2 + \\varepsilon^2}`, first order for smooth ``m``.

    Parameters
    ----------
    m : (n, n) array
    smoothing
        ``epsilon`` > 0, in units of ``m`` per unit length.

    Returns
    -------
    value : float
    gradient : (n, n) array
    """
    n = m.shape[0]
    h2 = 1.0 / (n - 1) ** 2
    dx = m[1:, :] - m[:-1, :]  # (n-1, n)
    dy = m[:, 1:] - m[:, :-1]  # (n, n-1)
    g2 = 0.5 * (dx[:, :-1] ** 2 + dx[:, 1:] ** 2 + dy[:-1, :] ** 2 + dy[1:, :] ** 2) / h2
    root = np.sqrt(g2 + smoothing**2)  # (n-1, n-1) cells
    value = h2 * float(root.sum())
    # d(h^2 root_c)/d(delta_e) = h^2 (2 delta_e / (2 h^2)) / (2 root_c) = delta_e / (2 root_c),
    # summed over the (one or two) cells c that share edge e
    w = 0.5 / root
    wx = np.zeros((n - 1, n))
    wx[:, :-1] += w
    wx[:, 1:] += w
    wy = np.zeros((n, n - 1))
    wy[:-1, :] += w
    wy[1:, :] += w
    fx, fy = wx * dx, wy * dy  # d value / d delta_e
    grad = np.zeros_like(m)
    grad[1:, :] += fx
    grad[:-1, :] -= fx
    grad[:, 1:] += fy
    grad[:, :-1] -= fy
    return value, grad


class FactorisedSystem:
    """One assembled FD system with its preconditioner (or LU factors), for several solves.

    The forward and the adjoint solve of one objective evaluation share the matrix, so the
    multigrid hierarchy / factorisation is built once. Methods as in
    :mod:`solvers._darcy_linear`: ``"gmg"``, ``"amg"`` (CG + one V-cycle), ``"cg"`` (Jacobi)
    and ``"direct"`` (SuperLU). :meth:`solve_direct` is the fallback of an iterative solve
    that missed ``tol`` (the LU factors are then kept for the next solve with this matrix).
    """

    def __init__(self, a_mat: sp.csr_matrix, *, method: str, n: int, tol: float) -> None:
        self.a_mat, self.method, self.tol = a_mat, method, tol
        self.maxiter = max(1000, 10 * (n - 2)) if method == "cg" else 200
        self._lu: spla.SuperLU | None = None
        self._precondition: Callable[[Array], Array] | None = None
        if method == "direct":
            self._lu = spla.splu(a_mat.tocsc())
        elif method == "cg":
            inv_diag = 1.0 / a_mat.diagonal()
            self._precondition = lambda r: inv_diag * r
        else:
            ml = gmg_hierarchy(a_mat, n) if method == "gmg" else amg_hierarchy(a_mat, AMG_KIND)
            self._precondition = ml.aspreconditioner(cycle="V").matvec

    def solve(self, b: Array, x0: Array | None) -> tuple[Array, int, float]:
        """Solve ``A x = b`` from ``x0``; returns ``x``, iterations and relative residual."""
        if not np.any(b):
            return np.zeros_like(b), 0, 0.0
        if self._lu is not None:
            return self.solve_direct(b)
        assert self._precondition is not None  # set for every iterative method
        start = np.zeros_like(b) if x0 is None else x0
        return pcg(self.a_mat, b, start, self._precondition, tol=self.tol, maxiter=self.maxiter)

    def solve_direct(self, b: Array) -> tuple[Array, int, float]:
        """Solve ``A x = b`` by sparse LU (SuperLU); returns ``x``, 1 and the relative residual."""
        if self._lu is None:
            self._lu = spla.splu(self.a_mat.tocsc())
        x = self._lu.solve(b)
        return x, 1, float(np.linalg.norm(b - self.a_mat @ x) / np.linalg.norm(b))


def average_pool_nodes(a: Array, *, factor: int) -> Array:
    """Average-pool node-grid fields by ``factor``: ``n -> (n - 1) / factor + 1`` nodes.

    Coarse node ``I`` sits on fine node ``factor * I`` and gets the mean of the fine nodes
    within ``factor // 2`` of it along each axis (a centred window, NaN-padded outside the
    domain and averaged with nanmean), the rule that builds the inverse-problem targets in
    ``neuralop_fem.data``. ``a`` has shape ``(..., n, n)``.
    """
    n = a.shape[-1]
    r = factor // 2
    centres = np.arange((n - 1) // factor + 1) * factor
    j = np.arange(n)
    w = (np.abs(j[None, :] - centres[:, None]) <= r).astype(np.float64)
    w /= w.sum(axis=1, keepdims=True)
    return np.einsum("ix,...xy,jy->...ij", w, a, w, optimize=True)


def coarse_grids(n: int, levels: int) -> list[int]:
    """Node counts of the multilevel start, coarsest first, ending with ``n``.

    Each coarser grid keeps every other node (``n -> (n - 1) / 2 + 1``) while ``n - 1`` is
    even and the coarse grid has at least :data:`MIN_COARSE` nodes, up to ``levels`` grids.
    """
    grids = [n]
    while len(grids) < levels and (grids[-1] - 1) % 2 == 0:
        coarse = (grids[-1] - 1) // 2 + 1
        if coarse < MIN_COARSE:
            break
        grids.append(coarse)
    return grids[::-1]


def prolong_nodes(m: Array) -> Array:
    """Bilinear interpolation from the ``n_c`` node grid to ``2 n_c - 1`` nodes (nested)."""
    nc = m.shape[-1]
    fine = np.empty((2 * nc - 1, 2 * nc - 1))
    fine[::2, ::2] = m
    fine[1::2, ::2] = 0.5 * (m[:-1, :] + m[1:, :])
    fine[:, 1::2] = 0.5 * (fine[:, :-2:2] + fine[:, 2::2])
    return fine


@dataclass(frozen=True)
class Evaluation:
    """One evaluation of the objective: value, ``dJ/dm``, misfit norm and regulariser."""

    value: float
    grad: Array
    misfit: float  # ||F(a) - d|| over interior nodes (Euclidean, no h)
    regularization: float


class InversionSettings(Protocol):
    """The settings an :class:`InversionProblem` reads (a ``DarcyInverseSolver`` has them)."""

    @property
    def forcing(self) -> float: ...

    @property
    def averaging(self) -> str: ...

    @property
    def tol(self) -> float: ...

    @property
    def tv_smoothing(self) -> float: ...


class InversionProblem:
    """The objective of one sample on one grid, with warm-start states and solve counters.

    ``settings`` provides ``forcing``, ``averaging``, ``tol`` and ``tv_smoothing``;
    ``beta`` is the relative regularisation weight, ``alpha = beta ||u_obs||_h^2``.
    """

    def __init__(self, settings: InversionSettings, u_obs: Array, *, beta: float,
                 linear_solver: str, index: int = 0) -> None:
        self.settings, self.linear_solver, self.index = settings, linear_solver, index
        self.n = n = u_obs.shape[0]
        self.h2 = 1.0 / (n - 1) ** 2
        self.d = u_obs[1:-1, 1:-1].ravel()
        self.d_norm = float(np.linalg.norm(self.d))
        self.alpha = beta * self.h2 * self.d_norm**2
        self.b = np.full((n - 2) ** 2, self.h2 * settings.forcing)
        self.forward = self.adjoint = 0
        self.fallbacks = 0  # iterative solves redone by sparse LU
        self.first_fallback = ""
        self._states: tuple[Array | None, Array | None] = (None, None)
        self._cache: dict[bytes, Evaluation] = {}

    def _system(self, a: Array) -> FactorisedSystem:
        a_mat = assemble_fd(a[None], averaging=self.settings.averaging)[0]
        return FactorisedSystem(a_mat, method=self.linear_solver, n=self.n, tol=self.settings.tol)

    def _linear(self, system: FactorisedSystem, rhs: Array, x0: Array | None) -> Array:
        """Solve to ``tol``, or to the rounding floor when that is above ``tol``.

        A trial coefficient of the optimiser can have a range (1e7 and more) at which
        ``tol`` is below the residual that rounding leaves (:func:`rounding_floor`); a
        residual within 10 times that floor is accepted. An iterative solve that misses both
        is redone by sparse LU (counted in :attr:`fallbacks`, the first miss described in
        :attr:`first_fallback`); a miss of LU too raises ConvergenceError.
        """
        x, its, res = system.solve(rhs, x0)
        if res <= self.settings.tol or res <= 10 * rounding_floor(system.a_mat, x, rhs):
            return x
        if system.method != "direct":
            x, _, res_direct = system.solve_direct(rhs)
            floor = rounding_floor(system.a_mat, x, rhs)
            if res_direct <= max(self.settings.tol, 10 * floor):
                if not self.fallbacks:
                    self.first_fallback = (
                        f"{self.n} x {self.n} grid: relative residual {res:.2e} > tol "
                        f"{self.settings.tol:.0e} after {its} {system.method} iterations")
                self.fallbacks += 1
                return x
            res = res_direct
        msg = (f"DarcyInverseSolver(linear_solver={self.linear_solver!r}): sample {self.index}, "
               f"{self.n} x {self.n} grid: a linear solve missed the tolerance: relative "
               f"residual {res:.3e} > tol {self.settings.tol:.1e} and > 10 x the rounding "
               f"floor (sparse LU included).")
        raise ConvergenceError(msg)

    def best_constant(self) -> float:
        """The constant ``c`` minimising ``||F(c) - d||`` (``F(c) = F(1) / c``; one solve)."""
        u1 = self._linear(self._system(np.ones((self.n, self.n))), self.b, None)
        self.forward += 1
        num, den = float(u1 @ u1), float(u1 @ self.d)
        return num / den if den > 0 else 1.0

    def evaluate(self, m: Array, *, warm: bool = True) -> Evaluation:
        """``J``, ``dJ/dm``, misfit and regularisation at ``m`` (one forward + one adjoint)."""
        key = m.tobytes()
        if key in self._cache:
            return self._cache[key]
        n = self.n
        a = np.exp(m)
        system = self._system(a)
        u_prev, lam_prev = self._states if warm else (None, None)
        u = self._linear(system, self.b, u_prev)
        r = u - self.d
        lam = self._linear(system, self.h2 * r, lam_prev)
        self.forward += 1
        self.adjoint += 1
        self._states = (u, lam)
        full_u, full_lam = np.zeros((n, n)), np.zeros((n, n))
        full_u[1:-1, 1:-1] = u.reshape(n - 2, n - 2)
        full_lam[1:-1, 1:-1] = lam.reshape(n - 2, n - 2)
        grad = a * misfit_gradient(a, full_u, full_lam, averaging=self.settings.averaging)
        tv, tv_grad = smoothed_tv(m, smoothing=self.settings.tv_smoothing)
        misfit = float(np.linalg.norm(r))
        ev = Evaluation(value=0.5 * self.h2 * misfit**2 + self.alpha * tv,
                        grad=grad + self.alpha * tv_grad, misfit=misfit,
                        regularization=self.alpha * tv)
        if len(self._cache) >= 4:
            self._cache.pop(next(iter(self._cache)))
        self._cache[key] = ev
        return ev

    def minimise(self, m0: Array, *, target: float, maxiter: int, memory: int,
                 bounds: tuple[float, float]) -> tuple[Array, int, int, Evaluation]:
        """L-BFGS-B from ``m0`` until ``misfit <= target`` (checked at ``m0`` too) or its own stop.

        Returns ``m``, iterations, status (-1: target met, else scipy's L-BFGS-B status:
        0 converged, 1 iteration/evaluation cap, 2 line search failure) and the evaluation.
        """
        ev0 = self.evaluate(m0)
        if ev0.misfit <= target:
            return m0, 0, -1, ev0
        scale = 0.5 * self.h2 * self.d_norm**2  # J / scale ~ (relative misfit)^2
        shape = m0.shape

        def fun(x: Array) -> tuple[float, Array]:
            ev = self.evaluate(x.reshape(shape))
            return ev.value / scale, ev.grad.ravel() / scale

        def callback(intermediate_result: so.OptimizeResult) -> None:
            if self.evaluate(intermediate_result.x.reshape(shape)).misfit <= target:
                raise StopIteration

        res = so.minimize(
            fun, m0.ravel(), jac=True, method="L-BFGS-B", bounds=so.Bounds(*bounds),
            callback=callback,
            options={"maxiter": maxiter, "maxfun": 2 * maxiter + 20, "maxcor": memory,
                     "ftol": 1e-13, "gtol": 1e-12},
        )
        m = res.x.reshape(shape)
        ev = self.evaluate(m)
        return m, int(res.nit), -1 if ev.misfit <= target else int(res.status), ev
