"""The rung of a solver ladder: one solver and its grid (:class:`Rung`; public as
:class:`solvers.ladder.Rung`).

Its own module so that the problem registry (:mod:`solvers.problems`), which builds each
problem's ladder, and :mod:`solvers.ladder`, which runs ladders and needs the registry, import
it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .checks import plain
from .errors import InputError

__all__ = ["Rung"]


@dataclass(frozen=True, kw_only=True)
class Rung:
    """One solver setting of a ladder.

    Parameters
    ----------
    solver
        Any object following the solver contract (``solve``; ideally ``solve_with_report``).
    resolution
        Points per dimension of the grid the solver runs on (the inputs are strided to it
        from the finest grid available); None: the comparison grid itself.
    label
        Short human-readable name, e.g. ``"FD 43 x 43, banded"``; default: the class name and
        resolution.
    """

    solver: object
    resolution: int | None = None
    label: str = ""

    def __post_init__(self) -> None:
        if not callable(getattr(self.solver, "solve", None)):
            msg = (f"`solver` of a Rung must follow the solver contract (a `solve` method); got "
                   f"{type(self.solver).__name__}.")
            raise InputError(msg)
        res = self.resolution
        if res is not None and (isinstance(res, bool) or not isinstance(res, int | np.integer)
                                or res < 2):
            msg = f"`resolution` must be None or an integer >= 2; got {plain(res)}."
            raise InputError(msg)
        if res is not None:
            object.__setattr__(self, "resolution", int(res))
        if not self.label:
            where = "" if res is None else f" at {res}"
            object.__setattr__(self, "label", f"{type(self.solver).__name__}{where}")
