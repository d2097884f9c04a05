"""The base of the Darcy node-grid solvers: the solver contract shared by the FD and FEM
solvers and the settings checks of the grid variants (private).

Input checks, the per-sample solve loop with its convergence check and report, and the
public :meth:`_DarcyGridSolver.systems` / :meth:`_DarcyGridSolver.solve_system` that let
callers (warm starts, the inverse solver) reuse exactly the solver's linear algebra.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import time
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from threadpoolctl import ThreadpoolController

from ._darcy_linear import LINEAR_SOLVERS, solve_linear
from .checks import check_choice, check_optional_int, check_real
from .contract import (
    SolveReport,
    SolverInput,
    SolverOutput,
)
from .darcy_inputs import coefficient_batch, nodal_field
from .errors import ConvergenceError

if TYPE_CHECKING:  # pragma: no cover
    import scipy.sparse as sp


def _check_choice(value: str, *, name: str, valid: tuple[str, ...]) -> None:
    check_choice(value, name=name, valid=valid)


def _check_common(solver: Any) -> None:
    """Validate and normalise the settings shared by both solvers (frozen dataclasses)."""
    object.__setattr__(solver, "forcing", check_real(solver.forcing, name="forcing",
                                                     kind="a finite real number"))
    _check_choice(solver.linear_solver, name="linear_solver", valid=LINEAR_SOLVERS)
    object.__setattr__(solver, "tol", check_real(solver.tol, name="tol", low=0.0, high=1.0,
                                                 high_open=True, kind="a relative residual"))
    for name in ("maxiter", "blas_threads"):
        value = check_optional_int(getattr(solver, name), name=name, minimum=1)
        object.__setattr__(solver, name, value)


def _blas_limit(threads: int | None) -> Any:
    """Context limiting BLAS/OpenMP threads during a solve (None: leave them as they are).

    The Krylov iterations work on vectors of (n-2)^2 entries; threaded BLAS gains nothing
    there and was measured 15x slower on a busy 2-core machine (0.18 s -> 3.4 s per 4 samples
    at n = 141), so the solvers use one thread unless told otherwise.
    """
    if threads is None:
        return contextlib.nullcontext()
    return _thread_controller().limit(limits=threads)


_CONTROLLER: list[Any] = []  # [(number of imported modules, ThreadpoolController)]


def _thread_controller() -> Any:
    """The process's ThreadpoolController, found again only after new imports.

    Finding the loaded BLAS/OpenMP libraries scans the process's shared objects (about 3 ms,
    more than a whole small solve); libraries are loaded by imports, so the scan is redone only
    when the number of imported modules changed.
    """
    if not _CONTROLLER or _CONTROLLER[0][0] != len(sys.modules):
        controller = ThreadpoolController()
        _CONTROLLER[:] = [(len(sys.modules), controller)]
    return _CONTROLLER[0][1]


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
        inputs: SolverInput,
        *,
        initial_guess: ArrayLike | None = None,
        forcing: ArrayLike | None = None,
    ) -> SolverOutput:
        """Solve for each coefficient sample; see :meth:`solve_with_report`."""
        return self.solve_with_report(inputs, initial_guess=initial_guess, forcing=forcing)[0]

    def solve_with_report(
        self,
        inputs: SolverInput,
        *,
        initial_guess: ArrayLike | None = None,
        forcing: ArrayLike | None = None,
    ) -> tuple[SolverOutput, SolveReport]:
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
        batch = coefficient_batch(inputs)
        a = batch.values
        n_samples, n, _ = a.shape
        guess = nodal_field(initial_guess, batch, name="initial_guess")
        f = (
            self.forcing
            if forcing is None
            else nodal_field(forcing, batch, name="forcing", broadcast=True)
        )
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

    def systems(self, inputs: SolverInput) -> list[tuple[sp.csr_matrix, NDArray[np.float64]]]:
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
        a = coefficient_batch(inputs).values
        return [sys for _, chunk, _ in self._systems(a, self.forcing) for sys in chunk]

    def solve_system(
        self,
        a_mat: sp.csr_matrix,
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
