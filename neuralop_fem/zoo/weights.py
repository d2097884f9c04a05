"""The weights of a zoo model: one safetensors file, no pickle and no code.

The file holds the tensors of a best-model payload
(:func:`~neuralop_fem.training.checkpoint.operator_payload`) under ``state_dict/<key>``,
``input_normalizer/<key>`` and ``output_normalizer/<key>``, and its other fields (format,
model family and config, Dirichlet flag) as the file's text metadata; reading it rebuilds the
payload and checks it like a ``best.pt`` (:func:`~neuralop_fem.training.checkpoint.build_operator`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import torch

from ..errors import RunDirectoryError
from ..files import atomic_path

__all__ = ["load_weights", "read_payload", "save_weights"]

_TENSOR_GROUPS = ("state_dict", "input_normalizer", "output_normalizer")


def save_weights(payload: dict[str, Any], path: str | os.PathLike[str]) -> None:
    """Write the tensors and config of a best-model ``payload`` to a safetensors file."""
    from safetensors.torch import save_file

    tensors: dict[str, torch.Tensor] = {}
    present = []
    for group in _TENSOR_GROUPS:
        values = payload.get(group)
        if values is None:
            continue
        present.append(group)
        for key, value in values.items():
            tensors[f"{group}/{key}"] = value.detach().cpu().contiguous().clone()
    metadata = {
        "format": str(payload["format"]), "family": str(payload["family"]),
        "model_config": json.dumps(payload["model_config"], sort_keys=True),
        "dirichlet": json.dumps(bool(payload["dirichlet"])), "groups": json.dumps(present),
    }
    with atomic_path(Path(path)) as tmp:
        save_file(tensors, os.fspath(tmp), metadata=metadata)


def read_payload(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The best-model payload stored in a safetensors file (tensors on the CPU).

    Raises
    ------
    RunDirectoryError
        If the file is not a safetensors file of this layout (naming the file).
    """
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(os.fspath(path), framework="pt", device="cpu") as fh:
            metadata = fh.metadata() or {}
            tensors = {key: fh.get_tensor(key) for key in fh.keys()}  # noqa: SIM118
        groups = json.loads(metadata["groups"])
        payload: dict[str, Any] = {
            "format": metadata["format"], "family": metadata["family"],
            "model_config": json.loads(metadata["model_config"]),
            "dirichlet": json.loads(metadata["dirichlet"]),
        }
    except (OSError, SafetensorError, KeyError, ValueError, TypeError) as exc:
        msg = (f"{path} must be the safetensors weights of a zoo model (metadata format, family, "
               f"model_config, dirichlet, groups); it is damaged: {type(exc).__name__}: {exc}")
        raise RunDirectoryError(msg) from None
    for group in _TENSOR_GROUPS:
        prefix = f"{group}/"
        found = {k[len(prefix):]: v for k, v in tensors.items() if k.startswith(prefix)}
        payload[group] = found if group in groups else None
    return payload


def load_weights(path: str | os.PathLike[str], *, resolution: int | None = None) -> Any:
    """The :class:`~neuralop_fem.models.NormalizedOperator` of a weights file (eval mode, CPU),
    checked like a ``best.pt`` (:func:`~neuralop_fem.training.checkpoint.build_operator`)."""
    from ..training.checkpoint import build_operator

    return build_operator(read_payload(path), source=os.fspath(path), resolution=resolution)
