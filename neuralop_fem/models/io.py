"""Save and load operator learners: config + family + state dict, never pickled code.

Every reader here treats the file as untrusted: ``torch.load(weights_only=True)`` on a
regular file only (:func:`load_torch_file`), the config validated by its dataclass and
checked against the size limits of :mod:`~neuralop_fem.models.size` before the model is
built (:func:`model_from_config`), and the state dict's keys, shapes and dtypes compared with
the built model before ``load_state_dict`` (:func:`check_state_dict`). Each failure is one
project error that names the file and the field.
"""

from __future__ import annotations

import os
import pickle
import zipfile
from typing import Any

import torch
from torch import nn

from ..errors import InputError
from ..files import atomic_path, open_for_reading
from ..zip_check import archive_problem
from .presets import MODEL_FAMILIES
from .size import check_model_size

__all__ = [
    "FORMAT",
    "check_state_dict",
    "load_model",
    "load_torch_file",
    "model_from_config",
    "save_model",
]

FORMAT = "neuralop_fem.models/1"

#: What ``torch.load`` raises on a truncated, damaged or foreign file (never shown verbatim:
#: torch's message advises ``weights_only=False``, which would execute code from the file).
_LOAD_ERRORS = (
    pickle.UnpicklingError, RuntimeError, EOFError, ValueError, TypeError, KeyError,
    IndexError, AttributeError, ImportError, OverflowError, UnicodeDecodeError, OSError,
    zipfile.BadZipFile, MemoryError,
)


def save_model(model: nn.Module, path: str | os.PathLike[str]) -> None:
    """Write ``model`` (built by :func:`build_model`) to ``path`` with ``torch.save``.

    The file holds only plain data: ``{"format", "family", "config": dict,
    "state_dict"}``, so :func:`load_model` can use ``torch.load(weights_only=True)``. It is
    written atomically (:func:`neuralop_fem.files.atomic_path`): a link at ``path`` is
    replaced, never written through.

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
    with atomic_path(path) as tmp:
        torch.save(payload, tmp)


def load_torch_file(
    path: str | os.PathLike[str], *, what: str, error: type[Exception] = InputError,
    map_location: str | torch.device | None = None,
) -> Any:
    """``torch.load(weights_only=True)`` of a regular file, every failure as ``error``.

    Parameters
    ----------
    path : path-like
    what : str
        What the file should be (``"a best-model checkpoint (best.pt)"``), for the messages.
    error : exception class
        Raised with a message naming ``path``: missing, unreadable, empty, not a regular
        file, truncated, damaged or holding anything but tensors and plain containers.
    map_location : optional
        Passed to ``torch.load``.
    """
    with open_for_reading(path, what=what, error=error) as fh:
        try:
            problem = archive_problem(fh)
            if problem is not None:
                msg = (f"{os.fspath(path)}: cannot be read as {what}: {problem}. The file is "
                       "damaged or not written by neuralop_fem.")
                raise error(msg)
            return torch.load(fh, map_location=map_location, weights_only=True)
        except _LOAD_ERRORS as exc:
            if isinstance(exc, error):
                raise
            msg = (f"{os.fspath(path)}: cannot be read as {what}: the file is truncated, damaged, "
                   f"or holds more than tensors and plain containers ({type(exc).__name__}). "
                   "Restore it from a copy or write it again.")
            raise error(msg) from None


def _field(source: str, field: str) -> str:
    return f"{source}, field `{field}`"


def check_state_dict(
    module: nn.Module, state: object, *, source: str, field: str = "state_dict",
    error: type[Exception] = InputError, finite: bool = True,
) -> None:
    """Refuse a state dict that does not fit ``module`` exactly, before ``load_state_dict``.

    Checks, in order: a dict of tensors, the same keys (the first missing or unexpected key is
    named), the same shape and dtype for each key, and (``finite``) no NaN or infinite value.
    """
    where = _field(source, field)
    if not isinstance(state, dict) or not all(
        isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()
    ):
        msg = f"{where} must map parameter names to tensors; got {type(state).__name__}."
        raise error(msg)
    expected = module.state_dict()
    missing = [k for k in expected if k not in state]
    if missing:
        msg = (f"{where} lacks {missing[0]!r} (and {len(missing) - 1} more) of the model built "
               "from the file's config.")
        raise error(msg)
    unexpected = [k for k in state if k not in expected]
    if unexpected:
        msg = f"{where} has {unexpected[0]!r}, which the model built from the file's config lacks."
        raise error(msg)
    for key, ref in expected.items():
        value = state[key]
        if value.shape != ref.shape or value.dtype != ref.dtype:
            msg = (f"{where}: {key!r} has shape {tuple(value.shape)} and dtype {value.dtype}; "
                   f"the model built from the file's config needs {tuple(ref.shape)} and "
                   f"{ref.dtype}.")
            raise error(msg)
        if finite and value.is_floating_point() and not bool(torch.isfinite(value).all()):
            msg = f"{where}: {key!r} holds NaN or infinite values."
            raise error(msg)


def model_from_config(
    family: object,
    config: object,
    *,
    source: str,
    error: type[Exception] = InputError,
    field: str = "config",
    resolution: int | None = None,
) -> nn.Module:
    """Build an (untrained) model of ``family`` from its JSON config dict, checked first.

    The config is validated by its dataclass and refused, before anything is allocated, when
    it exceeds the limits of :mod:`neuralop_fem.models.size` (parameters, depth and, with
    ``resolution``, activations per sample).

    Raises
    ------
    error (default InputError)
        Naming ``source`` and the field: an unknown family, an invalid or unknown config
        value, or a model beyond the size limits.
    """
    if not isinstance(family, str) or family not in MODEL_FAMILIES:
        msg = (f"{_field(source, 'family')} must be one of {', '.join(MODEL_FAMILIES)}; "
               f"got {family!r}.")
        raise error(msg)
    config_cls, model_cls = MODEL_FAMILIES[family]
    where = _field(source, field)
    try:
        parsed = config_cls.from_dict(config)
    except (TypeError, ValueError) as exc:
        msg = f"{where}: {exc}"
        raise error(msg) from None
    check_model_size(parsed, source=where, resolution=resolution, error=error)
    return model_cls(parsed)


def load_model(
    path: str | os.PathLike[str], *, map_location: str | torch.device | None = None
) -> nn.Module:
    """Rebuild a model saved by :func:`save_model`, from its config alone.

    Uses ``torch.load(weights_only=True)``: no code from the file is executed. The config
    is checked against the size limits and the weights against the model built from it
    before they are loaded. The model is returned in eval mode.

    Raises
    ------
    InputError
        If the file is missing, unreadable, truncated or damaged, is not a neuralop_fem
        model file, names an unknown family, or holds a config or weights that do not fit
        (the message names the file and the field).
    """
    what = f"a model file written by save_model ({FORMAT})"
    payload = load_torch_file(path, what=what, map_location=map_location)
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        msg = f"`path` must be a model file written by save_model ({FORMAT}); got {path!s}."
        raise InputError(msg)
    model = model_from_config(payload.get("family"), payload.get("config"), source=str(path))
    check_state_dict(model, payload.get("state_dict"), source=str(path))
    model.load_state_dict(payload["state_dict"])
    if map_location is not None:
        model.to(map_location)
    return model.eval()
