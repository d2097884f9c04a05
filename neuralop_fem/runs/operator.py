"""The trained operator of a run: what ``best.pt`` holds and how it is loaded back.

:func:`operator_payload` is everything to rebuild a :class:`~neuralop_fem.models.NormalizedOperator`
alone (model family and configuration, normalisers, boundary edges, weights);
:func:`build_operator` rebuilds it from a payload read as untrusted (every field checked, the
model's size checked before it is built); :func:`load_run` loads the selected model of a run
directory, or of a zoo model (``zoo:NAME``), with its :class:`~neuralop_fem.runs.RunRecord`.
The trainer writes payloads (:mod:`neuralop_fem.training.checkpoint`); the surrogate, the
evaluation and the zoo read them through this module.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from torch import nn

from ..data.normalizer import UnitGaussianNormalizer
from ..errors import RunDirectoryError
from ..models import NormalizedOperator
from ..models.io import check_state_dict, load_torch_file, model_from_config
from .record import RunRecord
from .run_dir import BEST, RunDir

__all__ = ["BEST_FORMAT", "build_operator", "load_best", "load_run", "load_trained",
           "operator_payload"]

BEST_FORMAT = "neuralop_fem.training.best/1"
_NORMALIZER_KEYS = ("mean", "std", "eps", "periodic")


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
