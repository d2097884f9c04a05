"""Running a script the way the ``neuralop-fem`` command line runs a command.

The benchmark scripts and ``benchmarks/reproduce_paper.py`` parse their options with the
command line's rules (:func:`count`, :func:`number_above`) and run their ``main`` through
:func:`run_script`, so a bad option or input is one line on stderr and exit status 2, and no
results file is rewritten. The rules are the command line's own
(:mod:`neuralop_fem.reporting`, :mod:`neuralop_fem.number_options`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from ..number_options import float_range, int_range
from ..reporting import run_reporting

__all__ = ["count", "number_above", "run_script"]


def count(minimum: int = 1) -> Callable[[str], int]:
    """An argparse type for a count or a size: a decimal integer ``>= minimum``
    (``--samples 0`` stops with ``argument --samples: must be an integer >= 1; got '0'``)."""
    return int_range(minimum)


def number_above(minimum: float) -> Callable[[str], float]:
    """An argparse type: a finite number ``> minimum``."""
    return float_range(minimum)


def run_script(main: Callable[[list[str]], int | None], argv: list[str] | None = None) -> int:
    """Run a script's ``main(argv)`` the way the ``neuralop-fem`` command line runs a command.

    A bad input (:class:`~neuralop_fem.errors.NeuralopFemError`), an :class:`OSError` or a
    :class:`MemoryError` ends the script with one line on stderr, ``<script>: error: ...``, and
    exit status 2; any other exception is reported as an internal error (status 1); Ctrl-C
    gives status 130. ``--debug`` anywhere in ``argv`` shows the traceback instead.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    name = Path(sys.argv[0]).name or "script"
    return run_reporting(lambda: int(main(argv) or 0), name, debug=debug)
