"""Resuming a run whose data file has moved: the same dataset at another path.

A run records the absolute path of its data in ``last.pt`` (the resume identity) and, with the
dataset's provenance, in ``run.json``. Resuming with a file at another path is accepted when
that file is the same dataset: for files written by ``generate``, the same generation settings
(problem, seed, resolution, solver options), sample count and grid (a file copied elsewhere, or
regenerated from its seed on another machine, where BLAS may change the last bits of the
values); for any other file, the same provenance apart from the path and the ``created`` time.
Anything else is refused as a run with other settings (:func:`~.resume.check_resumable`).
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import xarray as xr

from ..data.provenance import dataset_provenance, generation_settings
from ..errors import DatasetError, RunDirectoryError
from ..runs import DataRecord, RunDir

__all__ = ["same_dataset", "with_moved_data"]

_log = logging.getLogger(__name__)


def _generated(data: DataRecord) -> dict[str, Any] | None:
    """The ``generate`` settings and sample count recorded in ``data``'s attributes (None for a
    file not written by ``generate``, or a damaged record)."""
    if data.attrs is None:
        return None
    try:
        record = generation_settings(data.attrs)
    except DatasetError:
        return None
    if record is None:
        return None
    return {"settings": record.get("settings"), "n_samples": record.get("n_samples")}


def _plain(data: DataRecord) -> DataRecord:
    """``data`` without its path and creation time."""
    attrs = None if data.attrs is None else {
        k: v for k, v in data.attrs.items() if k != "created"}
    return dataclasses.replace(data, path=None, nulls=data.nulls - {"path"}, attrs=attrs)


def same_dataset(recorded: DataRecord, now: DataRecord) -> bool:
    """Whether two dataset provenances (``run.json``'s ``data`` section) describe the same
    dataset, whatever their paths (rules in the module docstring)."""
    if (recorded.problem, recorded.n_samples, recorded.grid) != (
            now.problem, now.n_samples, now.grid):
        return False
    first, second = _generated(recorded), _generated(now)
    if first is not None or second is not None:
        return first == second
    return _plain(recorded) == _plain(now)


def with_moved_data(identity: dict[str, Any], state_identity: Mapping[str, Any], *,
                    run_dir: Path, dataset: xr.Dataset,
                    path: str | os.PathLike[str] | None) -> dict[str, Any]:
    """``identity`` (the new run's) with the recorded ``data_path`` when the data moved: the
    file at the new ``path`` is :func:`same_dataset` as the one ``run_dir/run.json`` records.
    Otherwise ``identity`` unchanged (a differing path is then refused as before)."""
    old, new = state_identity.get("data_path"), identity.get("data_path")
    if old is None or new is None or old == new or path is None:
        return identity
    try:
        recorded = RunDir(run_dir).read().data
    except RunDirectoryError:
        return identity
    if recorded is None or recorded.path != old:
        return identity
    if not same_dataset(recorded, DataRecord.from_dict(dataset_provenance(dataset, path))):
        return identity
    _log.warning("the data of %s moved: %s (run) is now %s, the same dataset (same problem, "
                 "samples, grid and generation settings); resuming with it", run_dir, old, new)
    return {**identity, "data_path": old}
