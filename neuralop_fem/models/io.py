"""Save and load operator learners: config + family + state dict, never pickled code."""

from __future__ import annotations

import os
from typing import Any

import torch
from torch import nn

from solvers.errors import InputError

from .presets import MODEL_FAMILIES

__all__ = ["FORMAT", "load_model", "model_from_config", "save_model"]

FORMAT = "neuralop_fem.models/1"


def save_model(model: nn.Module, path: str | os.PathLike[str]) -> None:
    """Write ``model`` (built by :func:`build_model`) to ``path`` with ``torch.save``.

    The file holds only plain data: ``{"format", "family", "config": dict,
    "state_dict"}``, so :func:`load_model` can use ``torch.load(weights_only=True)``.

    Raises
    ------
    InputError
        If ``model`` has no ``config`` of a known model family.
    """
    config = getattr(model, "config", None)
    family = getattr(config, "family", None)
    if family not in MODEL_FAMILIES or type(config) is not MODEL_FAMILIES[family][0]:
        msg = (
            "`model` must be built by neuralop_fem.models.build_model (with a `config` of "
            f"family {', '.join(MODEL_FAMILIES)}); got {type(model).__name__}."
        )
        raise InputError(msg)
    payload = {
        "format": FORMAT,
        "family": family,
        "config": config.to_dict(),  # type: ignore[union-attr]
        "state_dict": {k: v.detach().cpu() for k, v in model.state_dict().items()},
    }
    torch.save(payload, os.fspath(path))


def model_from_config(
    family: str,
    config: dict[str, Any],
    *,
    source: str,
    error: type[Exception] = InputError,
) -> nn.Module:
    """Build an (untrained) model of ``family`` from its JSON config dict.

    Raises ``error`` (default :class:`InputError`), naming ``source``, for an unknown family.
    """
    if family not in MODEL_FAMILIES:
        msg = f"`family` in {source} must be one of {', '.join(MODEL_FAMILIES)}; got {family!r}."
        raise error(msg)
    config_cls, model_cls = MODEL_FAMILIES[family]
    return model_cls(config_cls.from_dict(config))


def load_model(
    path: str | os.PathLike[str], *, map_location: Any = None
) -> nn.Module:
    """Rebuild a model saved by :func:`save_model`, from its config alone.

    Uses ``torch.load(weights_only=True)``: no code from the file is executed.
    The model is returned in eval mode.

    Raises
    ------
    InputError
        If the file is not a neuralop_fem model file or names an unknown family.
    """
    payload = torch.load(os.fspath(path), map_location=map_location, weights_only=True)
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        msg = f"`path` must be a model file written by save_model ({FORMAT}); got {path!s}."
        raise InputError(msg)
    model = model_from_config(payload["family"], payload["config"], source=str(path))
    model.load_state_dict(payload["state_dict"])
    if map_location is not None:
        model.to(map_location)
    return model.eval()
