"""The torch twin of a numpy solver, found through the problem kits.

The twins themselves live in :mod:`neuralop_fem.torch_solvers`; which twin a solver has is the
kits' knowledge, so the lookup lives here (``neuralop-fem generate --device`` and the
like-for-like verdict use it). Importing this module imports no torch: the twin's class is
imported when :func:`twin_of` builds one.

Each problem kit names, in :attr:`~neuralop_fem.problems.ProblemKit.torch_solvers`, the torch
twin of each of its numpy solvers that has one (Burgers: ``"spectral"``; Darcy: ``"fd"`` on the
node grid). :func:`twin_of` builds the twin with the numpy solver's settings.
"""

from __future__ import annotations

from typing import Any

from solvers.problems import get_problem

from ..errors import InputError
from . import get_kit, kits

__all__ = ["twin_of", "twin_name"]


def twin_name(solver: Any) -> str | None:
    """The short name (a key of the problem's ``solvers``) of ``solver``'s class when its kit
    has a torch twin for it, else None."""
    problem = getattr(solver, "problem", None)
    if not isinstance(problem, str):
        return None
    spec = get_problem(problem)
    kit = get_kit(problem)
    for short in kit.torch_solvers:
        if type(solver) is spec.solver_class(short):
            return short
    return None


def twin_of(solver: Any, *, device: str, batch_size: int | None = None) -> Any:
    """The torch twin of the numpy ``solver`` on ``device`` (its settings, ``batch_size``
    samples per device call; None: a call's samples at once).

    Raises
    ------
    InputError
        The solver has no twin (the message lists the solvers that have one).
    """
    short = twin_name(solver)
    if short is None:
        problem = getattr(solver, "problem", "?")
        have = [get_problem(k.name).solver_class(s).__name__ for k in _kits_with_twins()
                for s in k.torch_solvers]
        msg = (f"`solver` {type(solver).__name__} ({problem}) has no torch twin; the solvers "
               f"that have one: {', '.join(have)}.")
        raise InputError(msg)
    cls = get_kit(solver.problem).torch_solver_class(short)
    return cls.from_solver(solver, device=device, batch_size=batch_size)


def _kits_with_twins() -> list[Any]:
    return [k for k in kits() if k.torch_solvers]
