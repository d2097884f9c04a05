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

References to objects of the layers above (torch datasets, dataset builders, config classes,
torch twins) are given as ``"package.module:attribute"`` strings, imported on first use
(:mod:`.kit`): those packages read the kits, so the kits cannot import them, and registering
a problem imports nothing heavy (``neuralop-fem --help`` stays light).

    >>> from neuralop_fem.problems import get_kit
    >>> kit = get_kit("burgers")
    >>> kit.chunk_size, kit.physics, kit.normalise_input, kit.direct_transfer
    (16, ('viscosity', 'final_time'), False, True)
    >>> sorted(kit.fields)
    ['u', 'u0']
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from solvers.problems import Problem, get_problem
from solvers.problems import register_problem as _register_numerics
from solvers.problems import unregister_problem as _unregister_numerics

from ..errors import InputError
from .builtin import KITS
from .kit import ProblemKit, load
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

#: Problem name -> kit, in registration order: the built-in kits first.
_KITS: dict[str, ProblemKit] = {kit.name: kit for kit in KITS}


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
    old = _KITS.get(kit.name)
    if old is not None and old != kit:
        msg = f"`kit` {kit.name!r} is registered already, with other settings."
        raise InputError(msg)
    _KITS[kit.name] = kit
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
    _KITS.pop(name, None)


def get_kit(name: str | Problem) -> ProblemKit:
    """The kit of problem ``name``.

    Raises
    ------
    InputError
        For an unknown problem (the message lists the known ones).
    """
    key = name.name if isinstance(name, Problem) else name
    if key not in _KITS:
        valid = ", ".join(map(repr, _KITS))
        msg = f"`problem` must be one of {valid}; got {key!r}."
        raise InputError(msg)
    return _KITS[key]


def kits() -> tuple[ProblemKit, ...]:
    """Every registered kit, in registration order."""
    return tuple(_KITS.values())


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

