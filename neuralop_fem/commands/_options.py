"""Option types of the commands that are theirs alone (private): the device, the sample
indices and the help text. The numbers' types are :mod:`neuralop_fem.number_options`', the
paths' types and checks :mod:`neuralop_fem.path_options`' (the command line shares those).

The argparse types turn a bad value into a one-line usage error (exit status 2) while the
command line is parsed, before anything is imported or computed:

>>> device("cuda:1")
'cuda:1'
>>> device("gpu")
Traceback (most recent call last):
...
argparse.ArgumentTypeError: must be auto, cpu, cuda or cuda:K; got 'gpu'
"""

from __future__ import annotations

import argparse
import re

__all__ = ["device", "indices", "plain_text"]

_ROLE = re.compile(r":[a-z]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`")
_LITERAL = re.compile(r"``([^`]*)``")

_DEVICE = re.compile(r"^(auto|cpu|cuda(:\d+)?)$")


def plain_text(text: str) -> str:
    """``text`` (a docstring paragraph) without reStructuredText markup, for ``--help``.

    >>> plain_text("The best model (:class:`~neuralop_fem.Surrogate`) writes ``--out``.")
    'The best model (Surrogate) writes --out.'
    """
    text = _ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1] if "~" in m.group(0)
                     else m.group(1), text)
    return _LITERAL.sub(r"\1", text)


def device(text: str) -> str:
    """An argparse type: ``auto``, ``cpu``, ``cuda`` or ``cuda:K`` (availability: later)."""
    if _DEVICE.match(text):
        return text
    msg = f"must be auto, cpu, cuda or cuda:K; got {text!r}"
    raise argparse.ArgumentTypeError(msg)


def indices(text: str) -> str:
    """An argparse type: ``test``, ``all`` or ``A:B`` with optional integers A and B.

    Whether the positions exist is checked against the dataset (an error, never clipped).
    """
    if text in ("test", "all"):
        return text
    parts = text.split(":")
    if len(parts) == 2 and all(re.fullmatch(r"\s*(-?\d+)?\s*", p) for p in parts):
        return text
    msg = f"must be test, all or A:B with integers A and B; got {text!r}"
    raise argparse.ArgumentTypeError(msg)
