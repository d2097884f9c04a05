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
noise ``epsilon * (sigma(x) + 1e-5) * N(0, 1)`` with ``sigma`` the pointwise standard deviation
of the training solutions; :func:`add_noise` draws noise in either convention.
:func:`coefficient_errors` and :func:`pool_coefficient` give the benchmark's error metrics.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._darcy_adjoint import DIRECT_BELOW, InversionProblem, coarse_grids, prolong_nodes
from ._darcy_fd import AVERAGINGS
from ._darcy_linear import LINEAR_SOLVERS
from ._inverse_checks import (
    MAGNITUDE,
    MAX_MEMORY,
    check_coefficient,
    check_noise_levels,
    check_observations,
    count,
    is_real,
    real,
    wrong_sign_note,
)
from ._inverse_noise import (
    NOISE_HINT,
    add_noise,
    admissible_start,
    check_noise_level,
    coefficient_errors,
    paper_noise_to_relative,
    pool_coefficient,
)
from ._inverse_report import InverseSolveReport
from .checks import plain
from .contract import Batch, SolverInput, SolverOutput, as_batch
from .errors import ConvergenceError, ConvergenceWarning, InputError, ShapeError

__all__ = [
    "NOISE_HINT",
    "DarcyInverseSolver",
    "InverseSolveReport",
    "add_noise",
    "admissible_start",
    "check_noise_level",
    "check_noise_levels",
    "coefficient_errors",
    "paper_noise_to_relative",
    "pool_coefficient",
    "wrong_sign_note",
]

Array = NDArray[np.float64]
_SAFEGUARD = float(np.log(1e6))  # without bounds, m stays within log(a0) +- log(1e6)
_STATUS = {-1: "target", 0: "stationary", 1: "maxiter", 2: "stalled"}
@dataclass(frozen=True, kw_only=True)
class DarcyInverseSolver:
    """Recover the nodal Darcy coefficient from observations of the solution.

    Minimises over ``m = log a`` (the objective of :mod:`solvers.darcy_inverse`)

    ``J(m) = 0.5 ||F(e^m) - u_obs||_h^2 + alpha TV_eps(m)``, ``alpha = beta ||u_obs||_h^2``,

    ``F`` the 5-point discretisation of :class:`~solvers.darcy.DarcyFDSolver` (second order),
    ``||.||_h`` the ``h^2``-weighted sum over interior nodes, ``TV_eps`` the smoothed total
    variation ``h^2 sum_cells sqrt(|grad m|^2 + eps^2)`` (a first-order midpoint rule,
    :func:`solvers._darcy_adjoint.smoothed_tv`). ``beta`` (``regularization``) is
    dimensionless and grid independent: both terms are quadratures, and scaling ``f`` and
    ``u_obs`` together leaves the minimiser unchanged. The gradient is the discrete adjoint
    (one extra solve with the same matrix and preconditioner), chained through the face
    averaging and ``a = e^m``; L-BFGS-B iterates on ``m``, within ``log(bounds)``.

    Multilevel start (from the default constant start only): the same problem is first solved
    on up to ``levels - 1`` coarser nested grids (every other node of the data, down to 9 x 9;
    ``coarse_maxiter`` iterations each, grids with ``n <= 48`` by the direct solver), each
    result interpolated bilinearly in ``m`` to start the next grid. It finds the interfaces at
    a fraction of the cost of fine-grid iterations. A given ``initial_guess`` (e.g. a
    surrogate's prediction) starts on the observation grid directly, or, with
    ``warm_levels > 1``, passes through that many grids the same way (restricted to the
    coarsest by taking every other node).

    Stopping rule on the observation grid (checked at the start and after every iteration):
    with noise, the discrepancy principle ``||F(a) - u_obs|| <= tau * delta``, ``delta =
    noise_level ||u_obs|| / sqrt(1 + noise_level^2)`` (the expected noise norm, since
    ``E||u_obs||^2 = (1 + noise_level^2) ||u_clean||^2``; interior nodes); for noise-free data
    ``||F(a) - u_obs|| <= misfit_tol ||u_obs||``; else ``maxiter``, L-BFGS-B convergence or a
    failed line search. Coarse grids ignore the misfit targets (their discretisation error
    is larger than the noise) and stop at ``coarse_maxiter`` or convergence.

    Identifiability: the data see ``a`` only through the face means, so the four corner nodes
    are set by the regulariser alone and the other boundary nodes only through the faces to
    their interior neighbours; where ``grad u = 0`` the data constrain ``a`` weakly. The TV
    term fills these in from the neighbours.

    Parameters
    ----------
    forcing
        Constant right-hand side ``f`` of the forward model, nonzero (benchmark: 1).
    averaging
        Face averaging of the forward model, ``"harmonic"`` (default) or ``"arithmetic"``.
    linear_solver
        ``"gmg"`` (default), ``"amg"``, ``"cg"`` or ``"direct"``, as in
        :class:`~solvers.darcy.DarcyFDSolver`. Iterative solves start from the previous
        evaluation's forward and adjoint states.
    tol
        Relative residual ``||b - A u|| / ||b||`` of the linear solves, in (0, 1).
    regularization
        ``beta >= 0``; None: :meth:`default_regularization` of each sample's noise level.
    tv_smoothing
        ``eps > 0`` of the TV term, in units of ``log a`` per unit length.
    bounds
        ``(lower, upper)`` known bounds on ``a``, ``0 < lower < upper``, enforced as L-BFGS-B
        box bounds on ``m``. None: unbounded (``m`` is kept within ``log(1e6)`` of the start,
        a safeguard against overflow that sensible data never reach).
    noise_level
        Relative noise level ``||eta|| / ||u_clean||`` (interior nodes), >= 0; may be
        given per sample in :meth:`solve`.
    tau
        Discrepancy factor, >= 1.
    misfit_tol
        Relative misfit target for noise-free data, in (0, 1).
    maxiter
        L-BFGS-B iterations on the observation grid (evaluations capped at
        ``2 maxiter + 20``).
    coarse_maxiter
        L-BFGS-B iterations on each coarse grid.
    levels
        Number of grids of the multilevel start, the observation grid included (1: none).
    warm_levels
        The same for a start from a given ``initial_guess`` (default 1: observation grid only).
    memory
        L-BFGS-B correction pairs, in [1, 1000].

    Examples
    --------
    >>> from solvers import DarcyFDSolver
    >>> a_true = np.full((17, 17), 4.0)
    >>> u = DarcyFDSolver().solve(a_true)
    >>> a, report = DarcyInverseSolver().solve_with_report(u)
    >>> float(np.abs(a - a_true).max()) < 1e-6, report.stop_reason.tolist()
    (True, ['misfit_tol'])
    """

    problem: ClassVar[str] = "darcy-inverse"
    forcing: float = 1.0
    averaging: str = "harmonic"
    linear_solver: str = "gmg"
    tol: float = 1e-10
    regularization: float | None = None
    tv_smoothing: float = 0.3
    bounds: tuple[float, float] | None = None
    noise_level: float = 0.0
    tau: float = 1.1
    misfit_tol: float = 1e-3
    maxiter: int = 40
    coarse_maxiter: int = 100
    levels: int = 3
    warm_levels: int = 1
    memory: int = 30

    def __post_init__(self) -> None:
        f = self.forcing
        # float() first: a numpy float16/float32 forcing compared with MAGNITUDE overflows.
        if not is_real(f) or not np.isfinite(f) or not 1 / MAGNITUDE <= abs(float(f)) <= MAGNITUDE:
            msg = (f"`forcing` must be a finite nonzero number (f = 0 gives u = 0) of magnitude "
                   f"within [1e-50, 1e50]; got {plain(f)}.")
            raise InputError(msg)
        values: dict[str, Any] = {"forcing": float(f)}
        for name, valid in (("averaging", AVERAGINGS), ("linear_solver", LINEAR_SOLVERS)):
            if getattr(self, name) not in valid:
                msg = (f"`{name}` must be one of {', '.join(map(repr, valid))}; "
                       f"got {getattr(self, name)!r}.")
                raise InputError(msg)
        for name in ("tol", "misfit_tol"):
            v = self.__dict__[name]
            if real(v, name=name) >= 1.0:
                msg = f"`{name}` must be a finite number in (0, 1); got {plain(v)}."
                raise InputError(msg)
            values[name] = float(v)
        values["tv_smoothing"] = real(self.tv_smoothing, name="tv_smoothing")
        values["noise_level"] = check_noise_level(self.noise_level)
        values["tau"] = real(self.tau, name="tau", low=1.0, strict=False)
        if self.regularization is not None:
            values["regularization"] = real(self.regularization, name="regularization",
                                             strict=False)
        for name in ("maxiter", "coarse_maxiter", "levels", "warm_levels", "memory"):
            values[name] = count(getattr(self, name), name=name, low=1)
        if values["memory"] > MAX_MEMORY:
            msg = (f"`memory` must be an int in [1, {MAX_MEMORY}] (L-BFGS-B correction pairs; "
                   f"scipy allocates (2 memory + 5) n floats, and pairs beyond the iterations "
                   f"are never used); got {values['memory']}.")
            raise InputError(msg)
        if self.bounds is not None:
            b = self.bounds
            ok = isinstance(b, tuple | list) and len(b) == 2 and all(is_real(v) for v in b)
            if not ok or not (np.isfinite(b[0]) and np.isfinite(b[1]) and 0 < b[0] < b[1]) or (
                    b[0] < 1 / MAGNITUDE or b[1] > MAGNITUDE):
                msg = (f"`bounds` must be None or (lower, upper) with 0 < lower < upper, both "
                       f"finite and within [1e-50, 1e50]; got {plain(b)}.")
                raise InputError(msg)
            values["bounds"] = (float(b[0]), float(b[1]))
        for name, v in values.items():
            object.__setattr__(self, name, v)

    @staticmethod
    def default_regularization(noise_level: float) -> float:
        """Default ``beta``: ``7e-3 * max(noise_level, 2e-3) ** 1.5``.

        Fitted on the two-phase benchmark (``a in {3, 12}``, ``f = 1``, data strided from
        421) at n = 85 and 141: the best ``beta`` was about 1e-6 at relative noise 0.3 % and
        3e-5 at 3 % (docs/methods/darcy_inverse.md). The floor 2e-3 stands for the
        discretisation error of the forward model on such data (0.2-0.4 % relative).
        """
        return 7e-3 * max(float(noise_level), 2e-3) ** 1.5

    @property
    def config(self) -> dict[str, Any]:
        """JSON-serialisable settings; ``DarcyInverseSolver(**config)`` rebuilds the solver."""
        return dataclasses.asdict(self)

    @property
    def method(self) -> str:
        return (f"L-BFGS-B on log a, smoothed TV, {self.levels}-level start; FD 5-point "
                f"{self.averaging} faces, {self.linear_solver} (tol={self.tol:g})")

    def objective(self, a: ArrayLike, u_obs: ArrayLike) -> tuple[float, Array]:
        """Value of ``J`` and its gradient with respect to the nodal coefficient ``a``.

        The same code path as the optimiser (which works on ``m = log a``:
        ``dJ/dm = a dJ/da``), with the weight ``regularization`` (or the default for
        ``noise_level``).

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
        obs = self._observations(u_obs)
        if not obs.single:
            msg = f"`u_obs` must be one sample of shape (n, n); got shape {obs.values.shape}."
            raise ShapeError(msg)
        a_arr = self._coefficient(a, want=obs.values.shape[1:], name="a")
        problem = self._problem(obs.values[0], self.noise_level, linear_solver=self.linear_solver)
        ev = problem.evaluate(np.log(a_arr), warm=False)
        return ev.value, ev.grad / a_arr

    def solve(self, u_obs: SolverInput, *, initial_guess: SolverInput | None = None,
              noise_level: ArrayLike | None = None) -> SolverOutput:
        """The coefficient for each observation; see :meth:`solve_with_report`."""
        return self.solve_with_report(u_obs, initial_guess=initial_guess,
                                      noise_level=noise_level)[0]

    def solve_with_report(
        self, u_obs: SolverInput, *, initial_guess: SolverInput | None = None,
        noise_level: ArrayLike | None = None,
    ) -> tuple[SolverOutput, InverseSolveReport]:
        """Invert each observation and report per-sample diagnostics.

        Parameters
        ----------
        u_obs : (n_samples, n, n) or (n, n) array, or xarray.DataArray
            Observed solution on the node grid, dims ``("sample", "x", "y")`` or
            ``("x", "y")``; finite, ``n >= 3``, not identically 0 on the interior.
        initial_guess : array of the shape of ``u_obs``, or None
            Starting coefficient (e.g. a surrogate prediction), > 0 and within ``bounds``;
            used on the observation grid directly. None: the multilevel start from the
            constant ``c`` that fits the coarsest data best in least squares
            (``F(c) = F(1) / c``, one extra solve), clipped into ``bounds``.
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
            NaN/inf, ``u_obs`` zero on the interior or of the sign opposite to ``forcing``
            (the solution has the sign of ``f`` inside: maximum principle), magnitudes outside
            [1e-50, 1e50] (``u_obs``, ``initial_guess`` or the coefficient scale
            ``|f| / max|u_obs|``), non-positive or out-of-bounds ``initial_guess``,
            ``noise_level`` outside [0, 1) or boolean.

        Warns
        -----
        UserWarning
            When observations have the sign opposite to ``forcing`` on more of the interior
            than their noise level explains (partly sign-flipped data;
            :func:`solvers._inverse_checks.wrong_sign_note`).
        ConvergenceWarning
            When iterative linear solves of a sample missed ``tol`` and were redone by sparse
            LU (counted in ``report.linear_fallbacks``), or when a sample failed (its
            coefficient is NaN, ``report.stop_reason`` is ``"failed"`` and ``report.error``
            says why; the other samples are kept).
        """
        batch = self._observations(u_obs)
        u = batch.values
        guess = None
        if initial_guess is not None:
            want = u.shape[1:] if batch.single else u.shape
            guess = self._coefficient(initial_guess, want=want, name="initial_guess")
            guess = guess.reshape(u.shape)
        levels = self._noise_levels(noise_level, len(u))
        note = wrong_sign_note(u, forcing=self.forcing, noise_levels=levels)
        if note is not None:
            warnings.warn(f"DarcyInverseSolver: {note}", UserWarning, stacklevel=2)
        out = np.empty_like(u)
        rows = []
        for k in range(len(u)):
            t0 = time.perf_counter()
            try:
                m, row = self._invert(u[k], float(levels[k]),
                                      None if guess is None else guess[k], k)
            except ConvergenceError as exc:
                warnings.warn(f"DarcyInverseSolver: sample {k} failed and is NaN in the result; "
                              f"the other samples are kept. {exc}", ConvergenceWarning,
                              stacklevel=2)
                m = np.full(u[k].shape, np.nan)
                row = (0, 0, 0, 0.0, np.nan, np.nan, "failed", 0, str(exc))
            out[k] = np.exp(m)
            rows.append((*row, time.perf_counter() - t0))
        cols = list(zip(*rows, strict=True))
        report = InverseSolveReport(
            iterations=np.array(cols[0], dtype=np.int64),
            forward_solves=np.array(cols[1], dtype=np.int64),
            adjoint_solves=np.array(cols[2], dtype=np.int64),
            pde_solves=np.array(cols[1], dtype=np.int64) + np.array(cols[2], dtype=np.int64),
            equivalent_solves=np.array(cols[3]), residual=np.array(cols[4]),
            regularization=np.array(cols[5]), stop_reason=np.array(cols[6], dtype=str),
            linear_fallbacks=np.array(cols[7], dtype=np.int64),
            error=np.array(cols[8], dtype=str), solve_time=np.array(cols[9]),
            method=self.method,
        )
        return batch.restore(out, name="a"), report

    # -- one sample ---------------------------------------------------------------------
    def _problem(self, u_obs: Array, noise_level: float, *, linear_solver: str,
                 index: int = 0) -> InversionProblem:
        beta = self.regularization
        beta = self.default_regularization(noise_level) if beta is None else beta
        return InversionProblem(self, u_obs, beta=beta, linear_solver=linear_solver, index=index)

    def _box(self, m0: Array) -> tuple[float, float]:
        if self.bounds is not None:
            return float(np.log(self.bounds[0])), float(np.log(self.bounds[1]))
        return float(m0.min()) - _SAFEGUARD, float(m0.max()) + _SAFEGUARD

    def _invert(self, u_obs: Array, noise_level: float, guess: Array | None,
                index: int) -> tuple[Array, tuple[Any, ...]]:
        """Multilevel start (or the guess), then L-BFGS-B on the observation grid."""
        n = u_obs.shape[0]
        grids = coarse_grids(n, self.levels if guess is None else self.warm_levels)
        problems = []
        for nc in grids:
            stride = (n - 1) // (nc - 1)
            solver = "direct" if nc < n and nc <= DIRECT_BELOW else self.linear_solver
            problems.append(self._problem(u_obs[::stride, ::stride], noise_level,
                                          linear_solver=solver, index=index))
        problem = problems[-1]
        if noise_level > 0:
            target = self.tau * noise_level * problem.d_norm / np.sqrt(1.0 + noise_level**2)
            reason = "discrepancy"
        else:
            target, reason = self.misfit_tol * problem.d_norm, "misfit_tol"
        if guess is not None:
            m = np.log(guess)
        else:  # the best constant; replaced by the multilevel start where that fits better
            m = np.full((n, n), np.log(self._clip(problem.best_constant())))
        box = self._box(m)
        if len(problems) > 1 and problem.evaluate(m).misfit > target:
            m_coarse = m[:: (n - 1) // (grids[0] - 1), :: (n - 1) // (grids[0] - 1)]
            for coarse in problems[:-1]:
                m_coarse = prolong_nodes(coarse.minimise(
                    m_coarse, target=0.0, maxiter=self.coarse_maxiter, memory=self.memory,
                    bounds=box)[0])
            if problem.evaluate(m_coarse).value < problem.evaluate(m).value:
                m = m_coarse
        m, its, status, ev = problem.minimise(m, target=target, maxiter=self.maxiter,
                                              memory=self.memory, bounds=box)
        forward = sum(p.forward for p in problems)
        adjoint = sum(p.adjoint for p in problems)
        work = sum((p.forward + p.adjoint) * ((p.n - 1) / (n - 1)) ** 2 for p in problems)
        stop = reason if status == -1 else _STATUS[status]
        fallbacks = sum(p.fallbacks for p in problems)
        if fallbacks:
            first = next(p.first_fallback for p in problems if p.fallbacks)
            msg = (f"DarcyInverseSolver(linear_solver={self.linear_solver!r}): sample {index}: "
                   f"{fallbacks} of {forward + adjoint} linear solves missed the tolerance and "
                   f"were redone by sparse LU (the first on the {first}).")
            warnings.warn(msg, ConvergenceWarning, stacklevel=3)
        return m, (its, forward, adjoint, work, ev.misfit / problem.d_norm, ev.regularization,
                   stop, fallbacks, "")

    def _clip(self, c: float) -> float:
        return c if self.bounds is None else min(max(c, self.bounds[0]), self.bounds[1])

    # -- validation ---------------------------------------------------------------------
    def _observations(self, u_obs: SolverInput) -> Batch:
        batch = as_batch(u_obs, name="u_obs", core_dims=("x", "y"))
        values = batch.values
        n, ny = values.shape[1:]
        if n != ny or n < 3:
            msg = (f"`u_obs` must be on a square n x n node grid with n >= 3; got shape "
                   f"{values.shape[1:]}.")
            raise ShapeError(msg)
        check_observations(values, forcing=self.forcing)
        return batch

    def _coefficient(self, a: Any, *, want: tuple[int, ...], name: str) -> Array:
        return check_coefficient(a, want=want, name=name, bounds=self.bounds)

    def _noise_levels(self, noise_level: Any, n_samples: int) -> Array:
        return check_noise_levels(noise_level, n_samples, default=self.noise_level)
