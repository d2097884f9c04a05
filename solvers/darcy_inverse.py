"""Darcy coefficient identification: regularised output least squares with adjoint gradients.

Given observations ``u_obs`` of the solution of

.. math::

    -\\nabla\\cdot(a\\nabla u) = f \\text{ in } (0, 1)^2, \\qquad u = 0 \\text{ on the boundary},

on the ``n x n`` node grid ``x_i = i / (n - 1)``, :class:`DarcyInverseSolver` finds the nodal
coefficient ``a > 0`` on the same grid. The forward model ``u = F(a)`` is exactly
:class:`~solvers.darcy.DarcyFDSolver` (5-point stencil, harmonic or arithmetic face means,
second order for smooth ``a``). With ``m = log a`` it minimises

.. math::

    J(m) = \\tfrac12 \\|F(e^m) - u_{obs}\\|_h^2
         + \\alpha\\, h^2 \\sum_{\\text{cells}} \\sqrt{|\\nabla m|^2 + \\varepsilon^2},
    \\qquad \\|v\\|_h^2 = h^2 \\sum_{\\text{interior nodes}} v^2 ,

by L-BFGS-B (box bounds on ``m`` when bounds on ``a`` are known), the gradient from one
adjoint solve with the same symmetric matrix, and stops by the discrepancy principle.

Noise convention (one, used throughout): ``noise_level = ||eta|| / ||u_clean||``, the relative
Euclidean norm of the noise over the **interior** nodes (boundary values are known to be 0 and
are ignored). :func:`paper_noise_to_relative` converts the convention of Cao (2021), pointwise
noise ``epsilon * sigma(x) * N(0, 1)`` with ``sigma`` the pointwise standard deviation of the
training solutions; :func:`add_noise` draws noise in either convention.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.optimize as so
from numpy.typing import ArrayLike, NDArray

from ._contract import as_batch, check_finite
from ._darcy_adjoint import FactorisedSystem, average_pool_nodes, misfit_gradient, smoothed_tv
from ._darcy_fd import AVERAGINGS, assemble_fd
from ._darcy_linear import LINEAR_SOLVERS
from .errors import ConvergenceError, InputError, ShapeError

__all__ = [
    "DarcyInverseSolver",
    "InverseSolveReport",
    "add_noise",
    "coefficient_errors",
    "paper_noise_to_relative",
    "pool_coefficient",
]

Array = NDArray[np.float64]
STOP_REASONS = ("discrepancy", "misfit_tol", "stationary", "maxiter", "stalled")
_SAFEGUARD = np.log(1e6)  # without bounds, m stays within log(a0) +- log(1e6)


@dataclass(frozen=True, kw_only=True)
class InverseSolveReport:
    """Per-sample diagnostics of one :meth:`DarcyInverseSolver.solve_with_report` call.

    Every array has one entry per sample. ``iterations``, ``residual`` and ``solve_time`` carry
    the names of :class:`~solvers.SolveReport` fields, so code that reads those keeps working.

    Attributes
    ----------
    iterations : int array
        L-BFGS-B iterations (0: the initial guess already met the stopping rule).
    forward_solves, adjoint_solves, pde_solves : int arrays
        Linear PDE solves: forward, adjoint, and their sum (one of each per evaluation of
        the objective, including the evaluation at the initial guess).
    residual : float array
        Final relative misfit ``||F(a) - u_obs|| / ||u_obs||`` over the interior nodes.
    regularization : float array
        Final regularisation term ``alpha * TV`` of the objective.
    solve_time : float array
        Wall time per sample in seconds.
    stop_reason : str array
        ``"discrepancy"`` (misfit <= tau * delta), ``"misfit_tol"`` (noise-free data:
        relative misfit <= misfit_tol), ``"stationary"`` (L-BFGS-B converged before the misfit
        target), ``"maxiter"`` (iteration or evaluation cap), ``"stalled"`` (line search failed).
    method : str
    """

    iterations: NDArray[np.int64]
    forward_solves: NDArray[np.int64]
    adjoint_solves: NDArray[np.int64]
    pde_solves: NDArray[np.int64]
    residual: Array
    regularization: Array
    solve_time: Array
    stop_reason: NDArray[np.str_]
    method: str = ""

    def __post_init__(self) -> None:
        names = ("iterations", "forward_solves", "adjoint_solves", "pde_solves", "residual",
                 "regularization", "solve_time", "stop_reason")
        sizes = {name: len(getattr(self, name)) for name in names}
        if len(set(sizes.values())) != 1:
            msg = f"InverseSolveReport fields must have one entry per sample; got {sizes}."
            raise InputError(msg)

    @classmethod
    def concatenate(cls, reports: Sequence[InverseSolveReport]) -> InverseSolveReport:
        """Join the reports of consecutive chunks of samples."""
        if not reports:
            msg = "`reports` must hold at least one InverseSolveReport; got none."
            raise InputError(msg)
        fields = {name: np.concatenate([getattr(r, name) for r in reports]) for name in (
            "iterations", "forward_solves", "adjoint_solves", "pde_solves", "residual",
            "regularization", "solve_time", "stop_reason")}
        return cls(**fields, method=reports[0].method)


def _real(value: Any, *, name: str, low: float = 0.0, strict: bool = True) -> float:
    """``value`` as a finite float > low (or >= low when not strict), else InputError."""
    ok = not isinstance(value, bool) and isinstance(value, int | float) and np.isfinite(value)
    if ok:
        ok = value > low if strict else value >= low
    if not ok:
        msg = f"`{name}` must be a finite number {'>' if strict else '>='} {low:g}; got {value!r}."
        raise InputError(msg)
    return float(value)


@dataclass(frozen=True, kw_only=True)
class DarcyInverseSolver:
    """Recover the nodal Darcy coefficient from observations of the solution.

    Minimises over ``m = log a`` (see :mod:`solvers.darcy_inverse` for the objective)

    ``J(m) = 0.5 ||F(e^m) - u_obs||_h^2 + alpha TV_eps(m)``, ``alpha = beta ||u_obs||_h^2``,

    where ``F`` is :class:`~solvers.darcy.DarcyFDSolver`'s 5-point discretisation, ``||.||_h``
    the ``h^2``-weighted sum over interior nodes, and ``TV_eps`` the smoothed total variation
    of :func:`solvers._darcy_adjoint.smoothed_tv` (``h^2`` times a sum over cells; second-order
    consistent forward model, first-order TV quadrature). ``beta`` (``regularization``) is
    dimensionless: scaling ``f`` and ``u_obs`` together leaves the minimiser unchanged. The
    gradient is the discrete adjoint (one extra solve with the same matrix and preconditioner),
    chained through the face averaging and ``a = e^m``; L-BFGS-B iterates on ``m``.

    Stopping rule (checked at the initial guess and after every L-BFGS-B iteration):
    with ``noise_level > 0``, the discrepancy principle ``||F(a) - u_obs|| <= tau * delta``,
    ``delta = noise_level * ||u_obs|| / sqrt(1 + noise_level^2)`` (the expected noise norm,
    as ``E||u_obs||^2 = (1 + noise_level^2) ||u_clean||^2``; norms over interior nodes); with
    ``noise_level = 0``, ``||F(a) - u_obs|| <= misfit_tol * ||u_obs||``; otherwise
    ``maxiter`` iterations, L-BFGS-B convergence or a failed line search.

    Identifiability: the data see ``a`` only through the face means, so the four corner nodes
    are set by the regulariser alone and the other boundary nodes only through the faces to
    their interior neighbours; near the maximum of ``u`` (``grad u = 0``) the data constrain
    ``a`` weakly. The TV term fills these in from the neighbours.

    Parameters
    ----------
    forcing
        Constant right-hand side ``f`` of the forward model (benchmark: 1).
    averaging
        Face averaging of the forward model, ``"harmonic"`` (default) or ``"arithmetic"``.
    linear_solver
        ``"gmg"`` (default), ``"amg"``, ``"cg"`` or ``"direct"``, as in
        :class:`~solvers.darcy.DarcyFDSolver`; iterative solves are warm-started from the
        previous evaluation's forward and adjoint states.
    tol
        Relative residual of the linear solves, in (0, 1).
    regularization
        ``beta >= 0``; None uses :meth:`default_regularization` of the noise level.
    tv_smoothing
        ``epsilon > 0`` of the TV term, in units of ``log a`` per unit length.
    bounds
        ``(lower, upper)`` known bounds on ``a`` (``0 < lower < upper``), enforced as box
        bounds on ``m``; None: no bounds (``m`` is kept within ``log(1e6)`` of the initial
        guess, a safeguard against overflow that sensible data never reach).
    noise_level
        Relative noise level ``||eta|| / ||u_clean||`` (interior nodes), >= 0; may be
        overridden per sample in :meth:`solve`.
    tau
        Discrepancy factor, >= 1.
    misfit_tol
        Relative misfit target for noise-free data, in (0, 1).
    maxiter
        L-BFGS-B iteration cap (evaluations are capped at ``2 * maxiter + 20``).
    memory
        L-BFGS-B correction pairs.

    Examples
    --------
    >>> from solvers import DarcyFDSolver
    >>> a_true = np.full((17, 17), 4.0)
    >>> u = DarcyFDSolver().solve(a_true)
    >>> a, report = DarcyInverseSolver().solve_with_report(u)
    >>> round(float(np.abs(a - a_true).max()), 6), report.stop_reason.tolist()
    (0.0, ['misfit_tol'])
    """

    forcing: float = 1.0
    averaging: str = "harmonic"
    linear_solver: str = "gmg"
    tol: float = 1e-10
    regularization: float | None = None
    tv_smoothing: float = 1.0
    bounds: tuple[float, float] | None = None
    noise_level: float = 0.0
    tau: float = 1.1
    misfit_tol: float = 1e-3
    maxiter: int = 200
    memory: int = 10

    def __post_init__(self) -> None:
        forcing = _real(self.forcing, name="forcing", low=-np.inf)
        if forcing == 0.0:
            msg = "`forcing` must be nonzero (f = 0 gives u = 0 for every a); got 0.0."
            raise InputError(msg)
        for name, valid in (("averaging", AVERAGINGS), ("linear_solver", LINEAR_SOLVERS)):
            if getattr(self, name) not in valid:
                msg = f"`{name}` must be one of {', '.join(map(repr, valid))}; got {getattr(self, name)!r}."
                raise InputError(msg)
        tol = _real(self.tol, name="tol")
        if tol >= 1.0:
            msg = f"`tol` must be a relative residual in (0, 1); got {self.tol!r}."
            raise InputError(msg)
        values = {
            "forcing": forcing, "tol": tol,
            "tv_smoothing": _real(self.tv_smoothing, name="tv_smoothing"),
            "noise_level": _real(self.noise_level, name="noise_level", strict=False),
            "tau": _real(self.tau, name="tau", low=1.0, strict=False),
            "misfit_tol": _real(self.misfit_tol, name="misfit_tol"),
        }
        if self.regularization is not None:
            values["regularization"] = _real(self.regularization, name="regularization", strict=False)
        for name in ("maxiter", "memory"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                msg = f"`{name}` must be an int >= 1; got {v!r}."
                raise InputError(msg)
        if self.bounds is not None:
            b = self.bounds
            ok = isinstance(b, tuple | list) and len(b) == 2
            ok = ok and all(not isinstance(v, bool) and isinstance(v, int | float) for v in b)
            if not ok or not (np.isfinite(b[0]) and np.isfinite(b[1]) and 0 < b[0] < b[1]):
                msg = f"`bounds` must be None or (lower, upper) with 0 < lower < upper, both finite; got {b!r}."
                raise InputError(msg)
            values["bounds"] = (float(b[0]), float(b[1]))
        for name, v in values.items():
            object.__setattr__(self, name, v)

    @staticmethod
    def default_regularization(noise_level: float) -> float:
        """Default ``beta`` for a relative noise level: ``2e-3 * max(noise_level, 0.01)``.

        Tuned on the two-phase benchmark (``a in {3, 12}``, ``f = 1``) at n = 85 and 141
        (docs/methods/darcy_inverse.md); independent of ``n`` because both terms of ``J``
        are quadratures.
        """
        return 2e-3 * max(float(noise_level), 0.01)

    @property
    def method(self) -> str:
        return (f"L-BFGS-B on log a, smoothed TV; FD 5-point {self.averaging} faces, "
                f"{self.linear_solver} (tol={self.tol:g})")

    def objective(self, a: ArrayLike, u_obs: ArrayLike) -> tuple[float, Array]:
        """Value of ``J`` and its gradient with respect to the nodal coefficient ``a``.

        Uses the configured weight (``regularization``, or the default for ``noise_level``).

        Parameters
        ----------
        a : (n, n) array
            Nodal coefficient, finite and > 0.
        u_obs : (n, n) array
            Observations on the same node grid (boundary values ignored).

        Returns
        -------
        value : float
        gradient : (n, n) array
            ``dJ/da`` by the discrete adjoint (corner nodes: regulariser only).
        """
        obs = self._observations(u_obs, single=True)
        a_arr = self._coefficient(a, want=obs.values.shape[1:], name="a")
        problem = _Sample(self, obs.values[0], self.noise_level)
        ev = problem.evaluate(np.log(a_arr), warm=False)
        return ev.value, ev.grad / a_arr

    def solve(self, u_obs: Any, *, initial_guess: Any = None, noise_level: Any = None) -> Any:
        """The coefficient for each observation; see :meth:`solve_with_report`."""
        return self.solve_with_report(u_obs, initial_guess=initial_guess, noise_level=noise_level)[0]

    def solve_with_report(
        self, u_obs: Any, *, initial_guess: Any = None, noise_level: Any = None
    ) -> tuple[Any, InverseSolveReport]:
        """Invert each observation and report per-sample diagnostics.

        Parameters
        ----------
        u_obs : (n_samples, n, n) or (n, n) array, or xarray.DataArray
            Observed solution on the node grid, dims ``("sample", "x", "y")`` or
            ``("x", "y")``; finite, ``n >= 3``, not identically 0 on the interior.
        initial_guess : array of the shape of ``u_obs``, or None
            Starting coefficient (e.g. a surrogate prediction), > 0 and within ``bounds``.
            None: the constant ``c`` that fits ``u_obs`` best in least squares
            (``F(c) = F(1) / c``, one extra solve per grid size), clipped into ``bounds``.
        noise_level : float or (n_samples,) array, or None
            Relative noise level per sample, overriding ``self.noise_level``.

        Returns
        -------
        a
            Coefficient on the node grid, in the form of ``u_obs`` (DataArray named ``"a"``).
        report : InverseSolveReport

        Raises
        ------
        ShapeError
            Wrong dims, non-square grid or ``n < 3``, mismatched ``initial_guess`` or
            ``noise_level`` shape.
        InputError
            NaN/inf, ``u_obs`` zero on the interior, non-positive or out-of-bounds
            ``initial_guess``, negative ``noise_level``.
        ConvergenceError
            If a linear solve misses ``tol``.
        """
        batch = self._observations(u_obs, single=False)
        u = batch.values
        s, n, _ = u.shape
        guess = None
        if initial_guess is not None:
            want = u.shape[1:] if batch.single else u.shape
            guess = self._coefficient(initial_guess, want=want, name="initial_guess").reshape(u.shape)
        levels = self._noise_levels(noise_level, s)
        out = np.empty_like(u)
        rows: list[tuple[Any, ...]] = []
        for k in range(s):
            t0 = time.perf_counter()
            problem = _Sample(self, u[k], float(levels[k]), index=k)
            m0 = self._start(problem, None if guess is None else guess[k])
            m, its, reason, ev = problem.minimise(m0)
            out[k] = np.exp(m)
            rows.append((its, problem.forward, problem.adjoint, problem.forward + problem.adjoint,
                         ev.misfit / problem.d_norm, ev.regularization,
                         time.perf_counter() - t0, reason))
        cols = list(zip(*rows, strict=True))
        report = InverseSolveReport(
            iterations=np.array(cols[0], dtype=np.int64),
            forward_solves=np.array(cols[1], dtype=np.int64),
            adjoint_solves=np.array(cols[2], dtype=np.int64),
            pde_solves=np.array(cols[3], dtype=np.int64),
            residual=np.array(cols[4]), regularization=np.array(cols[5]),
            solve_time=np.array(cols[6]), stop_reason=np.array(cols[7], dtype=str),
            method=self.method,
        )
        return batch.restore(out, name="a"), report

    # -- validation helpers -------------------------------------------------------------
    def _observations(self, u_obs: Any, *, single: bool) -> Any:
        batch = as_batch(u_obs, name="u_obs", core_dims=("x", "y"))
        values = batch.values
        n, ny = values.shape[1:]
        if single and not batch.single:
            msg = f"`u_obs` must be one sample of shape (n, n); got shape {values.shape}."
            raise ShapeError(msg)
        if n != ny or n < 3:
            msg = f"`u_obs` must be on a square n x n node grid with n >= 3; got shape {values.shape[1:]}."
            raise ShapeError(msg)
        zero = ~np.any(values[:, 1:-1, 1:-1], axis=(1, 2))
        if zero.any():
            msg = (f"`u_obs` must not be identically 0 on the interior nodes (no information "
                   f"about a); got zero data in sample {int(np.argmax(zero))}.")
            raise InputError(msg)
        return batch

    def _coefficient(self, a: Any, *, want: tuple[int, ...], name: str) -> Array:
        arr = np.asarray(getattr(a, "values", a))
        if arr.dtype.kind not in "fiu":
            msg = f"`{name}` must be a real array; got dtype {arr.dtype}."
            raise InputError(msg)
        if arr.shape != tuple(want):
            msg = f"`{name}` must have shape {tuple(want)} to match `u_obs`; got {arr.shape}."
            raise ShapeError(msg)
        check_finite(arr, name=name)
        arr = arr.astype(np.float64)
        if (arr <= 0).any():
            msg = f"`{name}` must be > 0 everywhere; got minimum {arr.min()!r}."
            raise InputError(msg)
        if self.bounds is not None and name == "initial_guess":
            lo, hi = self.bounds
            if arr.min() < lo or arr.max() > hi:
                msg = (f"`initial_guess` must lie within `bounds` {self.bounds}; got values in "
                       f"[{arr.min():g}, {arr.max():g}].")
                raise InputError(msg)
        return arr

    def _noise_levels(self, noise_level: Any, n_samples: int) -> Array:
        if noise_level is None:
            return np.full(n_samples, self.noise_level)
        levels = np.asarray(noise_level, dtype=np.float64)
        if levels.ndim == 0:
            levels = np.full(n_samples, float(levels))
        if levels.shape != (n_samples,):
            msg = (f"`noise_level` must be a number or have shape ({n_samples},), one per "
                   f"sample; got shape {levels.shape}.")
            raise ShapeError(msg)
        if not np.all(np.isfinite(levels)) or (levels < 0).any():
            msg = f"`noise_level` must be finite and >= 0; got {levels.tolist()}."
            raise InputError(msg)
        return levels

    def _start(self, problem: _Sample, guess: Array | None) -> Array:
        if guess is not None:
            return np.log(guess)
        u1 = problem.unit_solution()
        c = float(u1 @ u1) / float(u1 @ problem.d)  # argmin_c ||u1 / c - d||
        c = c if c > 0 else 1.0
        if self.bounds is not None:
            c = min(max(c, self.bounds[0]), self.bounds[1])
        return np.full((problem.n, problem.n), np.log(c))


@dataclass(frozen=True)
class _Evaluation:
    value: float
    grad: Array
    misfit: float  # ||F(a) - d|| over interior nodes (Euclidean, no h)
    regularization: float


class _Sample:
    """One inversion: data, weights, warm-start states and solve counters."""

    def __init__(self, solver: DarcyInverseSolver, u_obs: Array, noise_level: float,
                 index: int = 0) -> None:
        self.solver, self.index = solver, index
        self.n = n = u_obs.shape[0]
        self.h2 = 1.0 / (n - 1) ** 2
        self.d = u_obs[1:-1, 1:-1].ravel()
        self.d_norm = float(np.linalg.norm(self.d))
        beta = solver.regularization
        beta = solver.default_regularization(noise_level) if beta is None else beta
        self.alpha = beta * self.h2 * self.d_norm**2
        self.b = np.full((n - 2) ** 2, self.h2 * solver.forcing)
        if noise_level > 0:
            delta = noise_level * self.d_norm / np.sqrt(1.0 + noise_level**2)
            self.target, self.reason = solver.tau * delta, "discrepancy"
        else:
            self.target, self.reason = solver.misfit_tol * self.d_norm, "misfit_tol"
        self.forward = self.adjoint = 0
        self._states: tuple[Array | None, Array | None] = (None, None)
        self._cache: dict[bytes, _Evaluation] = {}

    def _linear(self, system: FactorisedSystem, rhs: Array, x0: Array | None) -> Array:
        x, its, res = system.solve(rhs, x0)
        if not res <= self.solver.tol:
            msg = (f"DarcyInverseSolver(linear_solver={self.solver.linear_solver!r}): sample "
                   f"{self.index} missed the tolerance: relative residual {res:.3e} > tol "
                   f"{self.solver.tol:.1e} after {its} iterations.")
            raise ConvergenceError(msg)
        return x

    def unit_solution(self) -> Array:
        """Interior solution for ``a = 1`` (one forward solve, counted)."""
        system = self._system(np.ones((self.n, self.n)))
        self.forward += 1
        return self._linear(system, self.b, None)

    def _system(self, a: Array) -> FactorisedSystem:
        a_mat = assemble_fd(a[None], averaging=self.solver.averaging)[0]
        return FactorisedSystem(a_mat, method=self.solver.linear_solver, n=self.n, tol=self.solver.tol)

    def evaluate(self, m: Array, *, warm: bool = True) -> _Evaluation:
        """``J``, ``dJ/dm``, misfit and regularisation at ``m`` (one forward + one adjoint)."""
        key = m.tobytes()
        if key in self._cache:
            return self._cache[key]
        n, s = self.n, self.solver
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
        grad = a * misfit_gradient(a, full_u, full_lam, averaging=s.averaging)
        tv, tv_grad = smoothed_tv(m, smoothing=s.tv_smoothing)
        misfit = float(np.linalg.norm(r))
        ev = _Evaluation(value=0.5 * self.h2 * misfit**2 + self.alpha * tv,
                         grad=grad + self.alpha * tv_grad, misfit=misfit,
                         regularization=self.alpha * tv)
        if len(self._cache) >= 4:
            self._cache.pop(next(iter(self._cache)))
        self._cache[key] = ev
        return ev

    def minimise(self, m0: Array) -> tuple[Array, int, str, _Evaluation]:
        """Run L-BFGS-B from ``m0``; returns ``m``, iterations, stop reason, final evaluation."""
        ev0 = self.evaluate(m0)
        if ev0.misfit <= self.target:
            return m0, 0, self.reason, ev0
        scale = 0.5 * self.h2 * self.d_norm**2  # J / scale ~ (relative misfit)^2: O(1) steps
        shape = m0.shape

        def fun(x: Array) -> tuple[float, Array]:
            ev = self.evaluate(x.reshape(shape))
            return ev.value / scale, ev.grad.ravel() / scale

        def callback(intermediate_result: so.OptimizeResult) -> None:
            if self.evaluate(intermediate_result.x.reshape(shape)).misfit <= self.target:
                raise StopIteration

        if self.solver.bounds is not None:
            lo, hi = np.log(self.solver.bounds[0]), np.log(self.solver.bounds[1])
        else:
            lo, hi = m0.min() - _SAFEGUARD, m0.max() + _SAFEGUARD
        res = so.minimize(
            fun, m0.ravel(), jac=True, method="L-BFGS-B", bounds=so.Bounds(lo, hi),
            callback=callback,
            options={"maxiter": self.solver.maxiter, "maxfun": 2 * self.solver.maxiter + 20,
                     "maxcor": self.solver.memory, "ftol": 1e-13, "gtol": 1e-12},
        )
        m = res.x.reshape(shape)
        ev = self.evaluate(m)
        if ev.misfit <= self.target:
            reason = self.reason
        elif res.status == 0:
            reason = "stationary"
        elif res.status == 1:
            reason = "maxiter"
        else:
            reason = "stalled"
        return m, int(res.nit), reason, ev


# -- noise conventions and error metrics --------------------------------------------------
def _fields(values: Any, *, name: str) -> Array:
    arr = np.asarray(getattr(values, "values", values))
    if arr.dtype.kind not in "fiu" or arr.ndim not in (2, 3) or arr.shape[-1] != arr.shape[-2]:
        msg = (f"`{name}` must be a real array of shape (n_samples, n, n) or (n, n); got "
               f"{arr.dtype} array of shape {arr.shape}.")
        raise ShapeError(msg)
    check_finite(arr, name=name)
    return arr.astype(np.float64)


def paper_noise_to_relative(
    epsilon: float, solutions: ArrayLike, *, observed: ArrayLike | None = None,
    std_offset: float = 1e-5,
) -> float | Array:
    """Relative noise level of the paper's pointwise noise ``epsilon (sigma(x) + c) N(0, 1)``.

    Cao (2021) perturbs the (normalised) inverse-problem input, which amounts to adding
    ``epsilon * (sigma(x) + c) * z(x)``, ``z`` i.i.d. standard normal, to the solution, where
    ``sigma`` is the pointwise population standard deviation (ddof 0) of the training
    solutions and ``c = 1e-5`` the normaliser's offset. Its expected squared norm over the
    interior nodes is ``epsilon^2 ||sigma + c||^2``, so the relative level is

    ``level = epsilon * ||sigma + c|| / ||u||`` (interior nodes).

    Parameters
    ----------
    epsilon
        The paper's noise factor (0, 0.01, 0.1), >= 0.
    solutions : (n_samples, n, n) or (n, n) array
        Training solutions (``sigma`` is their pointwise std over samples), or the
        pointwise std field ``sigma`` itself.
    observed : (k, n, n) or (n, n) array, or None
        Solutions whose per-sample level is wanted (the clean solutions, or the noisy
        observations, which overstate ``||u||`` by ``sqrt(1 + level^2)``: 0.5 % at 10 %).
    std_offset
        ``c`` (0 for the plain ``epsilon * sigma`` convention).

    Returns
    -------
    float or (k,) array
        Without ``observed``: the dataset-averaged level
        ``epsilon * rms(sigma + c) / rms(u)`` with both root mean squares over the interior
        nodes (and the training samples). With ``observed``: one level per observed sample
        (a (n, n) ``observed`` gives a float).
    """
    eps = _real(epsilon, name="epsilon", strict=False)
    offset = _real(std_offset, name="std_offset", strict=False)
    sol = _fields(solutions, name="solutions")
    if sol.ndim == 3 and len(sol) < 2:
        msg = f"`solutions` must hold >= 2 samples to estimate a std; got shape {sol.shape}."
        raise ShapeError(msg)
    sigma = (sol.std(axis=0) if sol.ndim == 3 else sol)[1:-1, 1:-1] + offset
    if observed is None:
        if sol.ndim == 2:
            msg = ("`observed` must be given when `solutions` is a std field (n, n): the "
                   "relative level needs ||u||; got None.")
            raise InputError(msg)
        return eps * float(np.sqrt(np.mean(sigma**2) / np.mean(sol[:, 1:-1, 1:-1] ** 2)))
    obs = _fields(observed, name="observed")
    if obs.shape[-1] != sigma.shape[-1] + 2:
        msg = f"`observed` must be on the grid of `solutions` ({sol.shape[-1]}); got {obs.shape}."
        raise ShapeError(msg)
    norms = np.linalg.norm(obs[..., 1:-1, 1:-1], axis=(-2, -1))
    if not np.all(norms > 0):
        msg = "`observed` must not be identically 0 on the interior nodes."
        raise InputError(msg)
    levels = eps * float(np.linalg.norm(sigma)) / norms
    return float(levels) if obs.ndim == 2 else levels


def add_noise(
    u: ArrayLike, level: float, *, rng: np.random.Generator, std_field: ArrayLike | None = None
) -> Array:
    """Add Gaussian noise to the interior nodes of solutions (boundary values unchanged).

    Parameters
    ----------
    u : (n_samples, n, n) or (n, n) array
        Clean solutions.
    level
        Without ``std_field``: the relative level; each sample gets
        ``level * ||u_k|| / sqrt(N) * z`` (``N`` interior nodes), so ``E||eta||^2 =
        level^2 ||u_k||^2``. With ``std_field``: the paper's ``epsilon``; the noise is
        ``epsilon * std_field(x) * z`` (pass ``sigma + 1e-5`` to match Cao 2021).
    rng
        Source of ``z ~ N(0, 1)``, i.i.d. over nodes and samples.
    std_field : (n, n) array or None
        Pointwise noise scale of the paper's convention.

    Returns
    -------
    Array of the shape of ``u``.
    """
    lev = _real(level, name="level", strict=False)
    arr = _fields(u, name="u")
    if not isinstance(rng, np.random.Generator):
        msg = f"`rng` must be a numpy.random.Generator; got {type(rng).__name__}."
        raise InputError(msg)
    batch = arr[None] if arr.ndim == 2 else arr
    z = rng.standard_normal(batch[:, 1:-1, 1:-1].shape)
    if std_field is None:
        inner = batch[:, 1:-1, 1:-1]
        scale = lev * np.sqrt(np.mean(inner**2, axis=(1, 2)))[:, None, None]
    else:
        std = _fields(std_field, name="std_field")
        if std.shape != batch.shape[1:]:
            msg = f"`std_field` must have shape {batch.shape[1:]}; got {std.shape}."
            raise ShapeError(msg)
        scale = lev * std[1:-1, 1:-1]
    out = batch.copy()
    out[:, 1:-1, 1:-1] += scale * z
    return out[0] if arr.ndim == 2 else out


def pool_coefficient(a: ArrayLike, *, factor: int) -> Array:
    """Average-pool a node-grid field: ``n -> (n - 1) / factor + 1`` nodes.

    Coarse node ``(I, J)`` at fine node ``(factor I, factor J)`` gets the mean of the fine
    nodes within ``factor // 2`` of it along each axis (centred window, NaN-padded outside
    the domain, nanmean): the rule that builds the inverse-problem targets (141 -> 36 with
    factor 4, 85 -> 22 with factor 4, and 421 -> 141 with factor 3).

    Parameters
    ----------
    a : (..., n, n) array with ``(n - 1) % factor == 0``.
    factor : int >= 1
    """
    arr = np.asarray(a, dtype=np.float64)
    n = arr.shape[-1]
    if isinstance(factor, bool) or not isinstance(factor, int) or factor < 1 or (n - 1) % factor:
        msg = f"`factor` must be an int >= 1 dividing n - 1 = {n - 1}; got {factor!r}."
        raise InputError(msg)
    return average_pool_nodes(arr, factor=factor)


def coefficient_errors(
    a_est: ArrayLike, a_true: ArrayLike, *, pool: int = 4, threshold: float = 7.5,
    a_true_coarse: ArrayLike | None = None,
) -> dict[str, Array]:
    """Per-sample error metrics of an estimated coefficient.

    Parameters
    ----------
    a_est, a_true : (n_samples, n, n) or (n, n) arrays
        Estimate and truth on the same node grid.
    pool
        Pooling factor to the coarse grid (:func:`pool_coefficient`).
    threshold
        Phase threshold (7.5, the midpoint of 3 and 12).
    a_true_coarse : array or None
        Coarse truth to compare with instead of ``pool_coefficient(a_true)`` (e.g. the
        targets pooled from the 421 grid).

    Returns
    -------
    dict of (n_samples,) arrays
        ``"fine"``: ``||a_est - a_true|| / ||a_true||`` on the grid; ``"coarse"``: the same
        after pooling; ``"misclassified"``: fraction of nodes where ``a_est > threshold``
        differs from ``a_true > threshold``.
    """
    est = np.atleast_3d(np.asarray(a_est, dtype=np.float64).T).T
    true = np.atleast_3d(np.asarray(a_true, dtype=np.float64).T).T
    if est.shape != true.shape:
        msg = f"`a_est` must have the shape of `a_true` {true.shape}; got {est.shape}."
        raise ShapeError(msg)

    def rel(x: Array, y: Array) -> Array:
        return np.linalg.norm(x - y, axis=(1, 2)) / np.linalg.norm(y, axis=(1, 2))

    coarse_true = pool_coefficient(true, factor=pool) if a_true_coarse is None else (
        np.atleast_3d(np.asarray(a_true_coarse, dtype=np.float64).T).T)
    return {
        "fine": rel(est, true),
        "coarse": rel(pool_coefficient(est, factor=pool), coarse_true),
        "misclassified": np.mean((est > threshold) != (true > threshold), axis=(1, 2)),
    }
