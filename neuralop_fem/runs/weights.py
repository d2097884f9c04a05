"""The weights of a zoo model: one safetensors file, no pickle and no code.

A zoo entry is a run directory whose selected model is this file instead of ``best.pt``
(:meth:`~neuralop_fem.runs.RunDir.operator_payload` reads either).

The file holds the tensors of a best-model payload
(:func:`~neuralop_fem.training.checkpoint.operator_payload`) under ``state_dict/<key>``,
``input_normalizer/<key>`` and ``output_normalizer/<key>``, and its other fields (format,
model family and config, Dirichlet flag) as JSON in the file's metadata entry
``neuralop_fem``. Reading it rebuilds the payload, which
:func:`~neuralop_fem.training.checkpoint.build_operator` checks like a ``best.pt``.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import torch

from ..errors import RunDirectoryError
from ..files import atomic_path

__all__ = ["file_sha256", "read_payload", "save_weights", "verify_weights"]

_TENSOR_GROUPS = ("state_dict", "input_normalizer", "output_normalizer")
#: The metadata entry holding the payload's other fields (JSON).
_KEY = "neuralop_fem"


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes, as hex."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_weights(path: str | os.PathLike[str], card: dict[str, Any] | None) -> None:
    """Check that the weights file ``path`` is the one its model ``card`` was packed with.

    Nothing to check without a card (a run directory of the user's own).

    Raises
    ------
    RunDirectoryError
        If the file's SHA-256 differs from the card's ``weights`` record (the file was
        changed after packing), or the card has no such record.
    """
    if card is None:
        return
    record = card.get("weights")
    if not isinstance(record, dict) or not isinstance(record.get("sha256"), str):
        msg = (f"{Path(path).parent / 'card.json'}: field `weights` must give the sha256 of "
               f"{Path(path).name}; got {record!r}.")
        raise RunDirectoryError(msg)
    found = file_sha256(path)
    if found != record["sha256"]:
        msg = (f"{path} is not the file its model card was packed with (sha256 {found[:16]}..., "
               f"card {record['sha256'][:16]}...): it was changed or damaged; reinstall the "
               f"package or pack the run again with `neuralop-fem zoo add`.")
        raise RunDirectoryError(msg)


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
    # one metadata entry: safetensors writes several in no fixed order (the file's bytes would
    # differ from one packing of the same weights to the next)
    record = {"format": str(payload["format"]), "family": str(payload["family"]),
              "model_config": payload["model_config"], "dirichlet": bool(payload["dirichlet"]),
              "groups": present}
    edges = payload.get("dirichlet_edges")
    if edges is not None and edges[0] != edges[1]:  # else `dirichlet` says it (older files)
        record["dirichlet_edges"] = [bool(e) for e in edges]
    metadata = {_KEY: json.dumps(record, sort_keys=True)}
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
        record = json.loads(metadata[_KEY])
        groups = list(record["groups"])
        payload: dict[str, Any] = {k: record[k] for k in ("format", "family", "model_config",
                                                          "dirichlet")}
        if "dirichlet_edges" in record:
            payload["dirichlet_edges"] = record["dirichlet_edges"]
    except (OSError, SafetensorError, KeyError, ValueError, TypeError) as exc:
        msg = (f"{path} must be the safetensors weights of a zoo model (metadata `{_KEY}`: format, "
               f"family, model_config, dirichlet, groups); it is damaged: "
               f"{type(exc).__name__}: {exc}")
        raise RunDirectoryError(msg) from None
    for group in _TENSOR_GROUPS:
        prefix = f"{group}/"
        found = {k[len(prefix):]: v for k, v in tensors.items() if k.startswith(prefix)}
        payload[group] = found if group in groups else None
    return payload
