"""After how many solves a surrogate repays what it cost before its first solve.

A surrogate faster than the solver at equal accuracy saves ``t_solver - t_surrogate`` seconds
per solve (per sample, from the fair verdict's placement). It cost its training
(``wall_time_s`` of the run's ``run.json``) and the generation of the samples it trained and
selected its model on (the run's training and validation splits); the break-even is

    N = (training seconds + generation seconds) / (t_solver - t_surrogate)

solves. The generation time is the number of those samples times the mean per-sample wall time
that ``neuralop-fem generate`` recorded (``solve_time``) in a data file generated with the
run's own settings (the dataset seed aside); with another file it is unknown and left out,
and the sentence says so. Times are wall seconds on the machines that recorded them.

>>> cost = {"train_s": 3600.0, "data_s": 400.0, "data_samples": 1000, "data_per_sample_s": 0.4}
>>> break_even({"solver_time": 3e-3, "surrogate_time": 1e-3, "status": "interpolated"}, cost)
(2000000.0, '')
>>> break_even({"solver_time": 1e-3, "surrogate_time": 3e-3, "status": "interpolated"}, cost)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import xarray as xr

from ..data.names import SOLVE_TIME
from ..data.provenance import generation_settings
from ..errors import DatasetError
from ..runs import RunRecord

__all__ = ["break_even", "break_even_sentence", "surrogate_cost"]

#: How a placement's solver time bounds the break-even: the solver time of "at most the cheapest
#: rung" is an upper bound, so the saving is too and the break-even a lower bound; "at least the
#: finest rung measured" the other way round.
_BOUND = {"at most the cheapest rung": "at least", "at least the finest rung measured": "at most"}


def _settings(attrs: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``generate`` settings in ``attrs`` without the dataset seed (None when unknown)."""
    try:
        record = generation_settings(attrs)
    except DatasetError:
        return None
    if record is None:
        return None
    return {k: v for k, v in dict(record["settings"]).items() if k != "dataset_seed"}


def surrogate_cost(record: RunRecord, ds: xr.Dataset | None) -> dict[str, Any]:
    """What a surrogate cost before its first solve, from its run's record and a data file.

    Parameters
    ----------
    record
        The run's record (``wall_time_s``, ``splits``, ``data``).
    ds
        A dataset of the run's problem with per-sample ``solve_time``; used for the generation
        time only when generated with the run's settings (same problem, physics, grid and
        solver; any dataset seed).

    Returns
    -------
    dict
        ``train_s`` (training wall seconds, NaN when not recorded), ``data_samples`` (training
        and validation samples), ``data_per_sample_s`` (mean recorded generation seconds per
        sample, NaN when unknown) and ``data_s`` (their product, NaN when unknown).
    """
    wall = record.wall_time_s
    train_s = float(wall) if isinstance(wall, (int, float)) and wall >= 0 else float("nan")
    samples = 0 if record.splits is None else len(record.splits.train) + len(record.splits.val)
    per_sample = float("nan")
    own = None if record.data is None else _settings(record.data.settings_attrs)
    if ds is not None and SOLVE_TIME in ds and own is not None and own == _settings(ds.attrs):
        times = np.asarray(ds[SOLVE_TIME].values, dtype=np.float64)
        times = times[np.isfinite(times) & (times > 0)]
        per_sample = float(times.mean()) if times.size else per_sample
    return {"train_s": train_s, "data_samples": int(samples), "data_per_sample_s": per_sample,
            "data_s": samples * per_sample if samples else float("nan")}


def break_even(placed: Mapping[str, Any], cost: Mapping[str, Any]) -> tuple[float, str] | None:
    """Solves after which the surrogate repays its cost, and how the number bounds it.

    ``placed`` holds ``solver_time``, ``surrogate_time`` (seconds per sample) and ``status``
    (:func:`~neuralop_fem.evaluation.fair.place`). Returns ``(solves, bound)`` with ``bound``
    ``""`` (an estimate), ``"at least"`` or ``"at most"``; None where the surrogate is not
    faster at equal accuracy (or that is unknown) or nothing of its cost is known. The
    generation time counts when known; the training time always.
    """
    train, data = float(cost.get("train_s", np.nan)), float(cost.get("data_s", np.nan))
    total = train + (data if np.isfinite(data) else 0.0)
    saving = float(placed["solver_time"]) - float(placed["surrogate_time"])
    if not (np.isfinite(total) and total > 0 and np.isfinite(saving) and saving > 0):
        return None
    return total / saving, _BOUND.get(str(placed["status"]), "")


def _duration(seconds: float) -> str:
    """Seconds in the unit a reader expects: "42 s", "3.5 min", "1.7 h", "2.1 days".

    >>> [_duration(s) for s in (42.0, 210.0, 6201.1, 181440.0)]
    ['42 s', '3.5 min', '1.7 h', '2.1 days']
    """
    for unit, size in (("days", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= 2 * size if unit == "days" else seconds >= size:
            return f"{seconds / size:.2g} {unit}"
    return f"{seconds:.2g} s"


def break_even_sentence(placed: Mapping[str, Any], cost: Mapping[str, Any], *,
                        where: str) -> str | None:
    """The break-even in words (None where :func:`break_even` gives none), e.g. "Break-even:
    training took 1.7 h and generating its 1124 training and validation samples about 4.1 min
    (0.22 s each, as recorded in the data file); saving 2 ms per solve at equal accuracy (on
    this CPU, ...), the surrogate repays that after about 3.3e+06 solves." """
    found = break_even(placed, cost)
    if found is None:
        return None
    solves, bound = found
    saving = float(placed["solver_time"]) - float(placed["surrogate_time"])
    train = (f"training took {_duration(cost['train_s'])}" if np.isfinite(cost["train_s"])
             else "the training time is not recorded")
    n = int(cost.get("data_samples", 0))
    if np.isfinite(cost.get("data_s", np.nan)):
        data = (f"generating its {n} training and validation samples about "
                f"{_duration(cost['data_s'])} ({cost['data_per_sample_s']:.2g} s each, as "
                "recorded in the data file)")
    else:
        data = (f"generating its {n} training and validation samples is not counted (the data "
                "file compared on was not generated with the run's settings, so its recorded "
                "times are not theirs)")
    limit = f"{bound} " if bound else "about "
    return (f"Break-even: {train} and {data}; saving {1e3 * saving:.3g} ms per solve at equal "
            f"accuracy ({where}), the surrogate repays that after {limit}{solves:.2g} solves.")
