"""Checking ``run.json``: the file checked first, then every field the package uses.

``run.json`` is written by the :class:`~neuralop_fem.training.Trainer` (through
:class:`~neuralop_fem.runs.RunDir`) but read back by :meth:`~neuralop_fem.runs.RunDir.read`
(for :func:`~neuralop_fem.training.load_trained`, :meth:`~neuralop_fem.Surrogate.load`,
``neuralop-fem evaluate``, the zoo and ``reproduce``), possibly long after, from a directory
anybody could have edited. So the file must be a regular UTF-8 JSON file of at
most :data:`MAX_JSON_BYTES` bytes, nested at most :data:`MAX_JSON_DEPTH` levels, and each
field that is present must have its documented type and range (a resolution is an integer in
``[1, 65536]``, split indices are integers ``>= 0`` below the dataset's sample count, the
training config validates, ...). Fields absent from older or hand-written files are not
required here; a reader that needs one asks :meth:`~.record.RunRecord.require`. Every failure is a
:class:`~neuralop_fem.errors.RunDirectoryError` that names the file and the field.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, TypedDict

import numpy as np

from solvers.checks import is_int, is_real
from solvers.problems import PROBLEMS, get_problem

from ..data.io import is_netcdf_file, load_dataset
from ..data.ood import OODReference
from ..data.provenance import generation_settings, solver_from_record
from ..errors import DatasetError, RunDirectoryError
from ..models import MODEL_FAMILIES
from ..models.size import check_resolution
from ..safe_documents import read_json_file
from .record import RUN_FORMAT, STATUSES
from .train_config import TrainConfig

__all__ = [
    "MAX_JSON_BYTES",
    "MAX_JSON_DEPTH",
    "ROLLBACK_FIELDS",
    "check_data_path",
    "read_json_file",
    "Rollback",
    "rollback_entry_ok",
    "validate_run_info",
]

#: Largest ``run.json`` read (its split indices take ~7 bytes per sample).
MAX_JSON_BYTES = 64 * 2**20
#: Deepest nesting of lists / objects accepted (``run.json`` itself uses 4 levels).
MAX_JSON_DEPTH = 32

_INT_FIELDS = ("epochs_completed", "best_epoch", "world_size", "n_parameters")
_NUMBER_FIELDS = ("wall_time_s", "best_val_rel_l2", "test_rel_l2_best", "test_rel_l2_final",
                  "val_rel_l2_final", "peak_lr")
_SPLITS = ("train", "val", "test")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _fail(source: Any, field: str, expected: str, value: Any) -> RunDirectoryError:
    return RunDirectoryError(f"{source}: field `{field}` must be {expected}; got {_short(value)}.")


def _check_choice(info: dict[str, Any], key: str, options: tuple[str, ...], source: Any) -> None:
    if key in info and info[key] is not None and info[key] not in options:
        raise _fail(source, key, f"one of {', '.join(map(repr, options))}", info[key])


class Rollback(TypedDict):
    """One epoch undone by the divergence guard (:mod:`.divergence`): its number (from 1), its
    mean training loss and validation error (None: not finite, or not computed in the other
    processes of a distributed run), why it counted as diverged, and the learning-rate scale of
    the run from then on."""

    epoch: int
    train_loss: float | None
    val_rel_l2: float | None
    reason: str
    lr_scale: float


#: The fields of one rollback record.
ROLLBACK_FIELDS = tuple(Rollback.__annotations__)


def rollback_entry_ok(entry: Any) -> bool:
    """Whether ``entry`` is one rollback record of the divergence guard: exactly
    :data:`ROLLBACK_FIELDS`, epoch >= 1, train loss and validation error numbers or None, a
    reason, lr_scale in (0, 1) (``run.json`` and ``last.pt`` hold the same records)."""
    return (isinstance(entry, dict) and set(entry) == set(ROLLBACK_FIELDS)
            and is_int(entry["epoch"]) and entry["epoch"] >= 1
            and all(entry[k] is None or is_real(entry[k]) for k in ("train_loss", "val_rel_l2"))
            and isinstance(entry["reason"], str)
            and is_real(entry["lr_scale"]) and 0 < entry["lr_scale"] < 1)


def _check_rollbacks(rollbacks: Any, source: Any) -> None:
    """``rollbacks`` (the divergence guard's, :mod:`.divergence`): absent, or a list of
    :func:`rollback_entry_ok` records."""
    if rollbacks is None:
        return
    if not (isinstance(rollbacks, list) and all(rollback_entry_ok(r) for r in rollbacks)):
        raise _fail(source, "rollbacks", "a list of {epoch >= 1, train_loss, val_rel_l2, reason, "
                    "lr_scale in (0, 1)}", rollbacks)


def _check_scalars(info: dict[str, Any], source: Any) -> None:
    for key in _INT_FIELDS:
        if key in info and not (is_int(info[key]) and info[key] >= 0):
            raise _fail(source, key, "an integer >= 0", info[key])
    for key in _NUMBER_FIELDS:
        if info.get(key) is not None and not is_real(info[key]):
            raise _fail(source, key, "a number or null", info[key])
    for key in ("preset", "device"):
        if info.get(key) is not None and not isinstance(info[key], str):
            raise _fail(source, key, "a string or null", info[key])
    _check_rollbacks(info.get("rollbacks"), source)
    warnings = info.get("warnings", [])
    if not (isinstance(warnings, list) and all(isinstance(w, str) for w in warnings)):
        raise _fail(source, "warnings", "a list of strings", warnings)
    for key in ("resolution", "coarse_resolution", "output_resolution"):
        nullable = key != "resolution"
        if key in info and not (nullable and info[key] is None):
            check_resolution(info[key], source=f"{source}: field `{key}`", error=RunDirectoryError)


def _check_data(data: Any, source: Any) -> int | None:
    """The ``data`` section; returns the recorded sample count (None if unknown)."""
    if data is None:
        return None
    if not isinstance(data, dict):
        raise _fail(source, "data", "an object (the dataset provenance)", data)
    if data.get("path") is not None and not isinstance(data["path"], str):
        raise _fail(source, "data.path", "a string or null", data["path"])
    _check_choice(data, "problem", tuple(PROBLEMS), f"{source}, section `data`")
    for key in ("attrs",):
        if key in data and not isinstance(data[key], dict):
            raise _fail(source, f"data.{key}", "an object", data[key])
    if data.get("config_json") is not None and not isinstance(data["config_json"], str):
        raise _fail(source, "data.config_json", "a string or null", data["config_json"])
    n = data.get("n_samples")
    if n is not None and not (is_int(n) and n >= 0):
        raise _fail(source, "data.n_samples", "an integer >= 0", n)
    return n


def _check_splits(splits: Any, n_samples: int | None, source: Any) -> None:
    if not isinstance(splits, dict) or set(splits) != set(_SPLITS):
        raise _fail(source, "splits", "an object with lists 'train', 'val', 'test'", splits)
    bound = f" below data.n_samples = {n_samples}" if n_samples is not None else ""
    for name, idx in splits.items():
        ok = isinstance(idx, list) and all(is_int(i) and i >= 0 for i in idx)
        if ok and n_samples is not None:
            ok = all(i < n_samples for i in idx)
        if not ok:
            raise _fail(source, f"splits.{name}", f"a list of sample indices >= 0{bound}", idx)


def _check_configs(info: dict[str, Any], source: Any) -> None:
    _check_choice(info, "model_family", tuple(MODEL_FAMILIES), source)
    checks = [("train_config", TrainConfig)]
    if info.get("model_family") in MODEL_FAMILIES:
        checks.append(("model_config", MODEL_FAMILIES[info["model_family"]][0]))
    for key, cls in checks:
        if key in info:
            try:
                cls.from_dict(info[key])
            except (TypeError, ValueError) as exc:
                msg = f"{source}: field `{key}`: {exc}"
                raise RunDirectoryError(msg) from None


def _check_ood(ref: Any, source: Any) -> None:
    if ref is None:
        return
    try:
        parsed = OODReference.from_dict(ref)
        values = np.asarray([*parsed.mean, *np.ravel(parsed.covariance), *parsed.value_set],
                            dtype=np.float64)
        if not np.isfinite(values).all():
            msg = "non-finite statistics"
            raise ValueError(msg)
        np.linalg.inv(np.asarray(parsed.covariance, dtype=np.float64))
    except (KeyError, TypeError, ValueError, np.linalg.LinAlgError) as exc:
        msg = (f"{source}: field `ood_reference` must hold the training-input statistics "
               f"(problem, finite mean, invertible covariance, n_train); {type(exc).__name__}: "
               f"{_short(str(exc))}.")
        raise RunDirectoryError(msg) from None


def validate_run_info(info: object, *, source: str | os.PathLike[str]) -> dict[str, Any]:
    """Check the fields of a parsed ``run.json`` (see the module docstring); return ``info``.

    Raises
    ------
    RunDirectoryError
        For the first field with a wrong type or value, naming ``source`` and the field.
    """
    if not isinstance(info, dict):
        raise _fail(source, "<top>", "a JSON object", type(info).__name__)
    if "format" in info and info["format"] != RUN_FORMAT:
        raise _fail(source, "format", repr(RUN_FORMAT), info["format"])
    _check_choice(info, "status", STATUSES, source)
    _check_choice(info, "task", tuple(PROBLEMS), source)
    _check_choice(info, "problem", tuple(PROBLEMS), source)
    _check_scalars(info, source)
    n_samples = _check_data(info.get("data"), source)
    if "splits" in info:
        _check_splits(info["splits"], n_samples, source)
    for key in ("normalizers", "sample_counts"):
        if key in info and not isinstance(info[key], dict):
            raise _fail(source, key, "an object", info[key])
    _check_configs(info, source)
    _check_ood(info.get("ood_reference"), source)
    _check_agreement(info, source)
    return info


def _check_agreement(info: dict[str, Any], source: Any) -> None:
    """Fields that repeat one fact agree: the task, the training config's task, the problem of
    the data; the recorded data provenance rebuilds the solver that produced the labels."""
    task = info.get("task", info.get("problem"))
    config = info.get("train_config")
    if task is not None and isinstance(config, dict) and config.get("task") != task:
        raise _fail(source, "task", f"the task of field `train_config` ({config.get('task')!r})",
                    task)
    data = info.get("data")
    if task is None or not isinstance(data, dict):
        return
    data_problem = get_problem(task).data_problem
    if data.get("problem") is not None and data["problem"] != data_problem:
        raise _fail(source, "data.problem", f"{data_problem!r}, the data of task {task!r}",
                    data["problem"])
    if isinstance(data.get("config_json"), str):
        attrs, where = {"config_json": data["config_json"]}, f"{source}, field `data.config_json`"
        try:
            if generation_settings(attrs, source=where) is not None:  # a generated file's record
                solver_from_record(attrs, data_problem, source=where)
        except DatasetError as exc:
            raise RunDirectoryError(str(exc)) from None


def check_data_path(info: Mapping[str, Any], *, source: str | os.PathLike[str]) -> None:
    """Refuse a ``run.json`` whose ``data.path`` names an existing file that is not a dataset
    of the run's problem (another problem's file, or any other file: a tampered record).

    A path that no longer exists is accepted (a run directory moved to another machine).

    Raises
    ------
    RunDirectoryError
        Naming ``source``, the field ``data.path``, the file and why it cannot be the data.
    """
    data = info.get("data")
    task = info.get("task", info.get("problem"))
    path = data.get("path") if isinstance(data, dict) else None
    if not isinstance(path, str) or task is None or not os.path.exists(path):
        return
    want = get_problem(task).data_problem

    why = None
    try:
        if not is_netcdf_file(path):
            why = "which is not a netCDF file"
        else:
            with load_dataset(path) as ds:
                problem = ds.attrs.get("problem")
            if problem != want:
                why = f"a {problem} dataset"
    except DatasetError as exc:
        why = f"which is not a usable dataset ({exc})"
    if why is not None:
        msg = (f"{source}: field `data.path` must name the training data of this {task} run, "
               f"a {want} dataset; it names {path}, {why}.")
        raise RunDirectoryError(msg)
