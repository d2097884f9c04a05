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
multigrid V-cycle, fastest by measurement, see ``benchmarks/bench_darcy.py``), ``"amg"``
(CG + pyamg smoothed aggregation), ``"cg"`` (Jacobi CG) and ``"direct"`` (scipy SuperLU).
Each solve stops at relative residual ``||b - A u|| / ||b|| <= tol`` (default ``1e-10``,
far below the discretisation error) and raises :class:`~solvers.errors.ConvergenceError`
naming the sample if it cannot.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import skfem
from numpy.typing import ArrayLike, NDArray

from ._darcy_fd import AVERAGINGS, assemble_fd
from ._darcy_fem import ELEMENTS, assemble_mesh, element_for, grid_fem
from ._darcy_linear import LINEAR_SOLVERS, solve_linear
from .contract import Batch, SolveReport, as_batch, check_finite
from .errors import ConvergenceError, InputError, ShapeError

__all__ = [
    "AVERAGINGS",
    "ELEMENTS",
    "LINEAR_SOLVERS",
    "DarcyFDSolver",
    "DarcyFEMSolver",
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
        out[s] = np.sqrt(max(float(e @ (k_mat @ e)), 0.0))
    return out


def _check_choice(value: str, *, name: str, valid: tuple[str, ...]) -> None:
    if value not in valid:
        msg = f"`{name}` must be one of {', '.join(map(repr, valid))}; got {value!r}."
        raise InputError(msg)


def _check_common(solver: Any) -> None:
    """Validate and normalise the settings shared by both solvers (frozen dataclasses)."""
    forcing = solver.forcing
    if isinstance(forcing, bool) or not isinstance(forcing, int | float) or not np.isfinite(forcing):
        msg = f"`forcing` must be a finite real number; got {forcing!r}."
        raise InputError(msg)
    object.__setattr__(solver, "forcing", float(forcing))
    _check_choice(solver.linear_solver, name="linear_solver", valid=LINEAR_SOLVERS)
    tol = solver.tol
    if isinstance(tol, bool) or not isinstance(tol, int | float) or not 0.0 < tol < 1.0:
        msg = f"`tol` must be a relative residual in (0, 1); got {tol!r}."
        raise InputError(msg)
    object.__setattr__(solver, "tol", float(tol))
    maxiter = solver.maxiter
    if maxiter is not None and (isinstance(maxiter, bool) or not isinstance(maxiter, int) or maxiter < 1):
        msg = f"`maxiter` must be None or an int >= 1; got {maxiter!r}."
        raise InputError(msg)
    threads = solver.blas_threads
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        msg = f"`blas_threads` must be None or an int >= 1; got {threads!r}."
        raise InputError(msg)


def _blas_limit(threads: int | None) -> Any:
    """Context limiting BLAS/OpenMP threads during a solve (None: leave them as they are).

    The Krylov iterations work on vectors of (n-2)^2 entries; threaded BLAS gains nothing
    there and was measured 15x slower on a busy 2-core machine (0.18 s -> 3.4 s per 4 samples
    at n = 141), so the solvers use one thread unless told otherwise.
    """
    if threads is None:
        return contextlib.nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=threads)


def _maxiter(solver: Any, n_unknowns: int) -> int:
    if solver.maxiter is not None:
        return int(solver.maxiter)
    if solver.linear_solver == "cg":  # Jacobi CG needs O(n) iterations on an n x n grid
        return max(1000, 10 * int(np.sqrt(n_unknowns)))
    return 200


class _DarcyGridSolver:
    """The solver contract on the node grid, shared by the FD and FEM solvers."""

    problem: ClassVar[str] = "darcy"
    forcing: float
    linear_solver: str
    tol: float
    maxiter: int | None
    blas_threads: int | None

    @property
    def config(self) -> dict[str, Any]:
        """JSON-serialisable settings; ``type(self)(**config)`` rebuilds the solver."""
        return dataclasses.asdict(self)  # type: ignore[call-overload]

    def solve(
        self,
        inputs: ArrayLike,
        *,
        initial_guess: ArrayLike | None = None,
        forcing: ArrayLike | None = None,
    ) -> Any:
        """Solve for each coefficient sample; see :meth:`solve_with_report`."""
        return self.solve_with_report(inputs, initial_guess=initial_guess, forcing=forcing)[0]

    def solve_with_report(
        self,
        inputs: ArrayLike,
        *,
        initial_guess: ArrayLike | None = None,
        forcing: ArrayLike | None = None,
    ) -> tuple[Any, SolveReport]:
        """Solve for each coefficient sample and report per-sample convergence.

        Parameters
        ----------
        inputs : (n_samples, n, n) or (n, n) array, or xarray.DataArray
            Coefficient ``a`` at the nodes, dims ``("sample", "x", "y")`` or ``("x", "y")``;
            finite and > 0; ``n >= 3``.
        initial_guess : array of the same shape as ``inputs``, or None
            Starting iterate (e.g. a surrogate prediction); its boundary values are ignored.
            A guess that already meets ``tol`` is returned after 0 iterations.
        forcing : (n, n) or (n_samples, n, n) array, or None
            Nodal values of ``f`` overriding the constant ``self.forcing`` (e.g. for
            manufactured solutions). Not stored in :attr:`config`.

        Returns
        -------
        u
            Solution at the nodes in the form of ``inputs`` (numpy or DataArray named
            ``"u"``), zero on the boundary.
        report : SolveReport
            Per-sample Krylov iterations (1 for ``"direct"``), final relative residual
            ``||b - A u|| / ||b||`` and wall time in seconds (assembly included).

        Raises
        ------
        ShapeError
            Wrong number of dims, non-square grid, ``n < 3``, or mismatched
            ``initial_guess`` / ``forcing`` shape.
        InputError
            NaN/inf anywhere, or a coefficient <= 0.
        ConvergenceError
            If an iterative solve misses ``tol`` within ``maxiter`` iterations.
        """
        batch = _coefficient_batch(inputs)
        a = batch.values
        n_samples, n, _ = a.shape
        guess = _as_field(initial_guess, batch, name="initial_guess")
        f = self.forcing if forcing is None else _as_field(forcing, batch, name="forcing", broadcast=True)
        u = np.zeros_like(a)
        iterations = np.zeros(n_samples, dtype=np.int64)
        residual = np.zeros(n_samples)
        times = np.zeros(n_samples)
        maxiter = _maxiter(self, (n - 2) ** 2)
        for start, systems, t_assembly in self._systems(a, f):
            for offset, (a_mat, b) in enumerate(systems):
                s = start + offset
                t0 = time.perf_counter()
                x0 = None if guess is None else guess[s, 1:-1, 1:-1].ravel()
                with _blas_limit(self.blas_threads):
                    x, its, res = solve_linear(
                        a_mat, b, method=self.linear_solver, tol=self.tol, maxiter=maxiter,
                        x0=x0, grid_n=n,
                    )
                times[s] = time.perf_counter() - t0 + t_assembly
                if not res <= self.tol:
                    msg = (
                        f"{type(self).__name__}(linear_solver={self.linear_solver!r}): sample {s} "
                        f"missed the tolerance: relative residual {res:.3e} > tol {self.tol:.1e} "
                        f"after {its} iterations. Raise `maxiter` or use linear_solver='gmg'."
                    )
                    raise ConvergenceError(msg)
                u[s, 1:-1, 1:-1] = x.reshape(n - 2, n - 2)
                iterations[s], residual[s] = its, res
        report = SolveReport(
            iterations=iterations, residual=residual, solve_time=times, method=self._method()
        )
        return batch.restore(u, name="u"), report

    def systems(self, inputs: Any) -> list[tuple[Any, NDArray[np.float64]]]:
        """The discrete linear systems this solver solves, one ``(A, b)`` per sample.

        Parameters
        ----------
        inputs : (n_samples, n, n) or (n, n) array, or DataArray
            Nodal coefficient, validated as in :meth:`solve`.

        Returns
        -------
        list of (A, b)
            ``A`` a scipy CSR matrix of size ``(n-2)^2`` (the interior unknowns
            ``u[1:-1, 1:-1].ravel()``, x-major), ``b`` the right-hand side. The relative
            residual ``||b - A u|| / ||b||`` of these systems is what ``tol`` bounds.
        """
        a = _coefficient_batch(inputs).values
        return [sys for _, chunk, _ in self._systems(a, self.forcing) for sys in chunk]

    def solve_system(
        self,
        a_mat: Any,
        b: NDArray[np.float64],
        *,
        n: int,
        x0: NDArray[np.float64] | None = None,
        deflation: NDArray[np.float64] | None = None,
    ) -> tuple[NDArray[np.float64], int, float]:
        """Solve one system of :meth:`systems` exactly as :meth:`solve` does.

        Same linear solver, preconditioner, tolerance, iteration cap and BLAS thread limit;
        optionally from ``x0`` and deflated by ``deflation`` (both interior vectors of length
        ``(n-2)^2``; see :func:`solvers._darcy_linear.pcg`). Used to compare starts (zero,
        warm, projected, deflated) with equal overheads.

        Returns
        -------
        x, iterations, final relative residual ``||b - A x|| / ||b||`` (not checked).
        """
        with _blas_limit(self.blas_threads):
            return solve_linear(
                a_mat, b, method=self.linear_solver, tol=self.tol,
                maxiter=_maxiter(self, (n - 2) ** 2), x0=x0, grid_n=n, deflation=deflation,
            )

    def _systems(self, a: NDArray[np.float64], f: Any) -> Any:  # pragma: no cover
        raise NotImplementedError

    def _method(self) -> str:  # pragma: no cover
        raise NotImplementedError


def _coefficient_batch(inputs: Any) -> Batch:
    """Validate a nodal coefficient: square node grid with n >= 3, finite, > 0."""
    batch = as_batch(inputs, name="a", core_dims=("x", "y"))
    a = batch.values
    n, ny = a.shape[1:]
    if n != ny or n < 3:
        msg = f"`a` must be on a square n x n node grid with n >= 3; got shape {a.shape[1:]}."
        raise ShapeError(msg)
    if (a <= 0).any():
        first = tuple(int(i) for i in np.argwhere(a <= 0)[0])
        msg = (
            f"`a` must be > 0 everywhere; got {np.count_nonzero(a <= 0)} value(s) <= 0, "
            f"the first {a[first]!r} at index {first}."
        )
        raise InputError(msg)
    return batch


def _as_field(
    values: ArrayLike | None, batch: Batch, *, name: str, broadcast: bool = False
) -> NDArray[np.float64] | None:
    """``initial_guess`` / ``forcing`` as a (n_samples, n, n) float64 array (None passes)."""
    if values is None:
        return None
    arr = np.asarray(getattr(values, "values", values))
    want = batch.values.shape
    if arr.dtype.kind not in "fiu":
        msg = f"`{name}` must be a real array; got dtype {arr.dtype}."
        raise InputError(msg)
    shapes = {want, want[1:]} if broadcast else {want[1:] if batch.single else want}
    if arr.shape not in shapes:
        expected = " or ".join(str(s) for s in sorted(shapes, key=len))
        msg = f"`{name}` must have shape {expected} to match `a`; got {arr.shape}."
        raise ShapeError(msg)
    check_finite(arr, name=name)
    return np.broadcast_to(arr.astype(np.float64), want)


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
        ``"gmg"``, ``"amg"``, ``"cg"`` or ``"direct"``; see :mod:`solvers.darcy`.
    tol
        Relative residual ``||b - A u|| / ||b||`` at which iterative solves stop, in (0, 1).
    maxiter
        Iteration cap (None: 200 for gmg/amg, ``max(1000, 10 (n - 2))`` for cg).
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
        bs = self.batch_size
        if isinstance(bs, bool) or not isinstance(bs, int) or bs < 1:
            msg = f"`batch_size` must be an int >= 1; got {bs!r}."
            raise InputError(msg)

    def _method(self) -> str:
        return f"FD 5-point, {self.averaging} faces; {self.linear_solver} (tol={self.tol:g})"

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
            msg = f"`coefficient` must be > 0; got minimum {coef.min()!r}."
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
