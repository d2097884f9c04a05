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
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict

import numpy as np
import torch
from torch import nn

from ..data.normalizer import UnitGaussianNormalizer
from ..errors import RunDirectoryError
from ..files import atomic_path
from ..models import NormalizedOperator
from ..models.io import check_state_dict, load_torch_file, model_from_config
from ..plotting import integer_axis, log_axis
from ..runs import RunDir, RunRecord
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

BEST_FORMAT = "neuralop_fem.training.best/1"
LAST_FORMAT = "neuralop_fem.training.last/1"
#: The checkpoint file names (``LAST``, ``BEST``, ``METRICS``, ``CURVE``, ``PARTIAL``) are
#: :mod:`neuralop_fem.runs.run_dir`'s, imported here.
_NORMALIZER_KEYS = ("mean", "std", "eps", "periodic")


def save_atomic(obj: object, path: Path) -> None:
    """``torch.save`` through :func:`neuralop_fem.files.atomic_path`."""
    with atomic_path(path) as tmp:
        torch.save(obj, tmp)


def _normalizer_state(norm: nn.Module | None) -> dict[str, torch.Tensor] | None:
    if norm is None:
        return None
    return {k: v.detach().cpu().clone() for k, v in norm.state_dict().items()}


def operator_payload(
    operator: NormalizedOperator, *, extra: Mapping[str, object] | None = None
) -> dict[str, Any]:
    """Everything to rebuild ``operator`` alone: model family + config, normalisers, weights."""
    model = operator.model
    config = model.config
    return {
        "format": BEST_FORMAT,
        "family": config.family,
        "model_config": config.to_dict(),
        "input_normalizer": _normalizer_state(operator.input_normalizer),
        "output_normalizer": _normalizer_state(operator.output_normalizer),
        "dirichlet": bool(operator.dirichlet),
        "dirichlet_edges": list(operator.dirichlet_edges),
        "state_dict": {k: v.detach().cpu().clone() for k, v in operator.state_dict().items()},
        **(extra or {}),
    }


def _normalizer(payload: dict[str, Any], key: str, source: str) -> nn.Module | None:
    """The normaliser stored under ``key`` of a best-model payload, checked."""
    state = payload.get(key)
    if state is None:
        return None
    where = f"{source}, field `{key}`"
    ok = isinstance(state, dict) and set(state) == set(_NORMALIZER_KEYS) and all(
        isinstance(state[k], torch.Tensor) for k in _NORMALIZER_KEYS
    )
    if ok:
        mean, std = state["mean"], state["std"]
        ok = (mean.is_floating_point() and std.is_floating_point() and mean.shape == std.shape
              and 2 <= mean.ndim <= 3 and state["eps"].numel() == 1
              and state["periodic"].numel() == 1
              and bool(torch.isfinite(mean).all()) and bool((std >= 0).all()))
    if not ok:
        msg = (f"{where} must be null or a normaliser state {{mean, std (same float shape "
               "(*spatial, channels), finite, std >= 0), eps, periodic}; the file is damaged.")
        raise RunDirectoryError(msg)
    return UnitGaussianNormalizer.from_state_dict(state)


def build_operator(
    payload: object, *, source: str = "<payload>", resolution: int | None = None,
) -> NormalizedOperator:
    """Rebuild a :class:`NormalizedOperator` from :func:`operator_payload` output (eval mode).

    The model config is checked against the size limits (at ``resolution`` if given) before
    the model is built, and the weights against the model before they are loaded.

    Raises
    ------
    RunDirectoryError
        Naming ``source`` and the field: another file format, an unknown family, an invalid
        or oversized config, damaged normalisers, or weights that do not fit the model.
    """
    if not isinstance(payload, dict) or payload.get("format") != BEST_FORMAT:
        msg = f"`{source}` must be a best-model checkpoint ({BEST_FORMAT}); got another file."
        raise RunDirectoryError(msg)
    model = model_from_config(payload.get("family"), payload.get("model_config"),
                              source=str(source), error=RunDirectoryError,
                              field="model_config", resolution=resolution)
    norms = [_normalizer(payload, key, str(source))
             for key in ("input_normalizer", "output_normalizer")]
    dirichlet = payload.get("dirichlet")
    if not isinstance(dirichlet, bool):
        msg = f"{source}, field `dirichlet` must be true or false; got {dirichlet!r}."
        raise RunDirectoryError(msg)
    # The pinned edges (first, last); a payload written before they were recorded pins all
    # four edges or none, as `dirichlet` says.
    edges = payload.get("dirichlet_edges", [dirichlet, dirichlet])
    if not (isinstance(edges, list | tuple) and len(edges) == 2
            and all(isinstance(e, bool) for e in edges) and any(edges) == dirichlet):
        msg = (f"{source}, field `dirichlet_edges` must be two booleans (first, last), some "
               f"true exactly when `dirichlet` ({dirichlet}) is; got {edges!r}.")
        raise RunDirectoryError(msg)
    operator = NormalizedOperator(
        model, input_normalizer=norms[0], output_normalizer=norms[1],
        dirichlet=(edges[0], edges[1]),
    )
    check_state_dict(operator, payload.get("state_dict"), source=str(source),
                     error=RunDirectoryError)
    operator.load_state_dict(payload["state_dict"])
    return operator.eval()


def load_best(path: Path, *, resolution: int | None = None) -> NormalizedOperator:
    """The operator of a ``best.pt`` file, read and checked (:func:`build_operator`), on CPU."""
    payload = load_torch_file(path, what=f"a best-model checkpoint ({BEST})",
                              error=RunDirectoryError, map_location="cpu")
    return build_operator(payload, source=str(path), resolution=resolution)


def load_run(
    run_dir: str | os.PathLike[str] | RunDir, *,
    map_location: str | torch.device | None = None,
) -> tuple[NormalizedOperator, RunRecord]:
    """Load the selected (best-validation) model of a run and its record.

    Parameters
    ----------
    run_dir : path or RunDir
        A directory written by :class:`~neuralop_fem.training.Trainer`, or ``"zoo:NAME"``, a
        model of the zoo (:mod:`neuralop_fem.zoo`; its weights are read from
        ``weights.safetensors``).
    map_location : optional
        Device the model is moved to (the file is read on the CPU).

    Returns
    -------
    (NormalizedOperator, RunRecord)
        The model with its normalisers and boundary condition, in eval mode, and the
        record of ``run.json``.

    Raises
    ------
    RunDirectoryError
        If ``run_dir`` has no ``run.json`` or no ``best.pt``, or either is unreadable,
        damaged or holds values out of range (see :meth:`~neuralop_fem.runs.RunDir.read` and
        :func:`build_operator`); the message names the file and the field.
    """
    run = RunDir.resolve(run_dir)  # zoo:NAME -> the zoo entry's directory
    record = run.read_checked()
    resolution = record.resolution
    payload, path = run.operator_payload()
    operator = build_operator(payload, source=str(path), resolution=resolution)
    family = operator.model.config.family
    recorded = record.model_family
    if recorded != family and (recorded is not None or "model_family" in record.nulls):
        msg = (f"{run.run_json}: field `model_family` is {recorded!r} but "
               f"{path} holds a {family!r} model; the files come from different runs.")
        raise RunDirectoryError(msg)
    smallest = int(getattr(operator.model, "min_resolution", 1))
    if resolution is not None and resolution < smallest:
        msg = (f"{run.run_json}: field `resolution` must be >= {smallest}, the "
               f"smallest grid the model of {BEST} supports; got {resolution}.")
        raise RunDirectoryError(msg)
    if map_location is not None:
        operator.to(map_location)
    return operator, record


def load_trained(
    run_dir: str | os.PathLike[str], *, map_location: str | torch.device | None = None
) -> tuple[NormalizedOperator, dict[str, Any]]:
    """Load the selected (best-validation) model of a run: :func:`load_run`, with the record
    as the plain contents of ``run.json`` (a dict).

    Raises
    ------
    RunDirectoryError
        As :func:`load_run`.
    """
    operator, record = load_run(run_dir, map_location=map_location)
    return operator, record.to_dict()


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
