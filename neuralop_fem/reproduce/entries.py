"""The problems' reproduction entries, as the reproduction reads them.

Every fact that differs between the reproduced problems (the quick sizes, the paper's dataset
size and evaluation grids, the paper's numbers, the named data variants) is its kit's
:class:`~neuralop_fem.problems.reproduction.ReproductionSpec`; these functions find it, and
say so in one line where a problem has none.
"""

from __future__ import annotations

from ..errors import ConfigError
from ..problems import ReproductionSpec, get_kit, kits

__all__ = ["named_values", "problem_of_file", "problem_prefix", "spec_of", "spec_or_none"]


def spec_or_none(task: object) -> ReproductionSpec | None:
    """The reproduction entry of problem ``task``; None for a problem without one, or for a
    name that is no registered problem (a record of an unknown task)."""
    known = {kit.name: kit for kit in kits()}
    kit = known.get(task) if isinstance(task, str) else None
    return None if kit is None else kit.reproduction_spec()


def spec_of(task: str, *, where: str = "") -> ReproductionSpec:
    """The reproduction entry of problem ``task``.

    Raises
    ------
    ConfigError
        The problem has no reproduction entry (the message names it, and ``where``: the
        argument it came from, e.g. ``--preset heat1d-fno``).
    InputError
        ``task`` is no registered problem.
    """
    spec = get_kit(task).reproduction_spec()
    if spec is None:
        reproduced = ", ".join(repr(k.name) for k in kits() if k.reproduction is not None)
        msg = (f"{where + ': ' if where else ''}problem {task!r} has no reproduction entry "
               f"(its ProblemKit sets no `reproduction`); `neuralop-fem reproduce` reproduces "
               f"the paper's rows of {reproduced}")
        raise ConfigError(msg)
    return spec


def named_values(parameter: str) -> dict[str, float]:
    """The named values of the data variant ``parameter`` (``viscosity``) over every
    reproduction entry: name -> value."""
    out: dict[str, float] = {}
    for kit in kits():
        spec = kit.reproduction_spec()
        variant = None if spec is None else spec.data_variant
        if variant is not None and variant.parameter == parameter:
            out.update(variant.values)
    return out


def problem_prefix(name: str, separator: str) -> str | None:
    """The registered problem that ``name`` starts with, followed by ``separator``
    (``burgers-galerkin`` with ``-``: ``burgers``), the longest such; None if none."""
    names = sorted((kit.name for kit in kits()), key=len, reverse=True)
    return next((p for p in names if name.startswith(p + separator)), None)


def problem_of_file(stem: str) -> str:
    """The problem of a reproduction dataset, from its file name (``<problem>_n..._N...``, as
    :func:`~neuralop_fem.reproduce.driver.data_file` names it).

    Raises
    ------
    ConfigError
        The name starts with no registered problem's.
    """
    problem = problem_prefix(stem, "_")
    if problem is None:
        msg = (f"dataset {stem!r}: a reproduction dataset's name starts with its problem "
               f"and '_' (one of {', '.join(repr(k.name) for k in kits())})")
        raise ConfigError(msg)
    return problem
