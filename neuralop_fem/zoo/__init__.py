"""The model zoo: trained surrogates shipped with the package, each with its model card.

This package owns the zoo's entries and what is written about them: packing a finished run
into an entry (:mod:`.pack`, ``neuralop-fem zoo add``), its model card (:mod:`.card`: how to
regenerate the data and retrain, the commit, the test errors per sample at each evaluated
resolution, hardware and training time, size and the fair verdict when one was measured) and
reading a card back (:func:`read_card`). An entry ``entries/NAME/`` is a minimal run
directory: ``run.json`` (the run's record, :class:`~neuralop_fem.runs.RunRecord`, its data path
removed: the card identifies the data by its generate command and checksum), the selected
model as ``weights.safetensors`` (weights and normaliser buffers only, no pickle, no code:
:mod:`neuralop_fem.runs.weights`), and ``card.json`` with ``card.md``. Where the entries are
and how ``zoo:NAME`` resolves to one wherever a run directory is accepted
(``Surrogate.load``, ``evaluate_run``, ``compare_run``, ``neuralop-fem evaluate/compare``) is
a core module's (:mod:`neuralop_fem.zoo_entries`), re-exported here;
``Surrogate.pretrained(NAME)`` loads an entry. The zoo reads runs through the run record and
shares the commands that rerun them with the reproduction
(:mod:`neuralop_fem.runs.rerun_commands`); it does not import :mod:`neuralop_fem.reproduce`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..errors import InputError
from ..zoo_entries import (
    CARD,
    CARD_MD,
    ENTRIES,
    PLANNED,
    PREFIX,
    WEIGHTS,
    available,
    entry_dir,
    is_entry,
    planned_missing,
    read_entry_card,
    resolve_run_dir,
)

__all__ = ["CARD", "CARD_MD", "ENTRIES", "PLANNED", "PREFIX", "WEIGHTS", "available",
           "entry_dir", "is_entry", "output_resolution", "planned_missing", "read_card",
           "read_entry_card", "resolve_run_dir", "summary_row"]


def read_card(name: str, root: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The model card (``card.json``) of the zoo model ``name``.

    Raises
    ------
    InputError
        For an unknown name (listing the available models), or a card that is not the card of
        ``name``.
    """
    card = read_entry_card(entry_dir(name, root))
    if card is None or card.get("name") != name:
        msg = f"{entry_dir(name, root) / CARD}: must be the model card of {name!r}; damaged."
        raise InputError(msg)
    return card


def output_resolution(training: Mapping[str, Any]) -> int:
    """The grid a model's output is on, from a card's ``training`` (older cards: its training
    resolution)."""
    return training.get("output_resolution") or training["resolution"]


def summary_row(card: Mapping[str, Any]) -> dict[str, Any]:
    """Name, problem, preset, test error at the training resolution, parameters, weight bytes.

    ``grid`` names where that error was measured: the resolution, or ``"141 -> 36"`` for a model
    whose output grid is coarser than its input (the inverse problem).
    """
    train_n = card["training"]["resolution"]
    out_n = output_resolution(card["training"])
    errors = {e["resolution"]: e for e in card["test"]["errors"]}
    own = errors.get(train_n) or card["test"]["errors"][0]
    grid = f"{train_n} -> {out_n}" if own["resolution"] == train_n != out_n else own["resolution"]
    return {"name": card["name"], "problem": card["problem"], "preset": card["preset"],
            "resolution": own["resolution"], "grid": str(grid), "rel_l2": own["rel_l2_mean"],
            "n_parameters": card["n_parameters"], "bytes": card["weights"]["bytes"]}
