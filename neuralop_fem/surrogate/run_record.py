"""Reading a training run for :class:`~neuralop_fem.surrogate.Surrogate`: the trained operator
with its record (:class:`~neuralop_fem.runs.RunRecord`), and the out-of-distribution reference
fitted on the recorded training samples."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from typing import Any

import torch

from ..data import load_dataset
from ..data.io import is_netcdf_file
from ..data.ood import OODReference, reference_from_dataset
from ..errors import DatasetError, InputError
from ..runs import RunDir, RunRecord, migrate
from ..runs.operator import load_run

__all__ = ["as_record", "load_operator", "ood_from_provenance", "required"]


def as_record(run_info: RunRecord | Mapping[str, Any] | None) -> RunRecord:
    """``run_info`` as a record: a record itself, or the contents of a ``run.json`` (older
    field names migrated, :func:`~neuralop_fem.runs.migrate`); None: an empty record."""
    if isinstance(run_info, RunRecord):
        return run_info
    return RunRecord.from_dict(migrate(dict(run_info or {})))


def required(record: RunRecord, value: Any, name: str) -> Any:
    """``value`` (the field ``name`` of ``record``) when recorded.

    Raises
    ------
    InputError
        If it is None: the record lacks the field.
    """
    if value is None:
        msg = f"run.json must record {name!r}; found keys {sorted(record.to_dict())}."
        raise InputError(msg)
    return value


def load_operator(run: RunDir, device: torch.device) -> tuple[torch.nn.Module, RunRecord]:
    """(operator, record) through the trainer's
    :func:`~neuralop_fem.runs.operator.load_run`."""
    return load_run(run, map_location=device)


def ood_from_provenance(record: RunRecord, problem: str) -> OODReference | None:
    """Fit the OOD reference on the training inputs of the recorded dataset, if usable.

    ``run.json`` only names the file, so it is used only when it is a regular netCDF file (by
    its signature) that loads as a valid dataset of ``problem`` holding the recorded training
    samples. A file that no longer exists gives no reference; any other unusable file gives no
    reference and a warning that says why. Nothing else is read.
    """
    path = record.data_path
    if not isinstance(path, str) or not os.path.exists(path):
        return None
    train = None if record.splits is None else list(record.splits.train)
    try:
        return reference_from_dataset(_provenance_dataset(path, train, problem), train, problem)
    except (DatasetError, InputError) as exc:
        msg = (f"run.json names the training dataset {path!r}, which cannot serve as the "
               f"out-of-distribution reference ({exc}); no OOD check.")
        warnings.warn(msg, UserWarning, stacklevel=3)
        return None


def _provenance_dataset(path: str, train: Any, problem: str) -> Any:
    """The dataset at ``path``, checked; a DatasetError says why it cannot serve."""
    if train is not None and not (isinstance(train, list) and all(
            isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in train)):
        msg = "field `splits.train` of run.json is not a list of sample indices"
        raise DatasetError(msg)
    if not is_netcdf_file(path):
        msg = f"{path}: not a netCDF file"
        raise DatasetError(msg)
    ds = load_dataset(path)
    if ds.attrs.get("problem") != problem:
        msg = f"{path}: a {ds.attrs.get('problem')} dataset, not {problem}"
        raise DatasetError(msg)
    if train and max(train) >= ds.sizes["sample"]:
        msg = f"{path}: {ds.sizes['sample']} samples, fewer than the recorded training split"
        raise DatasetError(msg)
    return ds
