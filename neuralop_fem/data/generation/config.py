"""Configuration of dataset generation: the physics and numerics of each problem.

A config is a frozen value holding every physical and numerical parameter of one
problem (the grid resolution, dataset seed and sample count are arguments of
:func:`neuralop_fem.data.generate`, not part of the config). The command line
maps its options 1:1 onto these fields; the same values are stored, as plain attributes
and as JSON, in every generated file, and :meth:`from_dict` rebuilds the config from them.
The behaviour all configs share (the solver choice, the solver or its torch twin) is
:class:`~.base.DataConfig`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self

import numpy as np
from numpy.typing import NDArray

from solvers.grf import NeumannGRF, PeriodicGRF, threshold
from solvers.problems import get_problem

from ...config_base import (
    choice,
    finite_float,
    positive_float,
    positive_int,
)
from ...errors import ConfigError
from ...problems import generated_problems, get_kit
from ...problems.peer_presets import get_preset
from .base import DataConfig, _check_int, _report_arrays, option, solver_default

__all__ = [
    "DARCY_GRIDS",
    "BurgersDataConfig",
    "DarcyDataConfig",
    "DataConfig",
    "config_class",
    "like_config",
    "option",
    "solver_default",
]

#: Grid conventions of Darcy datasets (:mod:`solvers.grids`), the default first.
DARCY_GRIDS = ("nodes", "cell-centred", "half-open")
#: The default linear solver on each grid (the cell-centred solver has no multigrid).
GRID_LINEAR_SOLVER = {"nodes": "gmg", "cell-centred": "direct", "half-open": "gmg"}


@dataclass(frozen=True, kw_only=True)
class BurgersDataConfig(DataConfig):
    r"""Physics and numerics of a 1D periodic viscous Burgers dataset.

    .. math:: u_t + u u_x = \nu u_{xx}, \quad x \in [0, 1) \text{ periodic}, \quad
              u(\cdot, 0) = u_0 \sim N(0, \sigma^2 (-\Delta + \tau^2 I)^{-\alpha}),

    with the constant mode of :math:`u_0` not sampled (zero mean). The defaults are the
    FNO / Galerkin Transformer benchmark at ``resolution = 8192`` (grid ``x_i = i/n``).

    Parameters
    ----------
    viscosity
        :math:`\nu > 0`; default ``0.1 / (2 pi)`` (the Galerkin Transformer paper).
    final_time
        :math:`T > 0`; ``u`` is stored at ``t = T``.
    output_times
        Optional increasing times in ``[0, T]`` at which the trajectory ``u_t`` is also stored.
    grf_sigma, grf_tau, grf_alpha
        Amplitude, inverse length scale and smoothness exponent of the initial-condition GRF
        (25, 5, 2 in the benchmark).
    solver
        ``"spectral"`` (pseudo-spectral ETDRK4, spectrally accurate in space, order 4 in
        time) or ``"fd"`` (finite differences, second order in space, RK4 in time).
    dt, first_dt, growth, n_contour, mode_tol
        Numerics of the spectral solver only (largest step, first graded step, step growth
        ratio, contour points, mode truncation); None: the solver's defaults (``dt`` and
        ``first_dt``: its step rule; 1.2, 32, 1e-16). See
        :class:`solvers.burgers.BurgersSpectralSolver`.
    cfl
        FD solver only: fraction of the RK4 stability limit, in (0, 1]; None: 0.8.

    Options of the solver not chosen must be left out (None); a value is an error.
    """

    problem: ClassVar[str] = "burgers"
    solver_field: ClassVar[str] = "solver"
    solver_options: ClassVar[dict[str, dict[str, Any]]] = {
        "spectral": {"dt": None, "first_dt": None, "growth": 1.2, "n_contour": 32,
                     "mode_tol": 1e-16},
        "fd": {"cfl": 0.8},
    }

    viscosity: float = option(
        solver_default("burgers", "viscosity"),
        "viscosity nu > 0 (default 0.1/(2 pi), the Galerkin Transformer paper; the FNO paper "
        "states 0.1)")
    final_time: float = option(solver_default("burgers", "final_time"),
                               "final time T > 0; `u` is stored at t = T (default 1)")
    output_times: tuple[float, ...] | None = option(
        None, "also store the trajectory u_t at these times in [0, T]")
    grf_sigma: float = option(25.0, "initial-condition GRF amplitude sigma (default 25)")
    grf_tau: float = option(5.0, "initial-condition GRF inverse length scale tau (default 5)")
    grf_alpha: float = option(2.0, "initial-condition GRF smoothness exponent alpha (default 2)")
    solver: str = option("spectral", "'spectral' (pseudo-spectral exponential integrator, "
                                     "default) or 'fd' (finite differences)")
    dt: float | None = option(None, "spectral: largest time step (default: the solver's rule, "
                                    "~450 steps)")
    first_dt: float | None = option(None, "spectral: first graded step (default 1e-4 dt)")
    growth: float | None = option(None, "spectral: growth ratio of graded steps (default 1.2)")
    n_contour: int | None = option(None, "spectral: contour points of the ETDRK4 coefficients "
                                         "(default 32)")
    mode_tol: float | None = option(None, "spectral: relative mode truncation of the product "
                                          "(default 1e-16)")
    cfl: float | None = option(None, "fd: fraction of the RK4 stability limit (default 0.8)")

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "solver", choice(self.solver, "solver", self.solver_names()))
        self._apply_solver_options()
        for name in ("viscosity", "final_time", "grf_sigma", "grf_tau", "grf_alpha"):
            set_(self, name, positive_float(getattr(self, name), name))
        for name in ("dt", "first_dt", "growth", "cfl"):
            if getattr(self, name) is not None:
                set_(self, name, positive_float(getattr(self, name), name))
        if self.n_contour is not None:
            set_(self, "n_contour", positive_int(self.n_contour, "n_contour"))
        if self.mode_tol is not None:
            set_(self, "mode_tol", finite_float(self.mode_tol, "mode_tol"))
        if self.output_times is not None:
            times = tuple(finite_float(t, "output_times")
                          for t in np.atleast_1d(self.output_times))
            ok = len(times) > 0 and all(b > a for a, b in zip(times, times[1:], strict=False))
            if not ok or times[0] < 0 or times[-1] > self.final_time:
                msg = (
                    f"`output_times` must be strictly increasing times in [0, final_time="
                    f"{self.final_time}]; got {list(times)}."
                )
                raise ConfigError(msg)
            set_(self, "output_times", times)

    def check_resolution(self, resolution: int) -> int:
        """Return ``resolution`` if the solver can use it (an even integer >= 8)."""
        n = _check_int(resolution)
        if n < 8 or n % 2:
            msg = (
                f"`resolution` must be an even integer >= 8 for the periodic Burgers grid "
                f"x_i = i/n; got {resolution!r}."
            )
            raise ConfigError(msg)
        return n

    def _solver_times(self) -> tuple[float, ...] | None:
        if self.output_times is None:
            return None
        if self.output_times[-1] == self.final_time:
            return self.output_times
        return (*self.output_times, self.final_time)

    def solver_settings(self) -> dict[str, Any]:
        """The constructor arguments of the chosen Burgers solver."""
        common = {"viscosity": self.viscosity, "final_time": self.final_time,
                  "output_times": self._solver_times()}
        own = self.solver_options[self.solver]
        return {**common, **{name: getattr(self, name) for name in own}}

    def make_sampler(self, resolution: int) -> Any:
        """The initial-condition GRF on ``resolution`` points."""
        return PeriodicGRF(
            resolution, sigma=self.grf_sigma, tau=self.grf_tau, alpha=self.grf_alpha
        )

    def draw_inputs(self, resolution: int, seeds: NDArray[np.uint64]) -> NDArray[np.float64]:
        """The initial conditions ``u0`` (``(c, n)``) of the samples with per-sample ``seeds``."""
        return self.make_sampler(resolution).sample(len(seeds), seeds=seeds)

    def solve_chunk(self, resolution: int, seeds: NDArray[np.uint64], *,
                    device: str | None = None, batch_size: int | None = None
                    ) -> dict[str, NDArray[Any]]:
        """Sample and solve the samples with per-sample ``seeds`` (with ``device``: by the
        solver's torch twin there, ``batch_size`` samples per device call).

        Returns ``u0`` and ``u`` (``(c, n)``), ``u_t`` (``(c, n_times, n)``, only with
        ``output_times``) and the per-sample ``iterations``, ``residual``, ``solve_time``.
        """
        u0 = self.draw_inputs(resolution, seeds)
        solver = self.make_solver(device=device, batch_size=batch_size)
        solution, report = solver.solve_with_report(u0)
        out = {"u0": u0}
        if self.output_times is None:
            out["u"] = solution
        else:
            out["u"] = np.ascontiguousarray(solution[:, -1])
            out["u_t"] = np.ascontiguousarray(solution[:, : len(self.output_times)])
        out.update(_report_arrays(report))
        return out


@dataclass(frozen=True, kw_only=True)
class DarcyDataConfig(DataConfig):
    r"""Physics and numerics of a 2D Darcy flow dataset with a two-phase coefficient.

    .. math:: -\nabla \cdot (a \nabla u) = f \text{ on } [0, 1]^2,
              \quad u = 0 \text{ on the boundary},
              \quad a = \text{high} \text{ where } g > 0, \ \text{low elsewhere},

    with :math:`g \sim N(0, (-\Delta + \tau^2 I)^{-\alpha})` (homogeneous Neumann, zero mean)
    on the ``n x n`` node grid ``x_i = i/(n-1)``. The GRF amplitude does not matter after
    thresholding at 0, so it is not a parameter. The defaults are the benchmark at
    ``resolution = 421``.

    Parameters
    ----------
    grf_tau, grf_alpha
        Inverse length scale and smoothness exponent of the GRF (3, 2).
    contrast_high, contrast_low
        Coefficient values where the GRF is positive / non-positive (12, 3); > 0.
    forcing
        Constant right-hand side ``f`` (1).
    discretisation
        ``"fd"`` (5-point finite differences, second order) or ``"fem"`` (scikit-fem).
    averaging
        ``"fd"`` only: face averaging of ``a``, ``"harmonic"`` (None: the default) or
        ``"arithmetic"``.
    element
        ``"fem"`` only: finite element, ``"P1"`` (None: the default) or ``"Q1"``.
    linear_solver
        ``"gmg"`` (CG + geometric multigrid, the fastest), ``"amg"`` (CG + pyamg),
        ``"cg"`` (Jacobi CG) or ``"direct"`` (SuperLU); see :mod:`solvers.darcy`. None: the
        grid's default (:data:`GRID_LINEAR_SOLVER`: ``"gmg"``, on cell centres ``"direct"``).
    tol
        Relative residual ``||b - A u|| / ||b||`` at which iterative solves stop (1e-10, far
        below the discretisation error); a sample that misses it aborts the run with
        :class:`~solvers.errors.ConvergenceError`.
    maxiter
        Iteration limit of iterative solves; None: the solver's size-dependent default.
    grid
        Grid convention of the stored fields (:mod:`solvers.grids`): ``"nodes"`` (default,
        ``x_i = i/(n-1)``), ``"cell-centred"`` (PDEBench's ``(i + 1/2)/n``, solved by
        :class:`~solvers.DarcyCellFDSolver`) or ``"half-open"``
        (neuraloperator's ``i/n``, :class:`~solvers.DarcyHalfOpenFDSolver`). Both
        other grids need ``discretisation="fd"``; the GRF is sampled at the ``n x n`` points
        of the grid alike (its DCT basis does not depend on where the points are).
    """

    problem: ClassVar[str] = "darcy"
    solver_field: ClassVar[str] = "discretisation"
    solver_options: ClassVar[dict[str, dict[str, Any]]] = {
        "fd": {"averaging": "harmonic"},
        "fem": {"element": "P1"},
    }

    grf_tau: float = option(3.0, "GRF inverse length scale tau (default 3)")
    grf_alpha: float = option(2.0, "GRF smoothness exponent alpha (default 2)")
    contrast_high: float = option(12.0, "coefficient where the GRF is > 0 (default 12)")
    contrast_low: float = option(3.0, "coefficient elsewhere (default 3)")
    forcing: float = option(solver_default("darcy", "forcing"),
                            "constant right-hand side f (default 1)")
    discretisation: str = option("fd", "'fd' (5-point finite differences, default) or 'fem' "
                                       "(scikit-fem)")
    averaging: str | None = option(None, "FD face averaging: 'harmonic' (default) or "
                                         "'arithmetic'")
    element: str | None = option(None, "FEM element: 'P1' (default) or 'Q1'")
    linear_solver: str | None = option(None, "'gmg' (CG + geometric multigrid, the default on "
                                             "nodes), 'amg', 'cg' or 'direct' (the default on "
                                             "cell centres)")
    tol: float = option(solver_default("darcy", "tol"),
                        "relative residual tolerance of iterative solves (default 1e-10)")
    maxiter: int | None = option(None, "iteration limit of iterative solves (default: the "
                                       "solver's)")
    grid: str = option("nodes", "where the fields are stored: 'nodes' i/(n-1) (default), "
                                "'cell-centred' (i+1/2)/n or 'half-open' i/n")

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "grid", choice(self.grid, "grid", DARCY_GRIDS))
        if self.linear_solver is None:
            set_(self, "linear_solver", GRID_LINEAR_SOLVER[self.grid])
        if self.grid != "nodes" and self.discretisation != "fd":
            msg = (f"`grid` {self.grid!r} is solved by finite differences only; got "
                   f"discretisation={self.discretisation!r}. Use discretisation='fd'.")
            raise ConfigError(msg)
        set_(self, "discretisation",
             choice(self.discretisation, "discretisation", self.solver_names()))
        self._apply_solver_options()
        for name in ("grf_tau", "grf_alpha", "contrast_high", "contrast_low"):
            set_(self, name, positive_float(getattr(self, name), name))
        set_(self, "forcing", finite_float(self.forcing, "forcing"))
        if self.averaging is not None:
            choice(self.averaging, "averaging", ("harmonic", "arithmetic"))
        if self.element is not None:
            choice(self.element, "element", ("P1", "Q1"))
        if not isinstance(self.linear_solver, str) or not self.linear_solver:
            msg = f"`linear_solver` must be a solver name; got {self.linear_solver!r}."
            raise ConfigError(msg)
        set_(self, "tol", positive_float(self.tol, "tol"))
        if self.maxiter is not None:
            set_(self, "maxiter", _check_int(self.maxiter, "maxiter"))
            if self.maxiter < 1:
                msg = f"`maxiter` must be an integer >= 1 or None; got {self.maxiter!r}."
                raise ConfigError(msg)

    def replace(self, **changes: object) -> Self:
        """As :meth:`DataConfig.replace`; changing ``grid`` also drops a ``linear_solver`` that
        holds the old grid's default (the new grid's default applies)."""
        if "grid" in changes and "linear_solver" not in changes \
                and self.linear_solver == GRID_LINEAR_SOLVER[self.grid]:
            changes = {**changes, "linear_solver": None}
        return super().replace(**changes)

    def check_resolution(self, resolution: int) -> int:
        """Return ``resolution`` if the solver can use it (an integer >= 3: one interior node;
        on the other grids >= 2)."""
        n = _check_int(resolution)
        if self.grid != "nodes" and n >= 2:
            return n
        if n < 3:
            msg = (
                "`resolution` must be an integer >= 3 (nodes per side, boundary included, "
                f"so at least one interior node); got {resolution!r}."
            )
            raise ConfigError(msg)
        return n

    def solver_settings(self) -> dict[str, Any]:
        """The constructor arguments of the chosen Darcy solver (the solver refuses names it
        does not know with an :class:`~solvers.errors.InputError`)."""
        options: dict[str, Any] = {"forcing": self.forcing, "linear_solver": self.linear_solver,
                                   "tol": self.tol, "maxiter": self.maxiter}
        own = self.solver_options[self.discretisation]
        return {**options, **{name: getattr(self, name) for name in own}}

    def make_solver(self, *, device: str | None = None, batch_size: int | None = None) -> Any:
        """As :meth:`DataConfig.make_solver`; on a grid other than the nodes the FD solver the
        problem's :attr:`~solvers.problems.Problem.grid_solvers` names for it (no torch twin)."""
        if self.grid == "nodes":
            return super().make_solver(device=device, batch_size=batch_size)
        spec = get_problem(self.problem)
        solver = spec.solver_class(spec.grid_solvers[self.grid])(**self.solver_settings())
        return self._on_device(solver, device, batch_size)

    def make_sampler(self, resolution: int) -> Any:
        """The GRF that is thresholded into the coefficient, on the ``n x n`` node grid."""
        return NeumannGRF(resolution, tau=self.grf_tau, alpha=self.grf_alpha)

    def draw_inputs(self, resolution: int, seeds: NDArray[np.uint64]) -> NDArray[np.float64]:
        """The two-phase coefficients ``a`` (``(c, n, n)``) of the samples with per-sample
        ``seeds``."""
        field = self.make_sampler(resolution).sample(len(seeds), seeds=seeds)
        return threshold(field, high=self.contrast_high, low=self.contrast_low)

    def solve_chunk(self, resolution: int, seeds: NDArray[np.uint64], *,
                    device: str | None = None, batch_size: int | None = None
                    ) -> dict[str, NDArray[Any]]:
        """Sample the coefficients with per-sample ``seeds`` and solve (with ``device``: by the
        solver's torch twin there, ``batch_size`` samples per device call).

        Returns ``a`` and ``u`` (``(c, n, n)``) and the per-sample ``iterations``,
        ``residual`` and ``solve_time``.
        """
        a = self.draw_inputs(resolution, seeds)
        solver = self.make_solver(device=device, batch_size=batch_size)
        u, report = solver.solve_with_report(a)
        out = {"a": np.ascontiguousarray(a, dtype=np.float64), "u": u}
        out.update(_report_arrays(report))
        return out


def config_class(problem: str) -> type[DataConfig]:
    """The config class of ``problem`` (its kit's ``data_config``: :class:`BurgersDataConfig`
    for ``"burgers"``, :class:`DarcyDataConfig` for ``"darcy"``)."""
    if problem not in generated_problems():
        valid = ", ".join(map(repr, generated_problems()))
        msg = f"`problem` must be one of {valid}; got {problem!r}."
        raise ConfigError(msg)
    return get_kit(problem).config_class()


def like_config(name: str, overrides: Mapping[str, Any] | None = None) -> tuple[DataConfig, int]:
    """The data config and resolution of the peer preset ``name``
    (:data:`neuralop_fem.problems.peer_presets.PEER_PRESETS`, ``generate --like``), with
    ``overrides`` of config fields (unknown names are a
    :class:`~neuralop_fem.errors.ConfigError`).

    Returns
    -------
    (config, resolution)
        Pass both to :func:`neuralop_fem.generate`.

    Examples
    --------
    >>> config, n = like_config("pdebench-darcy", {"forcing": 0.1})
    >>> config.grid, config.contrast_low, config.forcing, n
    ('cell-centred', 0.1, 0.1, 128)
    """
    preset = get_preset(name)
    base = config_class(preset.problem)()
    return base.replace(**{**preset.settings, **(overrides or {})}), preset.resolution
