"""The data and learning side of each problem: one :class:`ProblemKit` per problem.

:class:`solvers.problems.Problem` holds a problem's numerics (variables, dims, grid, solvers,
their capabilities, the ladder); its kit holds everything ``neuralop_fem`` needs beside them:

* **files**: the field variables with their dims and attributes, the dataset builder, the
  physical parameters an imported file must state, the keys of the legacy ``.mat`` files,
  the mappings of neuraloperator's and PDEBench's files (:mod:`.peer_formats`);
* **generation**: the :class:`~neuralop_fem.data.generation.DataConfig` class (which builds
  the solver through the registry), samples per chunk, the ``generate`` subcommand's help;
* **learning**: the torch dataset, whether inputs are normalised, the out-of-distribution
  statistics, whether models transfer to other grids directly, the training defaults and the
  model presets;
* **reproduction** (optional): what ``neuralop-fem reproduce`` needs to reproduce the
  paper's rows of the problem (:class:`~neuralop_fem.problems.reproduction.ReproductionSpec`).

Every table that used to be keyed by problem name (the schema's field tables, the dataset
builders, the provenance's physical parameters, the torch datasets, the OOD statistics, the
training defaults ...) is now read from the entries. A new problem is two entries::

    from solvers.problems import Problem
    from neuralop_fem.problems import ProblemKit, register_problem

    register_problem(Problem(name="wave", ...), ProblemKit(name="wave", ...))

References to heavy objects (torch datasets, dataset builders, config classes) may be given
as ``"package.module:attribute"`` strings, imported on first use, so that registering a
problem imports nothing heavy (``neuralop-fem --help`` stays light).

    >>> from neuralop_fem.problems import get_kit
    >>> kit = get_kit("burgers")
    >>> kit.chunk_size, kit.physics, kit.normalise_input, kit.direct_transfer
    (16, ('viscosity', 'final_time'), False, True)
    >>> sorted(kit.fields)
    ['u', 'u0']
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from solvers.problems import Problem, get_problem
from solvers.problems import register_problem as _register_numerics
from solvers.problems import unregister_problem as _unregister_numerics

from ..errors import InputError
from .peer_formats import NeuralopFormat, PDEBenchFormat, PeerTrajectory
from .reproduction import DataVariant, QuickScale, ReproductionSpec

__all__ = [
    "DataVariant",
    "NeuralopFormat",
    "PDEBenchFormat",
    "PeerTrajectory",
    "ProblemKit",
    "QuickScale",
    "ReproductionSpec",
    "data_problems",
    "generated_problems",
    "get_kit",
    "kit_table",
    "kits",
    "load",
    "register",
    "register_problem",
    "unregister_problem",
]

#: An object, or the ``"package.module:attribute"`` text that names it (imported on use).
Ref = Any


def load(ref: Ref) -> Any:
    """The object ``ref`` names: ``"package.module:attribute"`` is imported; anything else is
    returned as it is."""
    if not isinstance(ref, str):
        return ref
    module, sep, name = ref.partition(":")
    if not sep:
        msg = f"a reference must read 'package.module:attribute'; got {ref!r}."
        raise InputError(msg)
    obj: Any = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping))


def _check_peer_formats(kit: ProblemKit) -> None:
    """The peer-format fields of ``kit`` are mappings of the right kind, of its own fields."""
    for name, kind in (("neuralop_format", NeuralopFormat), ("pdebench_format", PDEBenchFormat)):
        fmt = getattr(kit, name)
        if fmt is None:
            continue
        if not isinstance(fmt, kind):
            msg = f"`{name}` must be a {kind.__name__} or None; got {fmt!r}."
            raise InputError(msg)
        if not kit.fields:
            msg = f"`{name}` needs the problem's `fields`; {kit.name!r} has none."
            raise InputError(msg)
        trajectory = fmt.trajectory
        if trajectory is not None and trajectory.field not in kit.optional_fields:
            msg = (f"`{name}.trajectory.field` must be one of the optional fields "
                   f"{list(kit.optional_fields)}; got {trajectory.field!r}.")
            raise InputError(msg)


@dataclass(frozen=True, kw_only=True)
class ProblemKit:
    """The data and learning facts of one problem (its numerics: :class:`~solvers.Problem`).

    Parameters
    ----------
    name
        The problem's registry name (its :class:`~solvers.problems.Problem` has the same).
    fields
        Field variables of its dataset files -> dims (``sample`` first), in file order;
        empty for a problem learned from another problem's files (``darcy-inverse``).
    optional_fields
        Fields a file may hold beside them (Burgers: the trajectory ``u_t``).
    variable_attrs
        ``units``, ``long_name`` (and ``comment``, ``axis``) of its fields, coordinates and of
        the diagnostics whose meaning depends on the problem (``iterations``, ``residual``).
    dataset_builder
        ``builder(inputs, outputs, *, seed, iterations, residual, solve_time, attrs, ...)``
        returning a validated :class:`xarray.Dataset` (e.g.
        :func:`~neuralop_fem.data.schema.burgers_dataset`).
    data_config
        The :class:`~neuralop_fem.data.generation.DataConfig` class of ``generate`` (None: the
        problem's data are not generated by this package).
    chunk_size
        Samples per chunk of ``generate`` (one solver call, one unit of resumption).
    generate_help, generate_description
        The one line and the paragraph of ``neuralop-fem generate NAME --help``.
    physics
        The physical parameters an imported file must state for its reference solver to be
        rebuilt (``import-mat --NAME VALUE``; ``generate`` always records them).
    mat_keys
        The (input, output) keys of the legacy FNO / Galerkin Transformer ``.mat`` files.
    neuralop_format, pdebench_format
        How neuraloperator's ``.pt`` dicts and PDEBench's HDF5 files map to its fields
        (:class:`~neuralop_fem.problems.peer_formats.NeuralopFormat`,
        :class:`~neuralop_fem.problems.peer_formats.PDEBenchFormat`); None: the tool has no
        files of the problem (``neuralop-fem import`` and ``export`` refuse it).
    dataset
        The torch dataset class of training (items ``input``, ``target``, ``grid`` ...).
    normalise_input
        Whether the network input is normalised pointwise (coefficients, observed solutions);
        the Burgers inputs stay raw.
    ood_features, ood_statistics
        Names of the out-of-distribution statistics and the function computing them,
        ``(n_samples, *grid) -> (n_samples, len(ood_features))``.
    direct_transfer
        Whether its models transfer to other grids when fed directly (else they are evaluated
        through their training grid by default).
    train_defaults
        :class:`~neuralop_fem.training.TrainConfig` fields of its presets (``resolution``,
        ``batch_size``, ``gamma`` ...).
    half_lr_attentions
        Model kinds (the last word of a preset name) trained at half the peak learning rate.
    presets
        Its model presets beyond :data:`neuralop_fem.models.PRESETS`: a mapping of preset
        name (``NAME-...``) -> model config, or a reference to one.
    reproduction
        Its :class:`~neuralop_fem.problems.reproduction.ReproductionSpec` (the sizes, grids
        and paper's numbers of ``neuralop-fem reproduce``), a reference to one, or None: the
        problem has no reproduction entry.
    torch_solvers
        The torch twins of its numpy solvers: short solver name (a key of the Problem's
        ``solvers``) -> the twin class or a reference to one, with a ``from_solver(solver, *,
        device, batch_size)`` constructor (:mod:`neuralop_fem.torch_solvers`); what
        ``generate --device`` solves with. Empty: no twin.
    """

    name: str
    fields: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    optional_fields: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    variable_attrs: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    dataset_builder: Ref = None
    data_config: Ref = None
    chunk_size: int = 4
    generate_help: str = ""
    generate_description: str = ""
    physics: tuple[str, ...] = ()
    mat_keys: tuple[str, str] | None = None
    neuralop_format: NeuralopFormat | None = None
    pdebench_format: PDEBenchFormat | None = None
    dataset: Ref = None
    normalise_input: bool = True
    ood_features: tuple[str, ...] = ()
    ood_statistics: Ref = None
    direct_transfer: bool = False
    train_defaults: Mapping[str, Any] = field(default_factory=dict)
    half_lr_attentions: frozenset[str] = frozenset()
    presets: Ref = None
    reproduction: Ref = None
    torch_solvers: Mapping[str, Ref] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("fields", "optional_fields", "variable_attrs", "train_defaults",
                     "torch_solvers"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))
        object.__setattr__(self, "half_lr_attentions", frozenset(self.half_lr_attentions))
        _check_peer_formats(self)
        if isinstance(self.chunk_size, bool) or not isinstance(self.chunk_size, int) \
                or self.chunk_size < 1:
            msg = f"`chunk_size` must be an integer >= 1; got {self.chunk_size!r}."
            raise InputError(msg)
        if bool(self.fields) != (self.dataset_builder is not None):
            msg = (f"`fields` and `dataset_builder` must be given together; got fields "
                   f"{dict(self.fields)} and dataset_builder {self.dataset_builder!r}.")
            raise InputError(msg)

    @property
    def problem(self) -> Problem:
        """The numerics of the problem (:func:`solvers.problems.get_problem`)."""
        return get_problem(self.name)

    @property
    def generated(self) -> bool:
        """Whether ``generate`` makes its datasets (it has a :attr:`data_config`)."""
        return self.data_config is not None

    @property
    def benchmark_resolution(self) -> int:
        """The grid of its benchmark datasets (its Problem's ``benchmark_resolution``)."""
        return self.problem.benchmark_resolution

    @property
    def has_files(self) -> bool:
        """Whether the problem has dataset files of its own (else it reads another's)."""
        return bool(self.fields)

    def config_class(self) -> type:
        """The :class:`~neuralop_fem.data.generation.DataConfig` class of ``generate``."""
        if self.data_config is None:
            msg = (f"`problem` must be one whose data are generated; {self.name!r} is learned "
                   f"from {self.problem.data_problem!r} data.")
            raise InputError(msg)
        return load(self.data_config)

    def builder(self) -> Callable[..., Any]:
        """The dataset builder (:attr:`dataset_builder`)."""
        return load(self.dataset_builder)

    def dataset_class(self) -> type:
        """The torch dataset class (:attr:`dataset`)."""
        return load(self.dataset)

    def statistics(self) -> Callable[..., Any]:
        """The out-of-distribution statistics function (:attr:`ood_statistics`)."""
        return load(self.ood_statistics)

    def model_presets(self) -> Mapping[str, Any]:
        """Its model presets beyond :data:`neuralop_fem.models.PRESETS` (may be empty)."""
        return {} if self.presets is None else load(self.presets)

    def torch_solver_class(self, name: str) -> type:
        """The torch twin of its numpy solver of short name ``name`` (:attr:`torch_solvers`).

        Raises
        ------
        InputError
            The solver has no twin (the message lists those that have one).
        """
        if name not in self.torch_solvers:
            have = ", ".join(map(repr, self.torch_solvers)) or "none"
            msg = (f"`solver` must be one with a torch twin for {self.name!r} ({have}); "
                   f"got {name!r}.")
            raise InputError(msg)
        return load(self.torch_solvers[name])

    def reproduction_spec(self) -> ReproductionSpec | None:
        """Its reproduction entry (:attr:`reproduction`), None when it has none.

        Raises
        ------
        InputError
            The entry (or what its reference names) is not a ReproductionSpec.
        """
        spec = None if self.reproduction is None else load(self.reproduction)
        if spec is not None and not isinstance(spec, ReproductionSpec):
            msg = (f"`reproduction` of {self.name!r} must be a ReproductionSpec; got "
                   f"{type(spec).__name__}.")
            raise InputError(msg)
        return spec


_KITS: dict[str, ProblemKit] = {}
_BUILTIN_LOADED = False


def _registry() -> dict[str, ProblemKit]:
    global _BUILTIN_LOADED
    if not _BUILTIN_LOADED:
        _BUILTIN_LOADED = True
        from . import builtin  # registers burgers, darcy and darcy-inverse

        for kit in builtin.KITS:
            _KITS.setdefault(kit.name, kit)
    return _KITS


def register(kit: ProblemKit) -> ProblemKit:
    """Add ``kit`` for its already registered :class:`~solvers.problems.Problem`; returns it.

    Raises
    ------
    InputError
        If the problem is not registered, or another kit of that name is.
    """
    if not isinstance(kit, ProblemKit):
        msg = f"`kit` must be a ProblemKit; got {type(kit).__name__}."
        raise InputError(msg)
    problem = get_problem(kit.name)
    if kit.has_files and problem.inverse:
        msg = (f"`kit.fields` must be empty for {kit.name!r}: it is learned from "
               f"{problem.data_problem!r} files.")
        raise InputError(msg)
    registry = _registry()
    old = registry.get(kit.name)
    if old is not None and old != kit:
        msg = f"`kit` {kit.name!r} is registered already, with other settings."
        raise InputError(msg)
    registry[kit.name] = kit
    return kit


def register_problem(problem: Problem, kit: ProblemKit) -> ProblemKit:
    """Register a new problem: its numerics (``problem``) and its data and learning kit.

    After this, ``generate``, ``load_dataset``, ``Trainer``, ``Surrogate`` and ``compare``
    handle it like the built-in problems.
    """
    if kit.name != getattr(problem, "name", None):
        msg = (f"`kit.name` must be the problem's name {getattr(problem, 'name', None)!r}; "
               f"got {kit.name!r}.")
        raise InputError(msg)
    _register_numerics(problem)
    return register(kit)


def unregister_problem(name: str) -> None:
    """Remove a problem added by :func:`register_problem`, both entries (e.g. at the end of a
    test); the built-in problems stay (:func:`solvers.problems.unregister_problem`)."""
    _unregister_numerics(name)
    _registry().pop(name, None)


def get_kit(name: str | Problem) -> ProblemKit:
    """The kit of problem ``name``.

    Raises
    ------
    InputError
        For an unknown problem (the message lists the known ones).
    """
    key = name.name if isinstance(name, Problem) else name
    registry = _registry()
    if key not in registry:
        valid = ", ".join(map(repr, registry))
        msg = f"`problem` must be one of {valid}; got {key!r}."
        raise InputError(msg)
    return registry[key]


def kits() -> tuple[ProblemKit, ...]:
    """Every registered kit, in registration order."""
    return tuple(_registry().values())


def generated_problems() -> tuple[str, ...]:
    """The problems whose datasets ``generate`` makes (``burgers``, ``darcy`` ...)."""
    return tuple(k.name for k in kits() if k.generated)


def data_problems() -> tuple[str, ...]:
    """The problems that have dataset files of their own (``burgers``, ``darcy`` ...)."""
    return tuple(k.name for k in kits() if k.has_files)


class _KitTable(Mapping[str, Any]):
    """A read-only mapping problem -> one attribute of its kit, read from the registry on
    every access (so problems registered later appear); kits that leave the attribute empty
    (None, ``()``, ``{}``) are not in it."""

    def __init__(self, attribute: str, where: Callable[[ProblemKit], bool] | None) -> None:
        self._attribute = attribute
        self._where = where

    def _names(self) -> list[str]:
        return [k.name for k in kits() if getattr(k, self._attribute)
                and (self._where is None or self._where(k))]

    def __getitem__(self, name: str) -> Any:
        if name not in self._names():
            raise KeyError(name)
        return getattr(get_kit(name), self._attribute)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def __repr__(self) -> str:
        return f"kit_table({self._attribute!r}: {dict(self)!r})"


def kit_table(attribute: str, *,
              where: Callable[[ProblemKit], bool] | None = None) -> Mapping[str, Any]:
    """A live read-only view ``problem -> getattr(kit, attribute)`` over the registered kits
    that set the attribute (and satisfy ``where``), for code that reads a per-problem
    mapping::

        >>> dict(kit_table("mat_keys"))
        {'burgers': ('a', 'u'), 'darcy': ('coeff', 'sol')}
    """
    return _KitTable(attribute, where)

