"""The trained run as a typed object: its record, its directory, its settings.

This package owns everything about a training run that outlives the training process: the
record ``run.json`` as a frozen, typed :class:`RunRecord` (with :class:`DataRecord`,
:class:`Normalizers`, :class:`Splits` and :class:`Environment` for its parts, and
:func:`migrate` for older field names), the checks that refuse a damaged or tampered record
(:mod:`.validation`), the run directory :class:`RunDir` (the one reader and writer of
``run.json``; its files, its lock, the selected model's payload; :mod:`.operator` rebuilds
the model from it: ``load_run``), the training settings a run
records (:class:`TrainConfig` and the presets, :mod:`.train_config`), and where the zoo's run
directories are (``zoo:NAME``, :mod:`neuralop_fem.zoo_entries`; the weights file of an entry,
:mod:`.weights`). Training writes runs through it; the surrogate, evaluation, the zoo and
``reproduce`` read them through it, by typed fields. It sits above the data and models and
below training, and imports none of the packages above it.
"""

from __future__ import annotations

from ..zoo_entries import PREFIX, WEIGHTS, entry_dir, resolve_run_dir
from .record import (
    RUN_FORMAT,
    STATUSES,
    DataRecord,
    Environment,
    Normalizers,
    RunRecord,
    Splits,
    migrate,
)
from .run_dir import BEST, LAST, PARTIAL, RUN_FILES, RUN_JSON, RunDir, read_run_info, write_json
from .train_config import TRAIN_PRESETS, TrainConfig, training_preset
from .validation import Rollback, check_data_path, validate_run_info

__all__ = [
    "BEST",
    "LAST",
    "PARTIAL",
    "PREFIX",
    "RUN_FILES",
    "RUN_FORMAT",
    "RUN_JSON",
    "STATUSES",
    "TRAIN_PRESETS",
    "WEIGHTS",
    "DataRecord",
    "Environment",
    "Normalizers",
    "Rollback",
    "RunDir",
    "RunRecord",
    "Splits",
    "TrainConfig",
    "check_data_path",
    "entry_dir",
    "migrate",
    "read_run_info",
    "resolve_run_dir",
    "training_preset",
    "validate_run_info",
    "write_json",
]
