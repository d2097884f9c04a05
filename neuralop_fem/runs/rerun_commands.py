"""The commands that regenerate a run's data and train the run again.

A zoo card and a reproduction row both describe a run by the ``neuralop-fem generate``
command of its training file (:func:`generate_command`, from the generation settings the file
records) and the ``neuralop-fem train`` command of its settings (:func:`train_command`, every
model and training setting that differs from its preset, :func:`changes`). Both read them from
the run record; neither imports the other.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..data.generation import config_class
from ..models import PRESETS
from .train_config import RESUME_FREE_FIELDS, training_preset

__all__ = ["changes", "generate_command", "train_command"]

#: The generation settings every ``generate`` command names.
_FIXED = ("problem", "resolution", "dataset_seed", "dtype")
#: The ``train`` options of training settings (the others are given as ``--set KEY=VALUE``).
_FLAGS = {"epochs": "--epochs", "batch_size": "--batch-size", "lr_max": "--lr",
          "seed": "--seed", "resolution": "--resolution", "n_train": "--n-train",
          "n_val": "--n-val", "n_test": "--n-test", "noise": "--noise", "amp": "--amp"}


def generate_command(problem: str, n_samples: int, settings: Mapping[str, Any] | None,
                     path: Path) -> str | None:
    """The ``neuralop-fem generate`` command that regenerates a file of ``n_samples`` samples
    of ``problem`` with the generation ``settings`` it records (bit for bit where numpy and
    BLAS choose the same kernels, to rounding elsewhere: ``neuralop-fem reproduce
    check-data``); None for settings of another source, or damaged ones."""
    if not settings or any(key not in settings for key in _FIXED):
        return None  # settings of another source, or damaged: no command regenerates them
    config = config_class(problem).from_stored({k: v for k, v in settings.items()
                                                if k not in _FIXED})
    settings = {**{k: settings[k] for k in _FIXED}, **config.to_dict()}
    parts = ["neuralop-fem", "generate", problem, "--samples", str(n_samples), "--resolution",
             str(settings["resolution"]), "--seed", str(settings["dataset_seed"]), "--dtype",
             str(settings["dtype"]), "--out", str(path)]
    for key, value in sorted(settings.items()):
        if key in _FIXED or value is None:
            continue
        flag = "--" + key.replace("_", "-")
        if isinstance(value, list):
            parts += [flag, *map(repr, value)]
        else:
            parts += [flag, repr(value) if isinstance(value, float) else str(value)]
    return " ".join(shlex.quote(p) for p in parts)


def changes(preset: str, model_config: Mapping[str, Any],
            train_config: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(model config changes, training config changes) of a run's recorded configs against
    its ``preset``; the resume-free training settings (where it ran, not what it learned) are
    left out."""
    base_model = PRESETS[preset].to_dict()
    base_train = training_preset(preset).to_dict()
    model = {k: v for k, v in model_config.items() if base_model.get(k) != v}
    skip = set(RESUME_FREE_FIELDS)
    train = {k: v for k, v in train_config.items() if k not in skip and base_train.get(k) != v}
    return model, train


def train_command(preset: str, data: Path, run_dir: Path, model_changes: Mapping[str, Any],
                  train_changes: Mapping[str, Any]) -> str:
    """The ``neuralop-fem train`` command of ``preset`` with these :func:`changes`, on
    ``data``, into ``run_dir``.

    >>> train_command("burgers-fno", Path("b.nc"), Path("runs/b"), {}, {"epochs": 3})
    'neuralop-fem train --data b.nc --preset burgers-fno --out runs/b --epochs 3'
    """
    parts = ["neuralop-fem", "train", "--data", str(data), "--preset", str(preset),
             "--out", str(run_dir)]
    for key, value in train_changes.items():
        if key in _FLAGS:
            parts += [_FLAGS[key], str(value)]
        else:
            parts += ["--set", f"{key}={json.dumps(value)}"]
    for key, value in model_changes.items():
        parts += ["--set", f"{key}={json.dumps(value)}"]
    return " ".join(shlex.quote(p) for p in parts)
