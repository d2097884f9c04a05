"""What the trainer keeps in its run directory: checkpoints, ``metrics.csv`` and the loss curve.

The directory and its record ``run.json`` are :class:`~neuralop_fem.runs.RunDir` and
:class:`~neuralop_fem.runs.RunRecord`. Layout of ``RUN_DIR`` (relied on by
:class:`~neuralop_fem.Surrogate`)::

    run.json        human-readable: preset, model config, TrainConfig, data provenance, splits,
                    resolution, versions, hardware, wall time, best epoch, val/test errors
    last.pt         everything to resume: model, optimizer, scheduler, epoch, history, RNG states
    partial.pt      the same within an epoch, every ``checkpoint_minutes``
                    (:mod:`.partial_checkpoint`);
                    removed when the epoch ends
    best.pt         the selected model alone: weights + normaliser buffers + model config
    metrics.csv     per epoch: train loss, validation relative L2, learning rate, epoch time
    loss_curve.png  train loss and validation error against the epoch

Every ``.pt`` file holds only tensors and plain Python containers, so it loads with
``torch.load(weights_only=True)``. Files are written through :mod:`neuralop_fem.files` (a
unique temporary name, renamed into place): a killed run never leaves a truncated checkpoint,
and a symbolic link at a file's name is replaced, never written through. Readers check every
file as untrusted (:meth:`~neuralop_fem.runs.RunDir.read` for ``run.json``;
:func:`build_operator` for ``best.pt``).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import TypedDict

import numpy as np
import torch

from ..files import atomic_path
from ..plotting import integer_axis, log_axis
from ..runs.operator import (
    BEST_FORMAT,
    build_operator,
    load_best,
    load_run,
    load_trained,
    operator_payload,
)
from ..runs.run_dir import (
    BEST,
    CURVE,
    LAST,
    METRICS,
    PARTIAL,
)

__all__ = [
    "BEST_FORMAT",
    "LAST_FORMAT",
    "EpochRow",
    "BEST",
    "CURVE",
    "LAST",
    "METRICS",
    "PARTIAL",
    "build_operator",
    "load_best",
    "load_run",
    "load_trained",
    "operator_payload",
    "save_atomic",
    "write_loss_curve",
    "write_metrics_csv",
]

LAST_FORMAT = "neuralop_fem.training.last/1"
#: The checkpoint file names (``LAST``, ``BEST``, ``METRICS``, ``CURVE``, ``PARTIAL``) are
#: :mod:`neuralop_fem.runs.run_dir`'s; the best model's payload and its loading
#: (``BEST_FORMAT``, :func:`operator_payload`, :func:`build_operator`, :func:`load_run` ...) are
#: :mod:`neuralop_fem.runs.operator`'s; both are imported here for the trainer.


def save_atomic(obj: object, path: Path) -> None:
    """``torch.save`` through :func:`neuralop_fem.files.atomic_path`."""
    with atomic_path(path) as tmp:
        torch.save(obj, tmp)


class EpochRow(TypedDict):
    """One finished epoch (a row of ``metrics.csv``; the ``callback`` argument of
    :meth:`~neuralop_fem.training.Trainer.fit`). ``val_rel_l2`` is None off the main process."""

    epoch: int
    train_loss: float
    val_rel_l2: float | None
    lr: float
    epoch_time_s: float


_CSV_FIELDS = ("epoch", "train_loss", "val_rel_l2", "lr", "epoch_time_s")


def write_metrics_csv(history: dict[str, list[float]], path: Path) -> None:
    """One row per finished epoch (columns :data:`_CSV_FIELDS`)."""
    with atomic_path(path) as tmp, tmp.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(_CSV_FIELDS)
        for i in range(len(history["train_loss"])):
            writer.writerow(
                [i + 1, repr(history["train_loss"][i]), repr(history["val_rel_l2"][i]),
                 repr(history["lr"][i]), f"{history['epoch_time_s'][i]:.3f}"]
            )


def write_loss_curve(history: dict[str, list[float]], path: Path, *, title: str = "") -> None:
    """Train loss, validation relative L2 and learning rate against the epoch (log scales)."""
    import matplotlib  # deferred: matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    epochs = np.arange(1, len(history["train_loss"]) + 1)
    fig = Figure(figsize=(7, 5.2), layout="constrained")
    ax, ax_lr = fig.subplots(2, 1, sharex=True, height_ratios=(3, 1))
    ax.plot(epochs, history["train_loss"], label="training loss (rel. L2 + H1 term)")
    val = np.asarray(history["val_rel_l2"], dtype=float)
    ax.plot(epochs, val, label="validation rel. L2 error")
    if np.isfinite(val).any():
        best = int(np.nanargmin(val))
        ax.plot(epochs[best], val[best], "o", color="k",
                label=f"selected: epoch {epochs[best]}, {val[best]:.3e}")
    log_axis(ax, "y")
    ax.set_ylabel("loss / error (dimensionless)")
    ax.set_title(title or "training history")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper right", framealpha=0.9)
    ax_lr.plot(epochs, history["lr"], color="tab:gray")
    log_axis(ax_lr, "y")
    ax_lr.set_ylabel("learning rate")
    ax_lr.set_xlabel("epoch")
    integer_axis(ax_lr, "x")
    ax_lr.grid(True, which="both", alpha=0.3)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=100, format="png")
