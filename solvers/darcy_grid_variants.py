r"""Darcy solvers on the grids of other tools' datasets (grid variants): cell centres and
``x_i = i/n``.

Both solve the problem of :mod:`solvers.darcy`,

.. math::

    -\nabla\cdot\big(a(x, y)\,\nabla u\big) = f \quad\text{in } (0, 1)^2,
    \qquad u = 0 \text{ on the boundary},

with the coefficient given and the solution returned at the points of another grid
convention (:mod:`solvers.grids`; array axis 0 is ``x``, axis 1 is ``y``).

:class:`DarcyCellFDSolver`
    Cell-centred finite differences (finite volumes) on ``n x n`` cells of width
    ``h = 1/n``, values at the centres ``((i + 1/2) h, (j + 1/2) h)`` (PDEBench's 2D Darcy
    grid). Second order.
:class:`DarcyHalfOpenFDSolver`
    The node-grid :class:`~solvers.darcy.DarcyFDSolver` on ``x_i = i/n``, ``i = 0..n-1``
    (neuraloperator's small Darcy grid): the coefficient is extended to the ``n + 1``-node grid
    by repeating its last row and column (:func:`solvers.grids.extend_half_open`; the boundary
    ``x = 1``, ``y = 1`` is not a sample point), solved there and cut back to ``n x n``.
    Second order.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ._darcy_fd import AVERAGINGS
from ._darcy_linear import solve_linear
from ._darcy_solver_base import _blas_limit, _check_choice, _check_common, _maxiter
from .contract import SolveReport, SolverInput, SolverOutput
from .darcy import DarcyFDSolver
from .darcy_inputs import coefficient_batch, nodal_field, system_inputs
from .errors import ConvergenceError
from .grids import extend_half_open

__all__ = ["CELL_LINEAR_SOLVERS", "DarcyCellFDSolver", "DarcyHalfOpenFDSolver",
           "assemble_cells"]

#: Linear solvers of :class:`DarcyCellFDSolver` (the first is the default).
CELL_LINEAR_SOLVERS = ("direct", "amg", "cg")


def assemble_cells(a: NDArray[np.float64], *, averaging: str = "harmonic") -> sp.csr_matrix:
    r"""The cell-centred 5-point operator of one coefficient, scaled by ``h^2``.

    Unknowns are all ``n x n`` cell values, numbered x-major (the order of ``u.ravel()``).
    Row ``P``:

    .. math::

        \sum_{\text{faces } f \text{ of } P} a_f\,(u_P - u_{N_f}) = h^2 f_P ,

    where ``N_f`` is the neighbour across the face and ``a_f`` the harmonic (default) or
    arithmetic mean of the two cell values. Across a boundary face the neighbour is a ghost
    cell, the reflection ``u_g = -u_P`` (so that ``u = 0`` midway, on the boundary) with
    ``a_g = a_P``: the face contributes ``2 a_P u_P``. The matrix is symmetric positive
    definite.

    Parameters
    ----------
    a : (n, n) array
        Cell values of the coefficient, > 0.
    averaging
        ``"harmonic"`` or ``"arithmetic"``.

    Returns
    -------
    (n^2, n^2) CSR matrix.
    """
    n = a.shape[0]
    if averaging == "harmonic":
        ax = 2.0 * a[:-1] * a[1:] / (a[:-1] + a[1:])
        ay = 2.0 * a[:, :-1] * a[:, 1:] / (a[:, :-1] + a[:, 1:])
    else:
        ax = 0.5 * (a[:-1] + a[1:])
        ay = 0.5 * (a[:, :-1] + a[:, 1:])
    diag = np.zeros((n, n))
    diag[:-1] += ax
    diag[1:] += ax
    diag[:, :-1] += ay
    diag[:, 1:] += ay
    # Ghost reflection across the four sides of the square.
    diag[0] += 2.0 * a[0]
    diag[-1] += 2.0 * a[-1]
    diag[:, 0] += 2.0 * a[:, 0]
    diag[:, -1] += 2.0 * a[:, -1]
    idx = np.arange(n * n).reshape(n, n)
    rows = [idx.ravel(), idx[:-1].ravel(), idx[1:].ravel(), idx[:, :-1].ravel(),
            idx[:, 1:].ravel()]
    cols = [idx.ravel(), idx[1:].ravel(), idx[:-1].ravel(), idx[:, 1:].ravel(),
            idx[:, :-1].ravel()]
    vals = [diag.ravel(), -ax.ravel(), -ax.ravel(), -ay.ravel(), -ay.ravel()]
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(n * n, n * n))


@dataclass(frozen=True, kw_only=True)
class DarcyCellFDSolver:
    """Cell-centred finite-difference Darcy solver (PDEBench's grid).

    The coefficient and the solution are cell values at the centres
    ``x_i = (i + 1/2)/n`` of ``n x n`` cells of width ``h = 1/n``; the discretisation is
    :func:`assemble_cells` (5-point, face coefficients the harmonic mean of the two cells, the
    boundary half-cell closed by ghost reflection). The reflection has a first-order local
    truncation error in the boundary cells only, and the scheme converges at second order in
    the discrete L2 norm (tested). For a constant coefficient and ``f = 2 pi^2 a
    sin(pi x) sin(pi y)`` the discrete solution is exactly ``c_h sin(pi x) sin(pi y)`` at the
    centres with ``c_h = (pi h / 2)^2 / sin(pi h / 2)^2`` (the sine is an eigenvector of the
    reflected stencil), which the tests check to round-off.

    Parameters
    ----------
    forcing
        Constant right-hand side ``f``.
    averaging
        Face averaging, ``"harmonic"`` (default) or ``"arithmetic"``.
    linear_solver
        ``"direct"`` (SuperLU, default), ``"amg"`` (CG + pyamg) or ``"cg"`` (Jacobi CG).
    tol
        Relative residual ``||b - A u|| / ||b||`` at which iterative solves stop, in (0, 1);
        also checked after a direct solve.
    maxiter
        Iteration cap of iterative solves (None: 200 for amg, ``max(1000, 10 n)`` for cg).
    blas_threads
        BLAS/OpenMP threads during the linear solve (None: the process setting).

    Examples
    --------
    >>> import numpy as np
    >>> u = DarcyCellFDSolver().solve(np.ones((32, 32)))
    >>> u.shape, round(float(u.max()), 4)
    ((32, 32), 0.0736)
    """

    problem: ClassVar[str] = "darcy"
    #: The grid convention of inputs and outputs (:mod:`solvers.grids`).
    grid: ClassVar[str] = "cell-centred"

    forcing: float = 1.0
    averaging: str = "harmonic"
    linear_solver: str = "direct"
    tol: float = 1e-10
    maxiter: int | None = None
    blas_threads: int | None = 1

    def __post_init__(self) -> None:
        _check_choice(self.linear_solver, name="linear_solver", valid=CELL_LINEAR_SOLVERS)
        _check_common(self)
        _check_choice(self.averaging, name="averaging", valid=AVERAGINGS)

    @property
    def config(self) -> dict[str, Any]:
        """JSON-serialisable settings; ``type(self)(**config)`` rebuilds the solver."""
        return dataclasses.asdict(self)

    def solve(self, inputs: SolverInput, *, initial_guess: ArrayLike | None = None,
              forcing: ArrayLike | None = None) -> SolverOutput:
        """Solve for each coefficient sample; see :meth:`solve_with_report`."""
        return self.solve_with_report(inputs, initial_guess=initial_guess, forcing=forcing)[0]

    def solve_with_report(self, inputs: SolverInput, *, initial_guess: ArrayLike | None = None,
                          forcing: ArrayLike | None = None
                          ) -> tuple[SolverOutput, SolveReport]:
        """Solve for each coefficient sample and report per-sample convergence.

        Parameters
        ----------
        inputs : (n_samples, n, n) or (n, n) array, or xarray.DataArray
            Cell values of ``a``, dims ``("sample", "x", "y")`` or ``("x", "y")``; finite,
            > 0; ``n >= 1``.
        initial_guess : array of the shape of ``inputs``, or None
            Starting iterate of the iterative solvers.
        forcing : (n, n) or (n_samples, n, n) array, or None
            Cell values of ``f`` overriding ``self.forcing`` (not stored in :attr:`config`).

        Returns
        -------
        u
            Cell values of the solution in the form of ``inputs``.
        report : SolveReport
            Per-sample iterations (1 for ``"direct"``), relative residual and wall time (s).

        Raises
        ------
        ShapeError, InputError
            Bad shapes, non-finite values, a coefficient <= 0.
        ConvergenceError
            A sample misses ``tol``.
        """
        batch, guess, f = system_inputs(inputs, initial_guess, forcing,
                                        default_forcing=self.forcing, minimum=1, grid="grid")
        a = batch.values
        n_samples, n, _ = a.shape
        h2 = 1.0 / n**2
        u = np.zeros_like(a)
        iterations = np.zeros(n_samples, dtype=np.int64)
        residual = np.zeros(n_samples)
        times = np.zeros(n_samples)
        maxiter = _maxiter(self, n * n)
        for s in range(n_samples):
            t0 = time.perf_counter()
            mat = assemble_cells(a[s], averaging=self.averaging)
            with _blas_limit(self.blas_threads):
                x, its, res = solve_linear(
                    mat, h2 * f[s].ravel(), method=self.linear_solver, tol=self.tol,
                    maxiter=maxiter, x0=None if guess is None else guess[s].ravel())
            times[s] = time.perf_counter() - t0
            if not res <= self.tol:
                msg = (f"DarcyCellFDSolver(linear_solver={self.linear_solver!r}): sample {s} "
                       f"missed the tolerance: relative residual {res:.3e} > tol "
                       f"{self.tol:.1e} after {its} iterations. Raise `maxiter` or use "
                       "linear_solver='direct'.")
                raise ConvergenceError(msg)
            u[s] = x.reshape(n, n)
            iterations[s], residual[s] = its, res
        report = SolveReport(iterations=iterations, residual=residual, solve_time=times,
                             method=f"cell-centred FD 5-point, {self.averaging} faces, ghost "
                                    f"reflection; {self.linear_solver} (tol={self.tol:g})")
        return batch.restore(u, name="u"), report


@dataclass(frozen=True, kw_only=True)
class DarcyHalfOpenFDSolver(DarcyFDSolver):
    """The 5-point FD solver on the grid ``x_i = i/n``, ``i = 0..n-1`` (neuraloperator's).

    The ``n x n`` points are the node grid of ``n + 1`` nodes without its last row and column
    (``x = 1`` or ``y = 1``). The coefficient is extended to those nodes by repeating its last
    row and column, :class:`~solvers.darcy.DarcyFDSolver` solves on the ``n + 1`` nodes (its
    settings are this solver's), and the solution is cut back to ``n x n``: zero on the first
    row and column (``x = 0``, ``y = 0``), not on the last. Second order, as the node solver.

    Examples
    --------
    >>> import numpy as np
    >>> u = DarcyHalfOpenFDSolver().solve(np.ones((32, 32)))
    >>> u.shape, round(float(u.max()), 4), float(u[0].max())
    ((32, 32), 0.0736, 0.0)
    """

    grid: ClassVar[str] = "half-open"

    def node_solver(self) -> DarcyFDSolver:
        """The node-grid solver with these settings (on the ``n + 1``-node grid)."""
        return DarcyFDSolver(**self.config)

    def solve_with_report(self, inputs: SolverInput, *, initial_guess: ArrayLike | None = None,
                          forcing: ArrayLike | None = None
                          ) -> tuple[SolverOutput, SolveReport]:
        """Solve for each coefficient sample given at ``x_i = i/n`` (``n >= 2``).

        As :meth:`solvers.darcy.DarcyFDSolver.solve_with_report`, with inputs, guess, forcing
        and solution at the ``n x n`` points ``(i/n, j/n)``.
        """
        batch = coefficient_batch(inputs, minimum=2, grid="grid")
        guess = nodal_field(initial_guess, batch, name="initial_guess")
        f = None if forcing is None else nodal_field(forcing, batch, name="forcing",
                                                   broadcast=True)
        u, report = self.node_solver().solve_with_report(
            extend_half_open(batch.values), initial_guess=extend_half_open(guess),
            forcing=extend_half_open(f))
        return batch.restore(np.asarray(u)[:, :-1, :-1], name="u"), report

    def systems(self, inputs: SolverInput) -> list[tuple[sp.csr_matrix, NDArray[np.float64]]]:
        """The node-grid systems of the extended coefficients (``(n - 1)^2`` unknowns each)."""
        a = coefficient_batch(inputs, minimum=2, grid="grid").values
        return self.node_solver().systems(extend_half_open(a))
