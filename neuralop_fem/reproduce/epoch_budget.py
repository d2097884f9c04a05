"""Test error against the epoch budget: the Burgers rows of ``reproduction.json`` as series.

The rows are those of the problems whose reproduction entry sets ``epoch_budget`` (Burgers).

Every recorded run on one dataset whose settings are the paper's preset except for the seed,
the number of epochs, the peak learning rate and the H1 weight joins a series: one series per
model and (peak lr, H1 weight) pair (:func:`series`), averaged over the seeds
(:func:`table`). Runs with any other change (a width, a dropout, a batch size, a target
normaliser, a warm-up) are left out: they are levers of their own.
``benchmarks/plot_epoch_budget.py`` draws the figure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError, InputError
from ..runs.train_config import training_preset
from .entries import spec_or_none
from .rows import model_suffix

__all__ = ["Point", "collect", "mean_error", "point_of", "series", "table"]

#: Training settings a series may vary (the rest must be the paper preset's).
VARIED = ("seed", "epochs", "lr_max", "gamma")
#: Settings of where and how a run was computed, not of what it learned.
ENVIRONMENT = ("device", "amp", "deterministic", "eval_batch_size", "num_workers",
               "checkpoint_minutes")
MODEL_ORDER = ("galerkin", "fourier", "fno")


@dataclass(frozen=True)
class Point:
    """One recorded run: a model, its recipe, its epochs, its seed and its test error."""

    model: str
    lr_max: float
    gamma: float
    epochs: int
    seed: int
    error: float


@cache
def _base_config(task: str, preset: str) -> Mapping[str, Any] | None:
    try:
        return training_preset(f"{task}-{model_suffix(preset)}").to_dict()
    except ConfigError:  # a preset this code does not know: not part of a series
        return None


def _in_series(task: object) -> bool:
    spec = spec_or_none(task)
    return spec is not None and spec.epoch_budget


def point_of(run: Mapping[str, Any], data_name: str, resolution: str) -> Point | None:
    """The run as a :class:`Point`, or None when it is not on ``data_name``, not a run of the
    paper mode of a problem whose rows form series (Burgers), changes the model, or changes
    a training setting outside :data:`VARIED`."""
    data = run.get("data") or {}
    config = run.get("train_config")
    task = run.get("task")
    if (not _in_series(task) or run.get("mode") != "paper" or run.get("model_changes")
            or not isinstance(config, Mapping)
            or Path(str(data.get("path", ""))).name.removesuffix(".nc") != data_name):
        return None
    base = _base_config(str(task), str(run.get("preset", "")))
    if base is None:
        return None
    for field, value in base.items():
        if field not in VARIED and field not in ENVIRONMENT and config.get(field, value) != value:
            return None
    error = ((run.get("errors") or {}).get(resolution) or {}).get("rel_l2", {}).get("mean")
    if error is None:
        return None
    return Point(model_suffix(str(run["preset"])), float(config["lr_max"]),
                 float(config["gamma"]), int(config["epochs"]), int(config["seed"]),
                 float(error))


def collect(runs: Mapping[str, Mapping[str, Any]], data_name: str, resolution: str
            ) -> list[Point]:
    """The :class:`Point` of every run (``runs``: key -> record) that belongs to a series.

    Raises
    ------
    InputError
        For a record that is not a mapping or holds a non-numeric setting or error; the
        message names the record's key.
    """
    points = []
    for key, run in runs.items():
        try:
            point = point_of(run, data_name, resolution)
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            msg = (f"run {key!r}: expected a reproduction record with numeric settings and "
                   f"errors; got {type(exc).__name__}: {exc}")
            raise InputError(msg) from exc
        if point is not None:
            points.append(point)
    return points


def series(points: Iterable[Point]) -> dict[tuple[str, float, float], dict[int, list[Point]]]:
    """Points grouped by (model, peak lr, H1 weight), then by epochs (ascending)."""
    out: dict[tuple[str, float, float], dict[int, list[Point]]] = {}
    for p in sorted(points, key=lambda q: (_rank(q.model), -q.lr_max, q.gamma, q.epochs, q.seed)):
        out.setdefault((p.model, p.lr_max, p.gamma), {}).setdefault(p.epochs, []).append(p)
    return out


def mean_error(points: Iterable[Point]) -> float:
    """The mean test error over ``points`` (the seeds of one model, recipe and budget)."""
    return float(np.mean([p.error for p in points]))


def _rank(model: str) -> tuple[int, str]:
    return (MODEL_ORDER.index(model) if model in MODEL_ORDER else len(MODEL_ORDER), model)


def table(groups: Mapping[tuple[str, float, float], Mapping[int, list[Point]]]) -> str:
    """A markdown table: one row per model, recipe and epoch budget."""
    lines = ["| model | peak lr | H1 weight | epochs | seeds | mean test rel. L2 | per seed |",
             "|---|---|---|---|---|---|---|"]
    for (model, lr, gamma), by_epochs in groups.items():
        for epochs, pts in by_epochs.items():
            seeds = ", ".join(f"{p.error:.3e} (seed {p.seed})" for p in pts)
            lines.append(f"| {model} | {lr:g} | {gamma:g} | {epochs} | {len(pts)} | "
                         f"{mean_error(pts):.3e} | {seeds} |")
    return "\n".join(lines)
