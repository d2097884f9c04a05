"""The training configuration under its former module name, for the code that imports it from
here (the commands, ``reproduce``, scripts): :class:`TrainConfig` and the presets are defined
in :mod:`neuralop_fem.runs.train_config` (the record of a run holds them, and the run record
sits below training in the package's layers); the training modules import them from there."""

from __future__ import annotations

from ..runs.train_config import (
    AMP_CHOICES,
    DATA_ON_DEVICE_CHOICES,
    OPTIMIZERS,
    RESUME_FREE_FIELDS,
    SCHEDULERS,
    TASKS,
    TRAIN_PRESETS,
    TrainConfig,
    added_defaults,
    recorded_float32_parts,
    task_of_preset,
    training_preset,
)

__all__ = [
    "AMP_CHOICES",
    "DATA_ON_DEVICE_CHOICES",
    "OPTIMIZERS",
    "RESUME_FREE_FIELDS",
    "SCHEDULERS",
    "TASKS",
    "TRAIN_PRESETS",
    "TrainConfig",
    "added_defaults",
    "recorded_float32_parts",
    "task_of_preset",
    "training_preset",
]
