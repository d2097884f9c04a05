"""Training of the operator learners: losses, configuration, trainer, checkpoints, evaluation.

Public names: :class:`TrainConfig` and :data:`TRAIN_PRESETS` (the paper's settings per preset),
:class:`Trainer` (one resumable, optionally distributed run in a run directory),
:func:`load_trained` (the selected model of a run), :func:`evaluate_run` (per-sample relative
L2 / H1 errors at any reachable resolution) and the losses of :mod:`.losses`. See
``docs/training.md``.
"""

from __future__ import annotations

from .checkpoint import load_trained, read_run_info
from .config import TASKS, TRAIN_PRESETS, TrainConfig, training_preset
from .evaluate import evaluate_run, summarize
from .losses import operator_loss, relative_h1_error, relative_l2_error
from .setup import split_indices
from .trainer import Trainer

__all__ = [
    "TASKS",
    "TRAIN_PRESETS",
    "TrainConfig",
    "Trainer",
    "evaluate_run",
    "load_trained",
    "operator_loss",
    "read_run_info",
    "relative_h1_error",
    "relative_l2_error",
    "split_indices",
    "summarize",
    "training_preset",
]
