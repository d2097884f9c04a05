"""Training of the operator learners: losses, configuration, trainer, checkpoints.

Public names: :class:`TrainConfig` and :data:`TRAIN_PRESETS` (the paper's settings per preset),
:class:`Trainer` (one resumable, optionally distributed run in a run directory),
:func:`load_trained` (the selected model of a run), :func:`fit_to_data` (a preset's split and
grid fitted to a small file) and the losses of :mod:`.losses`. See
``docs/training.md``. The evaluation of a finished run lives in :mod:`neuralop_fem.evaluation`
(:func:`~neuralop_fem.evaluation.evaluate_run`); it is also reachable here under its old name.
"""

from __future__ import annotations

from typing import Any

from .checkpoint import load_trained, read_run_info
from .config import TASKS, TRAIN_PRESETS, TrainConfig, training_preset
from .fitting import fit_to_data
from .losses import operator_loss, relative_h1_error, relative_l2_error
from .setup import split_indices
from .trainer import Trainer

__all__ = [
    "TASKS",
    "TRAIN_PRESETS",
    "TrainConfig",
    "Trainer",
    "evaluate_run",
    "fit_to_data",
    "load_trained",
    "operator_loss",
    "read_run_info",
    "relative_h1_error",
    "relative_l2_error",
    "split_indices",
    "summarize",
    "training_preset",
]


def __getattr__(name: str) -> Any:
    # evaluate_run and summarize moved to neuralop_fem.evaluation (which imports this package,
    # so they are re-exported on first use, not at import).
    if name in ("evaluate_run", "summarize"):
        from .. import evaluation

        return getattr(evaluation, name)
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)
