"""Where the zoo's run directories are, and ``zoo:NAME`` resolved to one.

A model of the zoo (:mod:`neuralop_fem.zoo`) is a minimal run directory ``entries/NAME/`` of
package data: its ``run.json``, the weights as ``weights.safetensors`` and the model card
``card.json``. Wherever a run directory is accepted (``load_trained``, ``Surrogate.load``,
``evaluate_run``, ``compare_run``, the command line's RUN_DIR), ``zoo:NAME`` names one:
:func:`resolve_run_dir` is the one place that resolves it. This module imports neither torch
nor numpy, and not the zoo package (which packs runs and writes cards, above the run record):
it is a core module, so that the run record (:mod:`neuralop_fem.runs`), which resolves
``zoo:NAME``, and the zoo, which lists its models without loading any, both stand on it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .errors import InputError

__all__ = ["CARD", "CARD_MD", "ENTRIES", "PLANNED", "PREFIX", "WEIGHTS", "available",
           "entry_dir", "is_entry", "planned_missing", "read_entry_card", "resolve_run_dir"]

#: The directory of the packaged entries.
ENTRIES = Path(__file__).resolve().parent / "zoo" / "entries"
#: What names a zoo model where a run directory is expected: ``zoo:NAME``.
PREFIX = "zoo:"
#: File names of an entry beside its ``run.json``.
WEIGHTS, CARD, CARD_MD = "weights.safetensors", "card.json", "card.md"
#: The models the zoo is to hold (``scripts/train_zoo.sh`` trains them); a version ships those
#: whose training has finished.
PLANNED = ("burgers-galerkin", "burgers-fourier", "burgers-fno", "darcy-galerkin", "darcy-fno",
           "darcy-inverse-galerkin")


def available(root: str | os.PathLike[str] | None = None) -> list[str]:
    """Names of the zoo's models (directories of ``root`` holding a card), sorted."""
    base = ENTRIES if root is None else Path(root)
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if (p / CARD).is_file())


def planned_missing(root: str | os.PathLike[str] | None = None) -> list[str]:
    """The :data:`PLANNED` models this installation does not hold (their training is pending)."""
    names = set(available(root))
    return [name for name in PLANNED if name not in names]


def entry_dir(name: str, root: str | os.PathLike[str] | None = None) -> Path:
    """The directory of the zoo model ``name``.

    Raises
    ------
    InputError
        For an unknown name: one line listing the available models; a planned model that this
        version does not ship yet is named as such.
    """
    names = available(root)
    if name not in names:
        listed = ", ".join(names) if names else "none (the zoo is empty)"
        if name in PLANNED:
            msg = (f"zoo model {name!r} is planned but not in this version (its training is "
                   f"pending; scripts/train_zoo.sh trains it); available: {listed}.")
        else:
            msg = f"unknown zoo model {name!r}; available: {listed}."
        raise InputError(msg)
    return (ENTRIES if root is None else Path(root)) / name


def resolve_run_dir(run_dir: str | os.PathLike[str]) -> Path:
    """``zoo:NAME`` -> the zoo entry's directory; any other value -> ``Path(run_dir)``.

    >>> resolve_run_dir("runs/gt").as_posix()
    'runs/gt'
    """
    text = os.fspath(run_dir)
    if isinstance(text, str) and text.startswith(PREFIX):
        return entry_dir(text[len(PREFIX):])
    return Path(text)


def is_entry(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a directory of the packaged zoo."""
    return Path(path).resolve().parent == ENTRIES


def read_entry_card(directory: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The ``card.json`` of a zoo entry directory; None for a directory without one (a run)."""
    path = Path(directory) / CARD
    if not path.is_file():
        return None
    try:
        with path.open(encoding="utf-8") as fh:
            card = json.load(fh)
    except (OSError, ValueError) as exc:
        msg = f"{path}: must be a model card (JSON); it is damaged ({exc})."
        raise InputError(msg) from None
    if not isinstance(card, dict):
        msg = f"{path}: must be a model card (a JSON object); got {type(card).__name__}."
        raise InputError(msg)
    return card
