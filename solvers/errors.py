"""Exceptions raised by neuralop_fem and the bundled solvers.

Every exception subclasses a builtin, so ``except ValueError`` keeps working, and
:class:`NeuralopFemError`, so the command line can turn any of them into a one-line
message.
"""

from __future__ import annotations

__all__ = [
    "ConvergenceError",
    "ConvergenceWarning",
    "InputError",
    "NeuralopFemError",
    "ShapeError",
]


class NeuralopFemError(Exception):
    """Base class of every error raised on behalf of the user."""


class InputError(NeuralopFemError, ValueError):
    """An argument has the wrong value, type, dtype or content (NaN, negative, ...)."""


class ShapeError(InputError):
    """An array has the wrong shape or dimensions for the grid or model."""


class ConvergenceError(NeuralopFemError, RuntimeError):
    """An iterative solve missed its tolerance; the sample must not be used."""


class ConvergenceWarning(UserWarning):
    """An iterative solve missed its tolerance and was redone by a robust method, or one
    sample of a batch failed and was reported as such while the others were kept."""
