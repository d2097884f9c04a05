"""Samples a run has already seen: evaluation data that repeat its training or validation split.

``neuralop-fem generate`` draws sample ``k`` from ``np.random.SeedSequence([dataset_seed, k])``
alone (:func:`solvers.grf.sample_seeds`) and stores that per-sample seed in the ``seed``
variable. A file generated with the same settings as a run's training data (the same seed,
physics and resolution; any number of samples) therefore holds, at global index ``k``, the
very sample ``k`` of the training file. Scoring a model on those samples measures how well it
fits its training set, not how it generalises; the errors come out lower (a zoo model
regenerated this way scored 1.1e-3 where its test split gives 2.7e-3).

:func:`seen_in_training` finds such samples by their generation settings and per-sample seeds,
and :func:`warn_if_seen` says so in one warning. Imported data and files without seeds are
not matched (nothing is known of their draws).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import xarray as xr

from solvers.grf import sample_seeds

from ..data.names import SEED
from ..data.provenance import generation_settings
from ..errors import DatasetError
from ..runs import RunRecord

__all__ = ["SeenInTrainingWarning", "seen_in_training", "warn_if_seen"]


class SeenInTrainingWarning(UserWarning):
    """Evaluation samples that the run trained on (or selected its model on)."""


def _settings(attrs: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``generate`` settings recorded in ``attrs`` (a dataset's attributes, or the
    ``data`` record of a run.json, which keeps the same ``config_json``); None when there are
    none or the record is damaged (reported where the file is read; here: unknown)."""
    try:
        record = generation_settings(attrs)
    except DatasetError:
        return None
    return None if record is None else dict(record["settings"])


def seen_in_training(record: RunRecord, ds: xr.Dataset,
                     indices: np.ndarray) -> dict[str, int]:
    """How many of the samples at positions ``indices`` of ``ds`` are in the run's splits.

    Parameters
    ----------
    record
        The run's record (its ``data.config_json`` and ``splits``).
    ds
        The evaluation dataset.
    indices : (m,) int array
        Positions in ``ds`` being evaluated.

    Returns
    -------
    dict
        ``{"train": i, "val": j, "seed": s}``: samples drawn with the same generation settings
        and per-sample seeds as the run's training (validation) split, and the run's dataset
        seed (``None`` when unknown: then both counts are 0).
    """
    none = {"train": 0, "val": 0, "seed": None}
    run_settings = None if record.data is None else _settings(record.data.settings_attrs)
    file_settings = _settings(ds.attrs)
    if run_settings is None or file_settings is None or SEED not in ds:
        return none
    if run_settings != file_settings:  # another seed, physics or resolution: other draws
        return none
    seed = run_settings.get("dataset_seed")
    if not isinstance(seed, int) or seed < 0:
        return none
    drawn = np.asarray(ds[SEED].isel(sample=np.asarray(indices)).values).astype(np.uint64)
    out: dict[str, Any] = {"seed": seed}
    for name in ("train", "val"):
        split = () if record.splits is None else getattr(record.splits, name)
        positions = np.asarray(split, dtype=np.int64)
        seen = sample_seeds(seed, positions) if positions.size else np.empty(0, np.uint64)
        out[name] = int(np.isin(drawn, seen).sum())
    return out


def warn_if_seen(seen: Mapping[str, Any], n: int, *, stacklevel: int = 3) -> str | None:
    """Warn (:class:`SeenInTrainingWarning`) when any of the ``n`` evaluated samples were in
    the run's training or validation split; return the message (None when none were)."""
    train, val = int(seen.get("train", 0)), int(seen.get("val", 0))
    if train + val == 0:
        return None
    parts = [f"{train} in its training split"] if train else []
    parts += [f"{val} in its validation split"] if val else []
    msg = (f"{train + val} of the {n} samples evaluated are samples the run has seen "
           f"({', '.join(parts)}: the same generation settings and per-sample seeds), so their "
           f"errors are not test errors. Generate evaluation data with another --seed (the "
           f"run's data used seed {seen['seed']}), or evaluate the run's test split of its own "
           f"data file (--indices test).")
    warnings.warn(msg, SeenInTrainingWarning, stacklevel=stacklevel)
    return msg
