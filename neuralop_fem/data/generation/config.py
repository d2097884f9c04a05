"""Configuration of dataset generation: the physics and numerics of each problem.

A config is a frozen value holding every physical and numerical parameter of one
problem (the grid resolution, dataset seed and sample count are arguments of
:func:`neuralop_fem.data.generate`, not part of the config). The command line
maps its options 1:1 onto these fields; the same values are stored, as plain attributes
and as JSON, in every generated file, and :meth:`from_dict` rebuilds the config from them.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from ...errors import ConfigError

__all__ = [
    "BURGERS_SOLVERS",
    "DARCY_DISCRETISATIONS",
    "BurgersDataConfig",
    "DarcyDataConfig",
    "DataConfig",
    "config_class",
]

#: Burgers solver names -> class name in :mod:`solvers`.
BURGERS_SOLVERS: dict[str, str] = {"spectral": "BurgersSpectralSolver", "fd": "BurgersFDSolver"}
#: Darcy discretisation names -> class name in :mod:`solvers`.
DARCY_DISCRETISATIONS: dict[str, str] = {"fd": "DarcyFDSolver", "fem": "DarcyFEMSolver"}


def _positive(value: Any, name: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = math.nan
    if not math.isfinite(v) or v <= 0:
        msg = f"`{name}` must be a finite number > 0; got {value!r}."
        raise ConfigError(msg)
    return v


def _finite(value: Any, name: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = math.nan
    if not math.isfinite(v):
        msg = f"`{name}` must be a finite number; got {value!r}."
        raise ConfigError(msg)
    return v


def _choice(value: Any, name: str, choices: Any) -> str:
    if value not in choices:
        valid = ", ".join(repr(c) for c in choices)
        msg = f"`{name}` must be one of {valid}; got {value!r}."
        raise ConfigError(msg)
    return str(value)


def _solver_class(class_name: str) -> type:
    import solvers

    try:
        return getattr(solvers, class_name)
    except AttributeError:
        import importlib

        module = "burgers" if class_name.startswith("Burgers") else "darcy"
        return getattr(importlib.import_module(f"solvers.{module}"), class_name)


def _grf_module() -> Any:
    import solvers.grf

    return solvers.grf


class DataConfig:
    """Behaviour shared by :class:`BurgersDataConfig` and :class:`DarcyDataConfig`."""

    problem: ClassVar[str]

    def to_dict(self) -> dict[str, Any]:
        """Return the fields as a JSON-serialisable dict (tuples become lists)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Any:
        """Rebuild a config from :meth:`to_dict` output; unknown keys are a :class:`ConfigError`."""
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        unknown = sorted(set(values) - names)
        if unknown:
            msg = (
                f"{cls.__name__} got unknown parameter(s) {unknown}; "
                f"valid: {sorted(names)}."
            )
            raise ConfigError(msg)
        return cls(**values)

    def check_resolution(self, resolution: int) -> int:  # pragma: no cover - overridden
        raise NotImplementedError

    def make_solver(self) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    def solve_chunk(
        self, resolution: int, seeds: NDArray[np.uint64]
    ) -> dict[str, NDArray[Any]]:  # pragma: no cover - overridden
        raise NotImplementedError


def _report_arrays(report: Any) -> dict[str, NDArray[Any]]:
    return {
        "iterations": np.asarray(report.iterations, dtype=np.int64),
        "residual": np.asarray(report.residual, dtype=np.float64),
        "solve_time": np.asarray(report.solve_time, dtype=np.float64),
    }


def _check_int(resolution: Any, name: str = "resolution") -> int:
    if isinstance(resolution, bool) or not isinstance(resolution, int | np.integer):
        msg = f"`{name}` must be an integer; got {resolution!r}."
        raise ConfigError(msg)
    return int(resolution)


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
        Numerics of the spectral solver (largest step, first graded step, step growth ratio,
        contour points, mode truncation); None: the solver's defaults. See
        :class:`solvers.burgers.BurgersSpectralSolver`.
    cfl
        Fraction of the RK4 stability limit of the FD solver, in (0, 1].
    """

    problem: ClassVar[str] = "burgers"

    viscosity: float = 0.1 / (2.0 * math.pi)
    final_time: float = 1.0
    output_times: tuple[float, ...] | None = None
    grf_sigma: float = 25.0
    grf_tau: float = 5.0
    grf_alpha: float = 2.0
    solver: str = "spectral"
    dt: float | None = None
    first_dt: float | None = None
    growth: float = 1.2
    n_contour: int = 32
    mode_tol: float = 1e-16
    cfl: float = 0.8

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        for name in ("viscosity", "final_time", "grf_sigma", "grf_tau", "grf_alpha",
                     "growth", "cfl"):
            set_(self, name, _positive(getattr(self, name), name))
        for name in ("dt", "first_dt"):
            if getattr(self, name) is not None:
                set_(self, name, _positive(getattr(self, name), name))
        set_(self, "n_contour", _check_int(self.n_contour, "n_contour"))
        set_(self, "mode_tol", _finite(self.mode_tol, "mode_tol"))
        set_(self, "solver", _choice(self.solver, "solver", BURGERS_SOLVERS))
        if self.output_times is not None:
            times = tuple(_finite(t, "output_times") for t in np.atleast_1d(self.output_times))
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

    def make_solver(self) -> Any:
        """Build the :mod:`solvers` Burgers solver these settings describe."""
        cls = _solver_class(BURGERS_SOLVERS[self.solver])
        common = {"viscosity": self.viscosity, "final_time": self.final_time,
                  "output_times": self._solver_times()}
        if self.solver == "fd":
            return cls(**common, cfl=self.cfl)
        return cls(**common, dt=self.dt, first_dt=self.first_dt, growth=self.growth,
                   n_contour=self.n_contour, mode_tol=self.mode_tol)

    def make_sampler(self, resolution: int) -> Any:
        """The initial-condition GRF on ``resolution`` points."""
        grf = _grf_module()
        return grf.PeriodicGRF(
            resolution, sigma=self.grf_sigma, tau=self.grf_tau, alpha=self.grf_alpha
        )

    def solve_chunk(self, resolution: int, seeds: NDArray[np.uint64]) -> dict[str, NDArray[Any]]:
        """Sample and solve the samples with per-sample ``seeds``.

        Returns ``u0`` and ``u`` (``(c, n)``), ``u_t`` (``(c, n_times, n)``, only with
        ``output_times``) and the per-sample ``iterations``, ``residual``, ``solve_time``.
        """
        u0 = self.make_sampler(resolution).sample(len(seeds), seeds=seeds)
        solution, report = self.make_solver().solve_with_report(u0)
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

    .. math:: -\nabla \cdot (a \nabla u) = f \text{ on } [0, 1]^2, \quad u = 0 \text{ on the boundary},
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
        Face averaging of ``a`` for ``"fd"``: ``"harmonic"`` (default) or ``"arithmetic"``.
    element
        Finite element for ``"fem"`` (``"P1"``).
    linear_solver
        ``"gmg"`` (CG + geometric multigrid, the fastest), ``"amg"`` (CG + pyamg),
        ``"cg"`` (Jacobi CG) or ``"direct"`` (SuperLU); see :mod:`solvers.darcy`.
    tol
        Relative residual ``||b - A u|| / ||b||`` at which iterative solves stop (1e-10, far
        below the discretisation error); a sample that misses it aborts the run with
        :class:`~solvers.errors.ConvergenceError`.
    maxiter
        Iteration limit of iterative solves; None: the solver's size-dependent default.
    """

    problem: ClassVar[str] = "darcy"

    grf_tau: float = 3.0
    grf_alpha: float = 2.0
    contrast_high: float = 12.0
    contrast_low: float = 3.0
    forcing: float = 1.0
    discretisation: str = "fd"
    averaging: str = "harmonic"
    element: str = "P1"
    linear_solver: str = "gmg"
    tol: float = 1e-10
    maxiter: int | None = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        for name in ("grf_tau", "grf_alpha", "contrast_high", "contrast_low"):
            set_(self, name, _positive(getattr(self, name), name))
        set_(self, "forcing", _finite(self.forcing, "forcing"))
        set_(self, "discretisation",
             _choice(self.discretisation, "discretisation", DARCY_DISCRETISATIONS))
        set_(self, "averaging", _choice(self.averaging, "averaging", ("harmonic", "arithmetic")))
        if not isinstance(self.element, str) or not self.element:
            msg = f"`element` must be a non-empty string; got {self.element!r}."
            raise ConfigError(msg)
        if not isinstance(self.linear_solver, str) or not self.linear_solver:
            msg = f"`linear_solver` must be a solver name; got {self.linear_solver!r}."
            raise ConfigError(msg)
        set_(self, "tol", _positive(self.tol, "tol"))
        if self.maxiter is not None:
            set_(self, "maxiter", _check_int(self.maxiter, "maxiter"))
            if self.maxiter < 1:
                msg = f"`maxiter` must be an integer >= 1 or None; got {self.maxiter!r}."
                raise ConfigError(msg)

    def check_resolution(self, resolution: int) -> int:
        """Return ``resolution`` if the solver can use it (an integer >= 3: one interior node)."""
        n = _check_int(resolution)
        if n < 3:
            msg = (
                "`resolution` must be an integer >= 3 (nodes per side, boundary included, "
                f"so at least one interior node); got {resolution!r}."
            )
            raise ConfigError(msg)
        return n

    def make_solver(self) -> Any:
        """Build the :mod:`solvers` Darcy solver these settings describe."""
        cls = _solver_class(DARCY_DISCRETISATIONS[self.discretisation])
        options: dict[str, Any] = {
            "forcing": self.forcing,
            "linear_solver": self.linear_solver,
            "tol": self.tol,
            "maxiter": self.maxiter,
        }
        if self.discretisation == "fd":
            options["averaging"] = self.averaging
        else:
            options["element"] = self.element
        return cls(**options)  # InputError for names the solver does not know

    def make_sampler(self, resolution: int) -> Any:
        """The GRF that is thresholded into the coefficient, on the ``n x n`` node grid."""
        grf = _grf_module()
        return grf.NeumannGRF(resolution, tau=self.grf_tau, alpha=self.grf_alpha)

    def solve_chunk(self, resolution: int, seeds: NDArray[np.uint64]) -> dict[str, NDArray[Any]]:
        """Sample the coefficients with per-sample ``seeds`` and solve.

        Returns ``a`` and ``u`` (``(c, n, n)``) and the per-sample ``iterations``,
        ``residual`` and ``solve_time``.
        """
        grf = _grf_module()
        field = self.make_sampler(resolution).sample(len(seeds), seeds=seeds)
        a = grf.threshold(field, high=self.contrast_high, low=self.contrast_low)
        u, report = self.make_solver().solve_with_report(a)
        out = {"a": np.ascontiguousarray(a, dtype=np.float64), "u": u}
        out.update(_report_arrays(report))
        return out


def config_class(problem: str) -> type[BurgersDataConfig] | type[DarcyDataConfig]:
    """The config class of ``problem`` ("burgers" or "darcy")."""
    classes = {"burgers": BurgersDataConfig, "darcy": DarcyDataConfig}
    try:
        return classes[problem]
    except KeyError:
        msg = f"`problem` must be one of 'burgers', 'darcy'; got {problem!r}."
        raise ConfigError(msg) from None
