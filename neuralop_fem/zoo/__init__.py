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
the run record's (:mod:`neuralop_fem.runs.zoo_entries`), re-exported here;
``Surrogate.pretrained(NAME)`` loads an entry. The zoo reads runs through the run record and
shares the commands that rerun them with the reproduction
(:mod:`neuralop_fem.runs.rerun_commands`); it does not import :mod:`neuralop_fem.reproduce`.
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import InputError
from ..runs.zoo_entries import (
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
           "entry_dir", "is_entry", "planned_missing", "read_card", "read_entry_card",
           "resolve_run_dir"]


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
