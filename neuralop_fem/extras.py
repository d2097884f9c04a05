"""The optional dependencies (the extras of ``pip install neuralop-fem[EXTRA]``) and the one way
to import them.

A feature behind an extra imports its package with :func:`require`, so that without the
extra the user reads which extra to install, for what, instead of a ``ModuleNotFoundError``
from deep inside (the command line shows it as one line, exit status 2).

>>> EXTRAS["distributed"]
'distributed'
>>> require("nomod", needed_for="a test")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
neuralop_fem.errors.MissingExtraError: a test needs the optional package `nomod`, which is ...
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import MissingExtraError

__all__ = ["EXTRAS", "require"]

#: Optional package -> the extra of the distribution that installs it.
EXTRAS = {"distributed": "distributed", "meshio": "mesh"}
#: Modules of other packages that work only with an optional package.
_NEEDS = {"skfem.io.meshio": "meshio"}


def require(module: str, *, needed_for: str) -> ModuleType:
    """Import ``module`` (an optional dependency) or raise :class:`MissingExtraError` naming
    ``needed_for`` and the extra that installs it.

    Parameters
    ----------
    module
        The import name, e.g. ``"distributed"`` or ``"skfem.io.meshio"`` (which needs
        ``meshio``).
    needed_for
        What the user asked for, e.g. ``"`scheduler` (--scheduler)"``.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = _NEEDS.get(module, module.split(".")[0])
        extra = EXTRAS.get(top)
        install = f" Install it with `pip install neuralop-fem[{extra}]`." if extra else ""
        msg = (f"{needed_for} needs the optional package `{top}`, which is not installed "
               f"({exc}).{install}")
        raise MissingExtraError(msg) from None
