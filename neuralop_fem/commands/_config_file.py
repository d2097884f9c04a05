"""Configuration files of ``neuralop-fem train`` (``--config`` / ``--print-config``; private).

A configuration file is YAML (``.yaml``, ``.yml``) or JSON (``.json``) holding a mapping with
the keys of :data:`KEYS`; every key is optional:

.. code-block:: yaml

    preset: burgers-galerkin
    data: burgers.nc
    out: runs/gt
    train_config: {epochs: 50, scheduler: cosine, warmup_epochs: 5}
    model_config: {d_model: 64}

``train_config`` and ``model_config`` may name any subset of the fields of
:class:`~neuralop_fem.training.TrainConfig` and of the preset's model config. A ``run.json``
written by a training run (it carries ``format``) is read as it is: its preset, data path,
model and training settings are taken and its results are ignored, so a finished run can be
trained again or varied. Relative paths are relative to the current directory.

Precedence, lowest first: the preset, the file, the command-line options, ``--set``.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..runs import RunRecord, migrate
from ..safe_documents import read_document
from ..safe_text import clipped_repr, printable

__all__ = ["FORMATS", "KEYS", "FileConfig", "dump_config", "format_of", "read_config"]

#: Config file formats by file-name suffix.
FORMATS = {".yaml": "yaml", ".yml": "yaml", ".json": "json"}
#: The keys of a configuration file and what each holds.
KEYS = {
    "preset": "a training preset name",
    "data": "a dataset path (or a run.json `data` record holding `path`)",
    "out": "a run directory path",
    "log": "an experiment log backend name or null",
    "train_config": "a mapping of TrainConfig fields",
    "model_config": "a mapping of the model config's fields",
}
#: The key that marks a ``run.json`` (read as a :class:`~neuralop_fem.runs.RunRecord`).
_RUN_JSON_KEY = "format"


@dataclass(frozen=True, kw_only=True)
class FileConfig:
    """What a configuration file sets (None / empty: not set by the file)."""

    preset: str | None = None
    data: Path | None = None
    out: Path | None = None
    log: str | None = None
    train_config: dict[str, Any] = field(default_factory=dict)
    model_config: dict[str, Any] = field(default_factory=dict)


def format_of(path: Path) -> str:
    """``"yaml"`` or ``"json"`` from the suffix of ``path``."""
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        msg = (f"argument --config: must be a file ending in {', '.join(FORMATS)}; got "
               f"{os.fspath(path)!r}.")
        raise ConfigError(msg)
    return fmt


def _path(value: object, key: str, source: str) -> Path:
    if isinstance(value, dict) and key == "data":  # a run.json's `data` record, copied
        value = value.get("path")
    if not isinstance(value, str) or not value:
        msg = f"{source}: `{key}` must be {KEYS[key]}; got {clipped_repr(value)}."
        raise ConfigError(msg)
    return Path(value)


def _mapping(value: object, key: str, source: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        msg = f"{source}: `{key}` must be {KEYS[key]}; got {clipped_repr(value)}."
        raise ConfigError(msg)
    return dict(value)


def read_config(path: Path) -> FileConfig:
    """Read a configuration file (see the module docstring).

    Raises
    ------
    ConfigError
        A suffix other than those of :data:`FORMATS`, text that does not parse or is refused
        by :func:`~neuralop_fem.safe_documents.read_document` (too large, nested too deep,
        too many YAML aliases, a key given twice), a document that is not a mapping, an
        unknown key (the message lists the valid ones) or a value of the wrong type (the
        message names the key, what it must be and what it got).
    """
    fmt = format_of(path)
    source = printable(os.fspath(path), limit=300)
    # Bounded: size, nesting, YAML aliases; a key given twice is refused (safe_documents).
    doc = read_document(path, fmt, what="a training configuration file")
    if not isinstance(doc, dict):
        msg = f"{source}: must hold a mapping of {', '.join(KEYS)}; got {type(doc).__name__}."
        raise ConfigError(msg)
    if _RUN_JSON_KEY in doc:
        return _from_run_record(RunRecord.from_dict(migrate(doc)), source)
    unknown = sorted(str(k) for k in doc if k not in KEYS)
    if unknown:
        msg = (f"{source}: unknown key(s) {clipped_repr(unknown)}; valid keys: "
               f"{', '.join(KEYS)} "
               "(or a run.json as written by a training run).")
        raise ConfigError(msg)
    log = doc.get("log")
    if log is not None and not isinstance(log, str):
        msg = f"{source}: `log` must be {KEYS['log']}; got {clipped_repr(log)}."
        raise ConfigError(msg)
    return FileConfig(
        preset=_preset(doc.get("preset"), source),
        data=None if doc.get("data") is None else _path(doc["data"], "data", source),
        out=None if doc.get("out") is None else _path(doc["out"], "out", source),
        log=log,
        train_config=_mapping(doc.get("train_config"), "train_config", source),
        model_config=_mapping(doc.get("model_config"), "model_config", source),
    )


def _preset(value: object, source: str) -> str | None:
    if value is not None and not isinstance(value, str):
        msg = f"{source}: `preset` must be {KEYS['preset']}; got {clipped_repr(value)}."
        raise ConfigError(msg)
    return value


def _from_run_record(record: RunRecord, source: str) -> FileConfig:
    """The settings of a training run's record: its preset, data path, model and training
    configurations (its results, output directory and log are not settings to repeat)."""
    return FileConfig(
        preset=_preset(record.preset, source),
        data=None if record.data_path is None else _path(record.data_path, "data", source),
        train_config=_mapping(record.train_config, "train_config", source),
        model_config=_mapping(record.model_config, "model_config", source),
    )


def _plain(value: object) -> object:
    """JSON/YAML-safe: tuples as lists, non-finite floats as strings."""
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def dump_config(config: dict[str, Any], fmt: str) -> str:
    """The text of a configuration file holding ``config`` (keys of :data:`KEYS`)."""
    doc = _plain(config)
    if fmt == "json":
        return json.dumps(doc, indent=2) + "\n"
    import yaml

    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)
