"""The run directory: checkpoints, ``run.json``, ``metrics.csv`` and the loss curve.

Layout of ``RUN_DIR`` (relied on by :class:`~neuralop_fem.Surrogate`)::

    run.json        human-readable: preset, model config, TrainConfig, data provenance, splits,
                    resolution, versions, hardware, wall time, best epoch, val/test errors
    last.pt         everything to resume: model, optimizer, scheduler, epoch, history, RNG states
    best.pt         the selected model alone: weights + normaliser buffers + model config
    metrics.csv     per epoch: train loss, validation relative L2, learning rate, epoch time
    loss_curve.png  train loss and validation error against the epoch

Every ``.pt`` file holds only tensors and plain Python containers, so it loads with
``torch.load(weights_only=True)``. Files are written to a temporary name and renamed into
place: a killed run never leaves a truncated checkpoint.
"""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path
from typing import Any

import torch
from torch import nn

from ..errors import ConfigError
from ..files import atomic_path, write_text_atomic
from ..models import NormalizedOperator
from ..models.io import model_from_config

__all__ = [
    "BEST_FORMAT",
    "LAST_FORMAT",
    "build_operator",
    "load_trained",
    "operator_payload",
    "read_run_info",
    "save_atomic",
    "write_json",
    "write_loss_curve",
    "write_metrics_csv",
]

BEST_FORMAT = "neuralop_fem.training.best/1"
LAST_FORMAT = "neuralop_fem.training.last/1"
RUN_JSON, LAST, BEST, METRICS, CURVE = (
    "run.json", "last.pt", "best.pt", "metrics.csv", "loss_curve.png",
)


def save_atomic(obj: Any, path: Path) -> None:
    """``torch.save`` through :func:`neuralop_fem.files.atomic_path`."""
    with atomic_path(path) as tmp:
        torch.save(obj, tmp)


def _compact_lists(text: str) -> str:
    """Put JSON lists of numbers on one line (split indices stay readable)."""
    return re.sub(
        r"\[\s*((?:-?[\d.eE+-]+,\s*)*-?[\d.eE+-]+)\s*\]",
        lambda m: "[" + ", ".join(m.group(1).replace(",", " ").split()) + "]",
        text,
    )


def write_json(obj: dict[str, Any], path: Path) -> None:
    """Atomically write ``obj`` as indented JSON."""
    write_text_atomic(path, _compact_lists(json.dumps(obj, indent=2, sort_keys=False)) + "\n")


def _normalizer_state(norm: nn.Module | None) -> dict[str, torch.Tensor] | None:
    if norm is None:
        return None
    return {k: v.detach().cpu().clone() for k, v in norm.state_dict().items()}


def operator_payload(
    operator: NormalizedOperator, *, extra: dict[str, Any] | None = None
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
        "state_dict": {k: v.detach().cpu().clone() for k, v in operator.state_dict().items()},
        **(extra or {}),
    }


def build_operator(payload: dict[str, Any], *, source: str = "<payload>") -> NormalizedOperator:
    """Rebuild a :class:`NormalizedOperator` from :func:`operator_payload` output (eval mode)."""
    from ..data.normalizer import UnitGaussianNormalizer

    if not isinstance(payload, dict) or payload.get("format") != BEST_FORMAT:
        msg = f"`{source}` must be a best-model checkpoint ({BEST_FORMAT}); got another file."
        raise ConfigError(msg)
    model = model_from_config(payload["family"], payload["model_config"], source=str(source),
                              error=ConfigError)
    norms = [
        None if payload[key] is None else UnitGaussianNormalizer.from_state_dict(payload[key])
        for key in ("input_normalizer", "output_normalizer")
    ]
    operator = NormalizedOperator(
        model, input_normalizer=norms[0], output_normalizer=norms[1],
        dirichlet=bool(payload["dirichlet"]),
    )
    operator.load_state_dict(payload["state_dict"])
    return operator.eval()


def read_run_info(run_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """The parsed ``run.json`` of a run directory."""
    path = Path(run_dir) / RUN_JSON
    if not path.is_file():
        msg = f"`run_dir` must be a training run directory with {RUN_JSON}; got {run_dir}."
        raise ConfigError(msg)
    return json.loads(path.read_text())


def load_trained(
    run_dir: str | os.PathLike[str], *, map_location: Any = None
) -> tuple[NormalizedOperator, dict[str, Any]]:
    """Load the selected (best-validation) model of a run.

    Parameters
    ----------
    run_dir : path
        A directory written by :class:`~neuralop_fem.training.Trainer`.
    map_location : optional
        Passed to ``torch.load``; the model is moved there too.

    Returns
    -------
    (NormalizedOperator, dict)
        The model with its normalisers and boundary condition, in eval mode, and the
        contents of ``run.json``.

    Raises
    ------
    ConfigError
        If ``run_dir`` has no ``run.json`` or no ``best.pt``.
    """
    info = read_run_info(run_dir)
    path = Path(run_dir) / BEST
    if not path.is_file():
        msg = f"`run_dir` must contain {BEST} (a run that finished at least one epoch); got {run_dir}."
        raise ConfigError(msg)
    payload = torch.load(path, map_location=map_location, weights_only=True)
    operator = build_operator(payload, source=str(path))
    if map_location is not None:
        operator.to(map_location)
    return operator, info


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
    """Train loss and validation relative L2 against the epoch (log scale), matplotlib Agg."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    epochs = list(range(1, len(history["train_loss"]) + 1))
    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    ax.semilogy(epochs, history["train_loss"], label="train loss")
    ax.semilogy(epochs, history["val_rel_l2"], label="validation rel. L2")
    ax.set_xlabel("epoch")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=100, format="png")
