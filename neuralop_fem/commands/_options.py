"""Option types shared by the commands (private): the numbers' (from
:mod:`neuralop_fem.number_options`), the paths' and their checks (from
:mod:`neuralop_fem.path_options`), the device, the sample indices and the help text.

The argparse types turn a bad value into a one-line usage error (exit status 2) while the
command line is parsed, before anything is imported or computed:

>>> positive = int_range(1)
>>> positive("3")
3
>>> positive("0")
Traceback (most recent call last):
...
argparse.ArgumentTypeError: must be an integer >= 1; got '0'
"""

from __future__ import annotations

import argparse
import re

from ..number_options import INT64_MAX, float_range, int_range
from ..path_options import (
    check_input_dir,
    check_input_file,
    check_new_output_dir,
    check_output_apart,
    check_output_dir,
    check_output_file,
    check_paths_apart,
    input_dir,
    input_file,
    naming,
    output_dir,
    output_file,
    path_options,
)

__all__ = [
    "INT64_MAX",
    "check_input_dir",
    "check_input_file",
    "check_new_output_dir",
    "check_output_apart",
    "check_output_dir",
    "check_output_file",
    "check_paths_apart",
    "device",
    "float_range",
    "indices",
    "input_dir",
    "input_file",
    "int_range",
    "naming",
    "output_dir",
    "output_file",
    "path_options",
    "plain_text",
]

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
