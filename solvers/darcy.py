"""Steady Darcy flow on the unit square: finite differences and finite elements.

.. math::

    -\\nabla\\cdot\\big(a(x, y)\\,\\nabla u\\big) = f \\quad\\text{in } (0, 1)^2,
    \\qquad u = 0 \\text{ on the boundary},

with the coefficient ``a`` given at the ``n x n`` nodes ``x_i = i / (n - 1)`` (boundary
included; array axis 0 is ``x``, axis 1 is ``y``) and the solution returned on the same nodes
(zero on the boundary). Benchmark: ``n = 421``, ``a in {3, 12}``, ``f = 1``.

:class:`DarcyFDSolver`
    5-point finite differences, face coefficients from the harmonic (default) or arithmetic
    mean of the two neighbouring nodal values; second order for smooth ``a``.
:class:`DarcyFEMSolver`
    P1 (each grid square split into two triangles) or Q1 elements with scikit-fem, on the
    node grid or, through :meth:`DarcyFEMSolver.solve_mesh`, on any scikit-fem mesh with an
    element-wise coefficient; second order in L2 and first order in the H1 seminorm.

Linear solvers (``linear_solver``): ``"gmg"`` (default: CG preconditioned by a geometric
multigrid V-cycle, fastest by measurement at the benchmark grids, see
``benchmarks/bench_darcy.py``), ``"amg"`` (CG + pyamg Ruge-Stuben), ``"cg"`` (Jacobi
CG) and ``"direct"`` (scipy SuperLU); for :class:`DarcyFDSolver` on small grids also the batched
``"banded"`` (banded Cholesky, the faster below about 29 x 29) and ``"dst-cg"`` (CG
preconditioned by the fast Poisson solver, vectorised over samples; see
:mod:`solvers._darcy_batched` and ``benchmarks/bench_rungs.py``).
Each solve stops at relative residual ``||b - A u|| / ||b|| <= tol`` (default ``1e-10``,
far below the discretisation error) and raises :class:`~solvers.errors.ConvergenceError`
naming the sample if it cannot.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import skfem
from numpy.typing import ArrayLike, NDArray

from ._darcy_batched import BATCHED_SOLVERS, solve_batched
from ._darcy_fd import AVERAGINGS, assemble_fd
from ._darcy_fem import ELEMENTS, assemble_mesh, element_for, grid_fem
from ._darcy_linear import LINEAR_SOLVERS, solve_linear
from ._darcy_solver_base import (
    _blas_limit,
    _check_choice,
    _check_common,
    _DarcyGridSolver,
    _maxiter,
)
from .checks import check_int, plain
from .contract import SolveReport, SolverInput, SolverOutput, check_finite
from .darcy_inputs import system_inputs
from .errors import ConvergenceError, InputError, ShapeError

__all__ = [
    "AVERAGINGS",
    "ELEMENTS",
    "LINEAR_SOLVERS",
    "DarcyFDSolver",
    "DarcyFEMSolver",
    "DarcySolver",
    "energy_norm",
]


def energy_norm(a: ArrayLike, v: ArrayLike) -> NDArray[np.float64]:
    """The energy norm ``sqrt(v^T K(a) v)`` of nodal fields, one value per sample.

    ``K(a)`` is the P1 stiffness matrix of ``int a grad(v) . grad(w) dx`` on the node-grid
    triangulation (each grid square split into two triangles, the nodal coefficient
    interpolated), boundary nodes included, assembled with scikit-fem.

    Parameters
    ----------
    a, v : (n_samples, n, n) arrays
        Nodal coefficient (> 0) and fields on the ``n x n`` node grid ``x_i = i/(n-1)``.

    Returns
    -------
    (n_samples,) array.
    """
    a = np.asarray(a, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    if a.ndim != 3 or a.shape != v.shape or a.shape[1] != a.shape[2]:
        msg = (f"`a` and `v` must have the same shape (n_samples, n, n); got {a.shape} and "
               f"{v.shape}.")
        raise ShapeError(msg)
    fem = grid_fem(a.shape[-1], "P1")
    out = np.empty(len(a))
    for s in range(len(a)):
        k_mat = fem.stiffness(a[s])
        e = v[s].ravel()[fem.grid_of_dof]
        # numpy's own pairwise sum, not BLAS's dot: a threaded dot splits the sum by thread
        # count, and the same error must come out at any BLAS thread setting.
        out[s] = np.sqrt(max(float(np.sum(e * (k_mat @ e))), 0.0))
    return out


@dataclass(frozen=True, kw_only=True)
class DarcyFDSolver(_DarcyGridSolver):
    """5-point finite-difference Darcy solver on the node grid.

    Discretisation (``h = 1 / (n - 1)``, interior nodes ``(i, j)``)::

        [a_{i-1/2,j} (u_ij - u_{i-1,j}) + a_{i+1/2,j} (u_ij - u_{i+1,j})
         + a_{i,j-1/2} (u_ij - u_{i,j-1}) + a_{i,j+1/2} (u_ij - u_{i,j+1})] / h^2 = f_ij

    with ``a_{i+1/2,j}`` the harmonic (``2 a_1 a_2 / (a_1 + a_2)``, default) or arithmetic
    mean of the nodal values. Second order in the discrete L2 norm for smooth ``a``; the
    matrix is a symmetric positive definite M-matrix (discrete maximum principle).
    Assembly is vectorised over samples (``batch_size`` at a time).

    Parameters
    ----------
    forcing
        Constant right-hand side ``f`` (benchmark: 1).
    averaging
        Face averaging, ``"harmonic"`` or ``"arithmetic"``.
    linear_solver
        ``"gmg"``, ``"amg"``, ``"cg"``, ``"direct"``, ``"banded"`` or ``"dst-cg"``; see
        :mod:`solvers.darcy`. The last two solve ``batch_size`` samples at once (no per-sample
        set-up; fastest on small grids).
    tol
        Relative residual ``||b - A u|| / ||b||`` at which iterative solves stop, in (0, 1).
    maxiter
        Iteration cap (None: 200 for gmg/amg/dst-cg, ``max(1000, 10 (n - 2))`` for cg).
    blas_threads
        BLAS/OpenMP threads during the linear solve (threadpoolctl); 1 by default because
        threaded BLAS slows the small Krylov vector operations down (15x measured on a busy
        2-core machine). None leaves the process setting.
    batch_size
        Samples assembled together (memory ~ 100 * n^2 bytes per sample).

    Examples
    --------
    >>> import numpy as np
    >>> u = DarcyFDSolver().solve(np.ones((33, 33)))
    >>> u.shape, round(float(u.max()), 4)
    ((33, 33), 0.0736)
    """

    forcing: float = 1.0
    averaging: str = "harmonic"
    linear_solver: str = "gmg"
    tol: float = 1e-10
    maxiter: int | None = None
    blas_threads: int | None = 1
    batch_size: int = 16

    def __post_init__(self) -> None:
        _check_common(self)
        _check_choice(self.averaging, name="averaging", valid=AVERAGINGS)
        object.__setattr__(self, "batch_size", check_int(self.batch_size, name="batch_size",
                                                         minimum=1))

    def _method(self) -> str:
        return f"FD 5-point, {self.averaging} faces; {self.linear_solver} (tol={self.tol:g})"

    def solve_with_report(
        self,
        inputs: SolverInput,
        *,
        initial_guess: ArrayLike | None = None,
        forcing: ArrayLike | None = None,
    ) -> tuple[SolverOutput, SolveReport]:
        """Solve for each coefficient sample and report per-sample convergence.

        As :meth:`_DarcyGridSolver.solve_with_report`; with ``linear_solver`` ``"banded"`` or
        ``"dst-cg"`` the samples are solved ``batch_size`` at a time by array operations and
        each sample's ``solve_time`` is its batch's wall time (assembly included) divided by
        the batch's size.
        """
        if self.linear_solver not in BATCHED_SOLVERS:
            return super().solve_with_report(inputs, initial_guess=initial_guess,
                                             forcing=forcing)
        batch, guess, f = system_inputs(inputs, initial_guess, forcing,
                                        default_forcing=self.forcing)
        a = batch.values
        n_samples, n, _ = a.shape
        h2 = 1.0 / (n - 1) ** 2
        u = np.zeros_like(a)
        iterations = np.zeros(n_samples, dtype=np.int64)
        residual = np.zeros(n_samples)
        times = np.zeros(n_samples)
        maxiter = _maxiter(self, (n - 2) ** 2)
        for start in range(0, n_samples, self.batch_size):
            sl = slice(start, min(start + self.batch_size, n_samples))
            t0 = time.perf_counter()
            with _blas_limit(self.blas_threads):
                x, its, res = solve_batched(
                    a[sl], h2 * f[sl, 1:-1, 1:-1], method=self.linear_solver,
                    averaging=self.averaging, tol=self.tol, maxiter=maxiter,
                    x0=None if guess is None else guess[sl, 1:-1, 1:-1])
            u[sl, 1:-1, 1:-1] = x
            iterations[sl], residual[sl] = its, res
            times[sl] = (time.perf_counter() - t0) / len(x)
        bad = np.flatnonzero(~(residual <= self.tol))
        if bad.size:
            s = int(bad[0])
            msg = (f"DarcyFDSolver(linear_solver={self.linear_solver!r}): sample {s} missed the "
                   f"tolerance: relative residual {residual[s]:.3e} > tol {self.tol:.1e} after "
                   f"{iterations[s]} iterations. Raise `maxiter` or use linear_solver='gmg'.")
            raise ConvergenceError(msg)
        report = SolveReport(
            iterations=iterations, residual=residual, solve_time=times, method=self._method()
        )
        return batch.restore(u, name="u"), report

    def _systems(self, a: NDArray[np.float64], f: Any) -> Any:
        n = a.shape[-1]
        h2 = 1.0 / (n - 1) ** 2
        for start in range(0, len(a), self.batch_size):
            stop = min(start + self.batch_size, len(a))
            t0 = time.perf_counter()
            mats = assemble_fd(a[start:stop], averaging=self.averaging)
            if np.isscalar(f):
                rhs = [np.full((n - 2) ** 2, h2 * f) for _ in mats]
            else:
                rhs = [h2 * f[s, 1:-1, 1:-1].ravel() for s in range(start, stop)]
            t_assembly = (time.perf_counter() - t0) / (stop - start)
            yield start, list(zip(mats, rhs, strict=True)), t_assembly


@dataclass(frozen=True, kw_only=True)
class DarcyFEMSolver(_DarcyGridSolver):
    """P1 / Q1 finite-element Darcy solver (scikit-fem), on the node grid or any mesh.

    On the node grid (:meth:`solve`), ``"P1"`` splits each grid square into two triangles and
    ``"Q1"`` uses bilinear quads; the nodal coefficient is interpolated (P1/Q1 interpolant,
    which for P1 amounts to the element mean of the three vertex values) and a nodal
    ``forcing`` override is interpolated likewise. Second order in L2, first order in the
    H1 seminorm for smooth data. The same linear solvers as :class:`DarcyFDSolver` apply
    (the grid system is ordered like the FD one, so ``"gmg"`` works).

    Parameters
    ----------
    forcing
        Constant right-hand side ``f``.
    element
        ``"P1"`` or ``"Q1"``.
    linear_solver, tol, maxiter
        As for :class:`DarcyFDSolver`.

    Examples
    --------
    >>> import numpy as np
    >>> u = DarcyFEMSolver(element="Q1").solve(np.ones((2, 17, 17)))
    >>> u.shape
    (2, 17, 17)
    """

    forcing: float = 1.0
    element: str = "P1"
    linear_solver: str = "gmg"
    tol: float = 1e-10
    maxiter: int | None = None
    blas_threads: int | None = 1

    def __post_init__(self) -> None:
        _check_common(self)
        _check_choice(self.element, name="element", valid=ELEMENTS)
        if self.linear_solver in BATCHED_SOLVERS:
            msg = (f"`linear_solver` must be one of 'gmg', 'amg', 'cg', 'direct' for "
                   f"DarcyFEMSolver ({', '.join(map(repr, BATCHED_SOLVERS))} solve the FD "
                   f"5-point systems); got {self.linear_solver!r}.")
            raise InputError(msg)

    def _method(self) -> str:
        return f"FEM {self.element} (scikit-fem); {self.linear_solver} (tol={self.tol:g})"

    def _systems(self, a: NDArray[np.float64], f: Any) -> Any:
        fem = grid_fem(a.shape[-1], self.element)
        for s in range(len(a)):
            t0 = time.perf_counter()
            system = fem.assemble(a[s], f if np.isscalar(f) else f[s])
            yield s, [system], time.perf_counter() - t0

    def solve_mesh(
        self,
        mesh: skfem.Mesh,
        coefficient: ArrayLike,
        *,
        initial_guess: ArrayLike | None = None,
    ) -> tuple[NDArray[np.float64], SolveReport]:
        """Solve on any scikit-fem mesh with an element-wise coefficient.

        ``u = 0`` on the whole mesh boundary; the right-hand side is the constant
        ``self.forcing``. ``"gmg"`` needs the structured grid and is refused here.

        Parameters
        ----------
        mesh
            ``MeshTri1``/``MeshTet1`` for ``element="P1"``, ``MeshQuad1``/``MeshHex1`` for ``"Q1"``.
        coefficient : (mesh.nelements,) array
            Element-wise coefficient, finite and > 0.
        initial_guess : (n_dofs,) array or None
            Starting iterate in scikit-fem dof order (boundary values ignored).

        Returns
        -------
        u : (n_dofs,) array
            Nodal values (P1/Q1 dofs are the mesh nodes, ``mesh.p`` order).
        report : SolveReport
            One entry.
        """
        if self.linear_solver == "gmg":
            msg = (
                "`linear_solver` must be one of 'amg', 'cg', 'direct' for solve_mesh (gmg needs "
                "the structured node grid); got 'gmg'."
            )
            raise InputError(msg)
        basis = skfem.Basis(mesh, element_for(mesh, self.element))
        coef = np.asarray(coefficient)
        if coef.dtype.kind != "f" or coef.shape != (mesh.nelements,):
            msg = (
                f"`coefficient` must be a float array of shape ({mesh.nelements},), one value per "
                f"element; got {coef.dtype} array of shape {coef.shape}."
            )
            raise ShapeError(msg)
        check_finite(coef, name="coefficient")
        if (coef <= 0).any():
            msg = f"`coefficient` must be > 0; got minimum {plain(coef.min())}."
            raise InputError(msg)
        x0_full = None
        if initial_guess is not None:
            x0_full = np.asarray(initial_guess, dtype=np.float64)
            if x0_full.shape != (basis.N,):
                msg = f"`initial_guess` must have shape ({basis.N},); got {x0_full.shape}."
                raise ShapeError(msg)
            check_finite(x0_full, name="initial_guess")
        t0 = time.perf_counter()
        a_mat, b, interior = assemble_mesh(basis, coef.astype(np.float64), self.forcing)
        x0 = None if x0_full is None else x0_full[interior]
        with _blas_limit(self.blas_threads):
            x, its, res = solve_linear(
                a_mat, b, method=self.linear_solver, tol=self.tol,
                maxiter=_maxiter(self, len(b)), x0=x0,
            )
        elapsed = time.perf_counter() - t0
        if not res <= self.tol:
            msg = (
                f"DarcyFEMSolver.solve_mesh(linear_solver={self.linear_solver!r}): sample 0 missed "
                f"the tolerance: relative residual {res:.3e} > tol {self.tol:.1e} after {its} "
                "iterations. Raise `maxiter`."
            )
            raise ConvergenceError(msg)
        u = np.zeros(basis.N)
        u[interior] = x
        report = SolveReport(
            iterations=np.array([its]), residual=np.array([res]),
            solve_time=np.array([elapsed]), method=self._method(),
        )
        return u, report


#: Either node-grid Darcy solver: both have ``systems`` and ``solve_system`` (warm starts).
DarcySolver = DarcyFDSolver | DarcyFEMSolver
