"""Exceptions of :mod:`neuralop_fem`.

Re-exports every exception of :mod:`solvers.errors` (so ``neuralop_fem.errors`` is the one
place to import them from) and adds the errors of the data layer and configuration.
Every class subclasses a builtin, so ``except ValueError`` keeps working, and
:class:`NeuralopFemError`, so the command line turns any of them into a one-line message.
"""

from __future__ import annotations

from solvers.errors import ConvergenceError, InputError, NeuralopFemError, ShapeError

__all__ = [
    "ConfigError",
    "ConvergenceError",
    "DatasetError",
    "InputError",
    "MissingExtraError",
    "NeuralopFemError",
    "RunDirectoryError",
    "ShapeError",
    "TrainingDivergedError",
    "UsageError",
]


class DatasetError(NeuralopFemError, ValueError):
    """A dataset file or in-memory dataset does not follow the neuralop_fem schema.

    The message names the file (or ``<in-memory dataset>``) and what is wrong.
    """


class MissingExtraError(NeuralopFemError, ImportError):
    """A feature needs an optional dependency that is not installed; the message names the
    extra to install (``pip install neuralop-fem[EXTRA]``)."""


class ConfigError(InputError):
    """A configuration (generation, training, preset) has an invalid or inconsistent value."""


class RunDirectoryError(InputError):
    """A training run directory, or a checkpoint / model file, cannot be used as it is.

    Raised for a missing, truncated, unreadable or tampered ``run.json``, ``last.pt``,
    ``best.pt`` or model file, a field of one with a wrong type or an out-of-range value, a
    model config beyond the size limits, or a run directory that is a symbolic link. The
    message names the file and the field, what was expected and what was found.
    """


class UsageError(InputError):
    """A command-line option or argument has a value the command cannot use.

    Raised by the ``neuralop-fem`` commands when they check their options, before any work;
    the message names the option (``argument --out: ...``), what was expected and what was
    received.
    """


class TrainingDivergedError(NeuralopFemError, RuntimeError):
    """Training diverged and the divergence guard gave up
    (:mod:`neuralop_fem.training.divergence`): the message names the run directory, the
    epoch, what diverged, the model kept in ``best.pt`` and how to go on."""
