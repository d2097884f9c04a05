"""Training of the operator learners: the process that turns a dataset into a run directory.

This package owns the act of training: the losses (:mod:`.losses`), optimizer and schedules
(:mod:`.optim`), mixed precision (:mod:`.amp`), the data as the trainer feeds it (:mod:`.setup`,
the loaders of :mod:`.loaders`), distributed runs (:mod:`.distributed`), the divergence guard
(:mod:`.divergence`), the checkpoints it resumes from (``last.pt``, ``partial.pt``:
:mod:`.resume`, :mod:`.partial_checkpoint`) and the selected model ``best.pt`` (:mod:`.checkpoint`:
:func:`load_trained`, :func:`~.checkpoint.load_run`). The record ``run.json`` and the run
directory itself belong to :mod:`neuralop_fem.runs` (the trainer writes through its
:class:`~neuralop_fem.runs.RunDir`), and so do :class:`TrainConfig` and :data:`TRAIN_PRESETS`
(re-exported here). The evaluation of a finished run lives in :mod:`neuralop_fem.evaluation`
(:func:`~neuralop_fem.evaluation.evaluate_run`). See ``docs/training.md``.
"""

from __future__ import annotations

from ..runs.run_dir import read_run_info
from ..runs.train_config import TASKS, TRAIN_PRESETS, TrainConfig, training_preset
from .checkpoint import load_trained
from .losses import operator_loss, relative_h1_error, relative_l2_error
from .setup import split_indices
from .small_data import fit_to_data
from .trainer import Trainer

__all__ = [
    "TASKS",
    "TRAIN_PRESETS",
    "TrainConfig",
    "Trainer",
    "fit_to_data",
    "load_trained",
    "operator_loss",
    "read_run_info",
    "relative_h1_error",
    "relative_l2_error",
    "split_indices",
    "training_preset",
]

