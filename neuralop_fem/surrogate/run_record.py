"""Reading a training run's record for :class:`~neuralop_fem.surrogate.Surrogate`: fields of
``run.json``, the trained operator, and the out-of-distribution reference fitted on the
recorded training samples."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import torch

from ..data.ood import OODReference, reference_from_dataset
from ..errors import InputError

__all__ = ["load_operator", "lookup", "ood_from_provenance"]

_MISSING = object()


def lookup(info: dict[str, Any], *keys: str, default: Any = _MISSING) -> Any:
    """First of ``keys`` found in ``info`` or its ``data``/``metrics``/``result`` sub-dicts."""
    places = [info] + [info[k] for k in ("data", "dataset", "metrics", "result", "results")
                       if isinstance(info.get(k), dict)]
    for key in keys:
        for place in places:
            if key in place and place[key] is not None:
                return place[key]
    if default is _MISSING:
        msg = f"run.json must record {keys[0]!r}; found keys {sorted(info)}."
        raise InputError(msg)
    return default


def load_operator(path: Path, device: torch.device) -> tuple[torch.nn.Module, dict[str, Any]]:
    """(operator, run_info) through the trainer's :func:`~neuralop_fem.training.load_trained`."""
    from ..training.checkpoint import load_trained

    operator, info = load_trained(path, map_location=device)
    return operator, dict(info)


def ood_from_provenance(info: dict[str, Any], problem: str) -> OODReference | None:
    """Fit the OOD reference on the training inputs of the recorded dataset, if usable.

    ``run.json`` only names the file, so it is used only when it is a regular netCDF file (by
    its signature) that loads as a valid dataset of ``problem`` holding the recorded training
    samples. A file that no longer exists gives no reference; any other unusable file gives no
    reference and a warning that says why. Nothing else is read.
    """
    from ..errors import DatasetError

    path = lookup(info, "dataset_path", "path", default=None)
    if not isinstance(path, str) or not os.path.exists(path):
        return None
    split = lookup(info, "splits", "split", default={})
    train = split.get("train") if isinstance(split, dict) else None
    try:
        return reference_from_dataset(_provenance_dataset(path, train, problem), train, problem)
    except (DatasetError, InputError) as exc:
        msg = (f"run.json names the training dataset {path!r}, which cannot serve as the "
               f"out-of-distribution reference ({exc}); no OOD check.")
        warnings.warn(msg, UserWarning, stacklevel=3)
        return None


def _provenance_dataset(path: str, train: Any, problem: str) -> Any:
    """The dataset at ``path``, checked; a DatasetError says why it cannot serve."""
    from ..data import load_dataset
    from ..data.io import is_netcdf_file
    from ..errors import DatasetError

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
