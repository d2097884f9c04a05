"""Figures of training runs: validation curves of ``metrics.csv`` files, the test error
against the epoch budget of the reproduction rows, and the scalars of a TensorBoard log.

Each ``*_figure`` function returns a matplotlib figure (the caller saves it with
:func:`neuralop_fem.plotting.save`); bad inputs raise :class:`~neuralop_fem.errors.InputError`.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from neuralop_fem.errors import InputError
from neuralop_fem.plotting import fit_title, legend_beside, log_axis
from neuralop_fem.reproduce.epoch_budget import collect, mean_error, series
from neuralop_fem.reproduce.rows import paper_value

__all__ = ["TENSORBOARD_TAGS", "epoch_budget_figure", "epoch_budget_series",
           "learning_curves_figure", "read_curve", "read_scalars", "tensorboard_figure"]

#: The scalars :func:`read_scalars` reads (``neuralop-fem train --log tensorboard``).
TENSORBOARD_TAGS = ("train/lr_step", "train/loss_step", "train/loss", "val/rel_l2")


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def read_curve(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Epochs and validation relative L2 of one training ``metrics.csv``."""
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    msg = f"--run {path}: expected a training metrics.csv with epoch and val_rel_l2 columns"
    if not rows or not {"epoch", "val_rel_l2"} <= set(rows[0]):
        raise InputError(msg + "; got none")
    try:
        epochs = np.array([int(r["epoch"]) for r in rows])
        val = np.array([float(r["val_rel_l2"]) for r in rows])
    except (TypeError, ValueError) as exc:
        msg += f"; a row is not numeric ({exc})"
        raise InputError(msg) from exc
    return epochs, val


def learning_curves_figure(runs: Sequence[tuple[str, Path]],
                           references: Sequence[tuple[str, float]], title: str) -> Any:
    """The validation relative L2 per epoch of each (label, metrics.csv) of ``runs`` on a log
    axis, with a horizontal line per (label, value) of ``references``."""
    fig, ax = _pyplot().subplots(figsize=(7.5, 4.2))
    for label, path in runs:
        epochs, val = read_curve(Path(path))
        ax.plot(epochs, val, lw=1.2, label=label)
    for i, (label, value) in enumerate(references):  # told apart by their line style
        ax.axhline(value, color="k", ls=("--", ":", "-.")[i % 3], lw=0.8, label=label)
    log_axis(ax, "y")
    ax.set_xlabel("epoch")
    ax.set_ylabel("validation relative L2 (-)")
    ax.set_title(fit_title(title, fig, share=0.6))
    legend_beside(ax)
    fig.tight_layout()
    return fig


def epoch_budget_series(results: Path, data_name: str, resolution: str) -> dict[Any, Any]:
    """:func:`~neuralop_fem.reproduce.epoch_budget.series` of the Burgers rows of the
    reproduction.json ``results`` on ``data_name`` at ``resolution`` (an InputError when
    the file is not one or no row matches)."""

    try:
        runs = json.loads(results.read_text())["runs"]
    except (ValueError, KeyError, TypeError):  # not JSON, no "runs", not an object
        runs = None
    if not isinstance(runs, Mapping):
        msg = f"--results {results}: expected a reproduction.json with a 'runs' mapping"
        raise InputError(msg)
    try:
        groups = series(collect(runs, data_name, resolution))
    except InputError as exc:
        msg = f"--results {results}: {exc}"
        raise InputError(msg) from exc
    if not groups:
        msg = (f"--data-name {data_name!r} / --resolution {resolution}: no recorded "
               f"Burgers run of {results} matches")
        raise InputError(msg)
    return groups


def epoch_budget_figure(groups: Mapping[Any, Any], *, data_name: str, resolution: str,
                        goal: float) -> Any:
    """Each seed's test relative L2 (dots) and the mean over seeds (line) against the epochs
    of :func:`epoch_budget_series` ``groups``, with the paper's value per model (dashed) and
    a ``goal`` line."""

    fig, ax = _pyplot().subplots(figsize=(8.0, 4.6))
    colours = {m: f"C{i}" for i, m in enumerate(dict.fromkeys(k[0] for k in groups))}
    markers: dict[tuple[float, float], str] = {}
    for (model, lr, gamma), by_epochs in groups.items():
        marker = markers.setdefault((lr, gamma), "os^Dv<>"[len(markers) % 7])
        epochs = np.array(list(by_epochs))
        means = np.array([mean_error(pts) for pts in by_epochs.values()])
        ax.plot(epochs, means, marker=marker, color=colours[model], lw=1.2,
                label=f"{model}, peak lr {lr:g}, H1 weight {gamma:g}")
        for e, pts in by_epochs.items():
            ax.plot([e] * len(pts), [q.error for q in pts], ".", color=colours[model], alpha=0.5)
    for model, colour in colours.items():
        value = paper_value("burgers", f"burgers-{model}", resolution, None)
        if value is not None:
            ax.axhline(value, color=colour, ls="--", lw=0.8, label=f"paper, {model}")
    ax.axhline(goal, color="k", lw=0.8, label=f"goal {goal:g}")
    log_axis(ax, "y")
    ax.set_xticks(sorted({e for by_epochs in groups.values() for e in by_epochs}))
    ax.set_xlabel("epochs")
    ax.set_ylabel(f"test relative L2 at n = {resolution} (-)")
    title = (f"{data_name}: test error against the epoch budget "
             "(line: mean over seeds; dots: each seed)")
    ax.set_title(fit_title(title, fig, share=0.6))
    legend_beside(ax)
    fig.tight_layout()
    return fig


def read_scalars(log_dir: Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``{tag: (steps, values)}`` of :data:`TENSORBOARD_TAGS` from the event files in
    ``log_dir`` (needs tensorboard)."""
    try:
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    except ImportError:
        msg = "reading event files needs tensorboard: pip install 'neuralop-fem[tensorboard]'"
        raise InputError(msg) from None
    if not log_dir.is_dir() or not any(log_dir.glob("events.out.tfevents.*")):
        msg = f"{log_dir}: expected a directory of TensorBoard event files (RUN_DIR/tensorboard)"
        raise InputError(msg)
    acc = EventAccumulator(str(log_dir), size_guidance={"scalars": 0})  # 0: keep every point
    acc.Reload()
    found = set(acc.Tags()["scalars"])
    missing = [t for t in TENSORBOARD_TAGS if t not in found]
    if missing:
        msg = f"{log_dir}: the log holds no {missing}; found {sorted(found)}"
        raise InputError(msg)
    out = {}
    for tag in TENSORBOARD_TAGS:
        events = acc.Scalars(tag)
        out[tag] = (np.array([e.step for e in events]), np.array([e.value for e in events]))
    return out


def tensorboard_figure(s: Mapping[str, tuple[np.ndarray, np.ndarray]], title: str) -> Any:
    """Three panels of :func:`read_scalars` ``s``: the learning rate per step, the training
    loss per step with the epoch means at each epoch's last step, the validation relative L2
    per epoch."""
    fig, axes = _pyplot().subplots(1, 3, figsize=(11.5, 3.4))
    steps, lr = s["train/lr_step"]
    axes[0].plot(steps, lr, color="C2", lw=1.2)
    axes[0].set_xlabel("optimizer step")
    axes[0].set_ylabel("learning rate")
    axes[0].set_title("train/lr_step", fontsize=9)
    steps, loss = s["train/loss_step"]
    axes[1].plot(steps, loss, color="C0", lw=0.6, alpha=0.5, label="per step")
    epochs, epoch_loss = s["train/loss"]
    per_epoch = steps.max() / max(epochs.max(), 1)  # the per-step axis is shared
    axes[1].plot(epochs * per_epoch, epoch_loss, "o-", color="C0", ms=3, lw=1.2,
                 label="epoch mean")
    log_axis(axes[1], "y")
    axes[1].set_xlabel("optimizer step")
    axes[1].set_ylabel("training loss")
    axes[1].set_title("train/loss_step, train/loss", fontsize=9)
    axes[1].legend(fontsize=8, frameon=False)
    epochs, val = s["val/rel_l2"]
    axes[2].plot(epochs, val, "o-", color="C3", ms=3, lw=1.2)
    log_axis(axes[2], "y")
    axes[2].set_xlabel("epoch")
    axes[2].set_ylabel("validation relative L2")
    axes[2].set_title("val/rel_l2", fontsize=9)
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.suptitle(fit_title(title, fig), fontsize=10)
    fig.tight_layout()
    return fig
