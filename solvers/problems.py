"""The problem registry: every problem the package solves or learns, named once.

A :class:`Problem` is a frozen description of one input -> output map: the names and dims of
its input and output variables, its grid convention and coordinates, the rule that takes a
grid to a coarser one, and its classical solvers by short name. Everything that used to
compare problem strings asks the registry instead::

    >>> from solvers.problems import get_problem
    >>> p = get_problem("darcy")
    >>> p.input_name, p.output_name, p.dims, p.grid
    ('a', 'u', ('x', 'y'), 'nodes')
    >>> p.stride(421, 141), p.default_solver, type(p.make_solver()).__name__
    (3, 'fd', 'DarcyFDSolver')
    >>> get_problem("wave")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    solvers.errors.InputError: `problem` must be one of 'burgers', 'darcy', ...; got 'wave'.

Grids
-----
* ``"periodic"`` (Burgers): ``x_i = i/n``, ``i = 0..n-1`` on [0, 1) (no duplicated endpoint); a
  coarser grid of ``n`` points is reachable from ``n_full`` when ``n_full % n == 0``
  (stride ``n_full // n``: 8192 -> 2048 -> 512).
* ``"nodes"`` (Darcy): ``n x n`` nodes ``x_i = i/(n-1)`` on [0, 1]^2 including the boundary;
  reachable when ``(n_full - 1) % (n - 1) == 0`` (stride ``(n_full - 1) // (n - 1)``:
  421 -> 211 -> 141 -> 85).

Darcy datasets may also use the other grids of :mod:`solvers.grids` (cell centres,
``x_i = i/n``), each solved by the solver :attr:`Problem.grid_solvers` names.

A new problem is one :class:`Problem` given to :func:`register_problem` (the built-in ones
below), plus its data/learning kit on the :mod:`neuralop_fem.problems` side.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from .errors import InputError
from .grids import grid_coordinates, grid_reachable, grid_stride
from .ladder_rung import Rung

if TYPE_CHECKING:  # pragma: no cover
    from .contract import Solver

__all__ = ["CAPABILITIES", "GRIDS", "PROBLEMS", "Problem", "get_problem", "grid_reachable",
           "grid_stride", "problem_of", "register_problem", "unregister_problem"]

#: Grid conventions (see the module docstring).
GRIDS = ("periodic", "nodes")

#: What a problem's classical solvers can do, as :attr:`Problem.capabilities`:
#:
#: * ``"warm_start"``: they take an ``initial_guess`` and report iterations that a better
#:   guess reduces (one linear system per sample: a surrogate prediction warm-starts it);
#: * ``"energy_norm"``: the output has the energy norm of a symmetric positive operator built
#:   from the input, and the PDE residual of a prediction can be computed;
#: * ``"linear_solves"``: they take a ``linear_solver`` (one of :attr:`Problem.linear_solvers`).
CAPABILITIES = ("warm_start", "energy_norm", "linear_solves")


def _check_grid(grid: str) -> str:
    if grid not in GRIDS:
        msg = f"`grid` must be one of {GRIDS}; got {grid!r}."
        raise InputError(msg)
    return grid


@dataclass(frozen=True, kw_only=True)
class Problem:
    """One problem: variables, grid, coarsening rule and classical solvers.

    Parameters
    ----------
    name
        Registry key, e.g. ``"burgers"``.
    summary
        One line: the map and the equation.
    input_name, output_name
        Variable names of the input and of the solution, as stored in datasets and taken by
        the solvers (Burgers ``u0 -> u``; Darcy ``a -> u``; inverse Darcy ``u -> a``).
    dims
        Spatial dimensions after the leading ``sample`` dimension.
    grid
        ``"periodic"`` or ``"nodes"`` (see the module docstring).
    data_problem
        The dataset problem that provides the samples (the inverse problem learns from Darcy
        datasets, so its ``data_problem`` is ``"darcy"``).
    solvers
        Short solver name -> the solver class, or ``"module:Class"`` imported on use (a
        module without a dot is one of :mod:`solvers`, e.g. ``"darcy:DarcyFDSolver"``).
    default_solver
        The short name of the solver that produced the benchmark data.
    positive_input
        Whether the input must be > 0 everywhere (a coefficient).
    zero_boundary_output
        Whether the output vanishes on the boundary (Dirichlet), so predictions can be
        projected onto that condition.
    capabilities
        What the classical solvers can do, a subset of :data:`CAPABILITIES` (ask with
        :meth:`can`).
    benchmark_resolution
        Grid of the benchmark datasets; coarser data are strided subsamples of it.
    physics
        Solver settings that are physics, not numerics (a ladder's rungs take them from the
        reference solver): Burgers ``viscosity``, ``final_time``, ``output_times``; Darcy
        ``forcing``; inverse Darcy ``forcing``, ``averaging`` (the forward model) and
        ``bounds`` (what is known of the coefficient).
    ladder_settings
        The problem's solver ladder for the fair verdict, coarse to fine: one
        ``(solver short name, resolution, ((setting, value), ...), label)`` per rung; see
        :meth:`ladder` and :mod:`solvers.ladder`.
    linear_solvers
        The linear solvers its classical solvers take as ``linear_solver`` (e.g. ``"gmg"``,
        ``"amg"``, ``"cg"``, ``"direct"``), the default first; empty when they take none (the
        inverse problem has them: each inversion does many linear solves).
    grid_solvers
        The other grid conventions (:mod:`solvers.grids`) its datasets may use, each with the
        short name of the solver that solves on it (Darcy: ``"cell-centred"`` -> ``"fd-cells"``,
        ``"half-open"`` -> ``"fd-half-open"``); empty when the problem has only :attr:`grid`.
    """

    name: str
    summary: str
    input_name: str
    output_name: str
    dims: tuple[str, ...]
    grid: str
    data_problem: str
    solvers: Mapping[str, str]
    default_solver: str
    positive_input: bool
    zero_boundary_output: bool
    capabilities: frozenset[str] = frozenset()
    benchmark_resolution: int
    physics: tuple[str, ...] = ()
    ladder_settings: tuple[tuple[str, int, tuple[tuple[str, object], ...], str], ...] = ()
    linear_solvers: tuple[str, ...] = ()
    grid_solvers: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_grid(self.grid)
        unknown = set(self.capabilities) - set(CAPABILITIES)
        if unknown:
            msg = f"`capabilities` must be among {CAPABILITIES}; got {sorted(unknown)}."
            raise InputError(msg)
        if ("linear_solves" in self.capabilities) != bool(self.linear_solvers):
            msg = ("`capabilities` must hold 'linear_solves' exactly when `linear_solvers` is "
                   f"not empty; got {sorted(self.capabilities)} and {self.linear_solvers}.")
            raise InputError(msg)
        object.__setattr__(self, "capabilities", frozenset(self.capabilities))
        if self.default_solver not in self.solvers:
            msg = (f"`default_solver` must be one of {sorted(self.solvers)}; got "
                   f"{self.default_solver!r}.")
            raise InputError(msg)
        object.__setattr__(self, "solvers", MappingProxyType(dict(self.solvers)))
        unknown = {k: v for k, v in self.grid_solvers.items() if v not in self.solvers}
        if unknown:
            msg = f"`grid_solvers` must name solvers of {sorted(self.solvers)}; got {unknown}."
            raise InputError(msg)
        object.__setattr__(self, "grid_solvers", MappingProxyType(dict(self.grid_solvers)))

    def can(self, capability: str) -> bool:
        """Whether the classical solvers have ``capability`` (one of :data:`CAPABILITIES`)."""
        if capability not in CAPABILITIES:
            msg = f"`capability` must be one of {CAPABILITIES}; got {capability!r}."
            raise InputError(msg)
        return capability in self.capabilities

    # -- grids ----------------------------------------------------------------------------
    @property
    def periodic(self) -> bool:
        """True on the periodic grid ``x_i = i/n``."""
        return self.grid == "periodic"

    @property
    def inverse(self) -> bool:
        """True for a problem learned from another problem's datasets (input and output swapped)."""
        return self.data_problem != self.name

    @property
    def ndim(self) -> int:
        """Number of spatial dimensions."""
        return len(self.dims)

    def coordinates(self, n: int) -> NDArray[np.float64]:
        """The ``n`` grid coordinates along each spatial dimension
        (:func:`solvers.grids.grid_coordinates` of :attr:`grid`)."""
        return grid_coordinates(self.grid, n)

    def describe_grid(self, n: int) -> str:
        """One line naming the grid of ``n`` points per dimension, e.g. for ``info``."""
        if self.periodic:
            return f"{n} points, periodic x_i = i/{n} on [0, 1)"
        side = " x ".join([str(n)] * self.ndim)
        return f"{side} nodes, x_i = i/{n - 1} on [0, 1]^{self.ndim} (boundary incl.)"

    def reachable(self, n_full: int) -> list[int]:
        """Resolutions reachable from ``n_full`` by strided subsampling, ascending."""
        return grid_reachable(self.grid, n_full)

    def stride(self, n_full: int, n: int) -> int:
        """The stride that takes ``n_full`` points to ``n`` points.

        Raises
        ------
        InputError
            If ``n`` is not reachable; the message lists the reachable resolutions.
        """
        return grid_stride(self.grid, n_full, n)

    # -- solvers --------------------------------------------------------------------------
    def solver_class(self, name: str | None = None) -> type:
        """The solver class of short name ``name`` (None: the default solver)."""
        key = self.default_solver if name is None else name
        if key not in self.solvers:
            valid = ", ".join(map(repr, self.solvers))
            msg = f"`solver` must be one of {valid} for {self.name}; got {name!r}."
            raise InputError(msg)
        return _load_class(self.solvers[key])

    def make_solver(self, name: str | None = None) -> Solver:
        """A solver of short name ``name`` with its default settings (None: the default)."""
        return self.solver_class(name)()

    def ladder(self, *, like: object = None) -> list[Rung]:
        """The problem's solver ladder, coarse to fine (:mod:`solvers.ladder`).

        Each rung is a solver with the settings of :attr:`ladder_settings`, run on inputs
        strided to its resolution (reachable from the benchmark grid), its answer interpolated
        to the comparison grid. Empty for a problem without one.

        Parameters
        ----------
        like
            A solver whose physics the rungs take over (the :attr:`physics` fields it has,
            e.g. the viscosity of the solver that generated a dataset); None: the defaults.
        """
        physics = {f: getattr(like, f) for f in self.physics if hasattr(like, f)}
        rungs = []
        for name, n, settings, label in self.ladder_settings:
            cls = self.solver_class(name)
            fields = getattr(cls, "__dataclass_fields__", {})
            own = {k: v for k, v in physics.items() if k in fields}
            rungs.append(Rung(solver=cls(**dict(settings), **own), resolution=n, label=label))
        return rungs

    def solver_name(self, solver: object) -> str | None:
        """The short name of ``solver``'s class, or None if it is not one of this problem's."""
        cls = type(solver)
        return next((k for k, v in self.solvers.items()
                     if (v is cls if isinstance(v, type) else _qualified(v) == _qualified(cls))),
                    None)


def _qualified(ref: str | type) -> str:
    """``"package.module:Class"`` of a class or of a reference (a dotless module is one of
    :mod:`solvers`)."""
    if isinstance(ref, type):
        return f"{ref.__module__}:{ref.__qualname__}"
    module, _, name = ref.partition(":")
    return f"{module if '.' in module else 'solvers.' + module}:{name}"


def _load_class(ref: str | type) -> type:
    if isinstance(ref, type):
        return ref
    module, _, name = _qualified(ref).partition(":")
    return getattr(importlib.import_module(module), name)


_BURGERS = Problem(
    name="burgers",
    summary="u0 -> u(., T) of u_t + u u_x = nu u_xx, periodic on [0, 1)",
    input_name="u0", output_name="u", dims=("x",), grid="periodic", data_problem="burgers",
    solvers={"spectral": "burgers:BurgersSpectralSolver", "fd": "burgers:BurgersFDSolver"},
    default_solver="spectral", positive_input=False, zero_boundary_output=False,
    benchmark_resolution=8192,
    physics=("viscosity", "final_time", "output_times"),
    # Spectral on coarse grids with large steps: errors 4.8e-2 (16) ... 3.4e-5 (512) against
    # the n = 8192 solution strided to 512 (the time step barely matters at these dt); the FD
    # solver is two orders of magnitude dearer at equal error, so it is not on the front.
    ladder_settings=tuple(
        ("spectral", n, (("dt", dt),), f"spectral n = {n}, dt = {dt:g}")
        for n, dt in ((16, 0.1), (32, 0.1), (64, 0.05), (128, 0.05), (256, 0.02), (512, 0.01))
    ),
)
_DARCY = Problem(
    name="darcy",
    summary="a -> u of -div(a grad u) = f on [0, 1]^2, u = 0 on the boundary",
    input_name="a", output_name="u", dims=("x", "y"), grid="nodes", data_problem="darcy",
    solvers={"fd": "darcy:DarcyFDSolver", "fem": "darcy:DarcyFEMSolver",
             "fd-cells": "darcy_grid_variants:DarcyCellFDSolver",
             "fd-half-open": "darcy_grid_variants:DarcyHalfOpenFDSolver"},
    default_solver="fd", positive_input=True, zero_boundary_output=True,
    capabilities=frozenset({"warm_start", "energy_norm", "linear_solves"}),
    benchmark_resolution=421, physics=("forcing",),
    linear_solvers=("gmg", "amg", "cg", "direct", "banded", "dst-cg"),
    grid_solvers={"cell-centred": "fd-cells", "half-open": "fd-half-open"},
    # FD on grids reachable from 421 (coefficient strided), banded Cholesky up to 22, then CG
    # with the fast-Poisson preconditioner (the faster of the two from 29 up) to relative
    # residual 1e-4: its algebraic error, 5e-7 to 2e-6, leaves the rung's error against the 421
    # solution unchanged to four digits (benchmarks/bench_rungs.py), so a tighter tolerance
    # would only cost time. Errors 3.5e-2 (15) ... 1.1e-3 (211) against the 421 solution.
    ladder_settings=tuple(
        ("fd", n, (("linear_solver", ls), ("tol", tol), ("batch_size", 64)),
         f"FD {n} x {n}, {ls}" + (f" tol {tol:g}" if ls != "banded" else ""))
        for n, ls, tol in ((15, "banded", 1e-10), (22, "banded", 1e-10), (29, "dst-cg", 1e-4),
                           (43, "dst-cg", 1e-4), (61, "dst-cg", 1e-4), (85, "dst-cg", 1e-4),
                           (106, "dst-cg", 1e-4), (141, "dst-cg", 1e-4), (211, "dst-cg", 1e-4))
    ),
)
_DARCY_INVERSE = Problem(
    name="darcy-inverse",
    summary="u (+ noise) -> a of -div(a grad u) = f, the coefficient identification problem",
    input_name="u", output_name="a", dims=("x", "y"), grid="nodes", data_problem="darcy",
    solvers={"adjoint": "darcy_inverse:DarcyInverseSolver"},
    default_solver="adjoint", positive_input=False, zero_boundary_output=False,
    capabilities=frozenset({"linear_solves"}), benchmark_resolution=421,
    linear_solvers=("gmg", "amg", "cg", "direct"),
    physics=("forcing", "averaging", "bounds"),
    # The inversion on coarser observation grids (observations strided, the coefficient
    # interpolated bilinearly to the comparison grid), its L-BFGS-B iterations capped at half
    # the reference's 40 and the stopping looser (discrepancy factor 2, noise-free misfit
    # target 1 %: a coarse forward model cannot fit data from a finer one to 0.1 %), linear
    # solves to 1e-8 (direct up to 43). The caller keeps the rungs reachable from its grid.
    ladder_settings=tuple(
        ("adjoint", n, (("maxiter", it), ("tau", 2.0), ("misfit_tol", 1e-2), ("tol", 1e-8),
                        ("linear_solver", "direct" if n <= 43 else "gmg")),
         f"inversion {n} x {n}, maxiter {it}")
        for n, it in ((9, 20), (15, 20), (22, 20), (29, 20), (36, 20), (43, 20),
                      (71, 20), (85, 20), (141, 20))
    ),
)

_BUILTIN = frozenset(p.name for p in (_BURGERS, _DARCY, _DARCY_INVERSE))
_REGISTRY: dict[str, Problem] = {p.name: p for p in (_BURGERS, _DARCY, _DARCY_INVERSE)}
#: Every problem by name (a read-only view: :func:`register_problem` adds to it).
PROBLEMS: Mapping[str, Problem] = MappingProxyType(_REGISTRY)


def register_problem(problem: Problem) -> Problem:
    """Add ``problem`` to the registry, so that :func:`get_problem` and everything that asks
    it (the data layer, training, surrogates, ``compare``) know it; returns it.

    Registering the same entry again is a no-op (a module imported twice); the data and
    learning side of a problem is registered with :func:`neuralop_fem.problems.register`.

    Raises
    ------
    InputError
        If ``problem`` is not a :class:`Problem`, or its name is taken by another entry.
    """
    if not isinstance(problem, Problem):
        msg = f"`problem` must be a solvers.problems.Problem; got {type(problem).__name__}."
        raise InputError(msg)
    old = _REGISTRY.get(problem.name)
    if old is not None and old != problem:
        msg = f"`problem` {problem.name!r} is registered already, with other settings."
        raise InputError(msg)
    if problem.data_problem not in _REGISTRY and problem.data_problem != problem.name:
        msg = (f"`data_problem` must be a registered problem or {problem.name!r}; got "
               f"{problem.data_problem!r}.")
        raise InputError(msg)
    _REGISTRY[problem.name] = problem
    return problem


def unregister_problem(name: str) -> None:
    """Remove a problem added by :func:`register_problem` (e.g. at the end of a test); the
    built-in problems stay.

    Raises
    ------
    InputError
        For a built-in problem, or one that another registered problem learns from.
    """
    if name in _BUILTIN:
        msg = f"`name` must be a problem added by register_problem; got built-in {name!r}."
        raise InputError(msg)
    users = [p.name for p in _REGISTRY.values() if p.data_problem == name and p.name != name]
    if users:
        msg = f"`name` {name!r} must not be the data problem of {users}; remove those first."
        raise InputError(msg)
    _REGISTRY.pop(name, None)


def get_problem(name: str | Problem) -> Problem:
    """The :class:`Problem` named ``name`` (a :class:`Problem` is returned unchanged).

    Raises
    ------
    InputError
        (a ``ValueError``) for an unknown name; the message lists the known names.
    """
    if isinstance(name, Problem):
        return name
    try:
        return PROBLEMS[name]
    except (KeyError, TypeError):
        valid = ", ".join(map(repr, PROBLEMS))
        msg = f"`problem` must be one of {valid}; got {name!r}."
        raise InputError(msg) from None


def problem_of(solver: object) -> Problem | None:
    """The problem a solver or surrogate declares in its ``problem`` attribute (None if none)."""
    name = getattr(solver, "problem", None)
    if isinstance(name, Problem):
        return name
    return PROBLEMS.get(name) if isinstance(name, str) else None
