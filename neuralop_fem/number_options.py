"""Argparse types for numbers: a bad value is a one-line usage error (exit status 2) while the
options are parsed, before anything is imported or computed.

The command line's options (:mod:`neuralop_fem.commands`) and the scripts run like its
commands (:mod:`neuralop_fem.reproduce.script_runner`) share them. This module imports only
the standard library (it is on the light path of ``neuralop-fem --help``).

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
import math
from collections.abc import Callable

__all__ = ["INT64_MAX", "float_range", "int_range"]

#: Largest integer an option accepts: every integer is stored (netCDF, JSON, torch) as int64.
INT64_MAX = 2**63 - 1  # = neuralop_fem.config_base.INT64_MAX (not imported: --help stays light)


def int_range(minimum: int, maximum: int = INT64_MAX) -> Callable[[str], int]:
    """An argparse type: a decimal integer in ``[minimum, maximum]``."""

    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            value = None
        if value is not None and minimum <= value <= maximum:
            return value
        if maximum == INT64_MAX:
            bound = f">= {minimum}"
            if value is not None and value > maximum:
                bound += f" that fits in 64 bits (at most {maximum})"
        else:
            bound = f"in [{minimum}, {maximum}]"
        msg = f"must be an integer {bound}; got {text!r}"
        raise argparse.ArgumentTypeError(msg)

    parse.__name__ = "integer"
    return parse


def float_range(minimum: float, *, inclusive: bool = False) -> Callable[[str], float]:
    """An argparse type: a finite number ``> minimum`` (``>= minimum`` if ``inclusive``;
    ``minimum=-math.inf``: any finite number)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        ok = math.isfinite(value) and (value >= minimum if inclusive else value > minimum)
        if ok:
            return value
        relation = "" if minimum == -math.inf else \
            f" {'>=' if inclusive else '>'} {minimum:g}"
        msg = f"must be a finite number{relation}; got {text!r}"
        raise argparse.ArgumentTypeError(msg)

    parse.__name__ = "number"
    return parse
