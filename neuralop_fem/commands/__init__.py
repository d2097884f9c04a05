"""Subcommands of the ``neuralop-fem`` command line.

Each module here exposes ``register(subparsers)``, which adds its parser, and
``run(args) -> int``, which executes it. :mod:`neuralop_fem.cli` lists the modules in
``COMMANDS`` and imports only the one that runs, so ``neuralop-fem --help`` stays fast.
Commands parse arguments and call library functions; they hold no numerics.

:func:`check_paths_apart` is the check every command gets before it runs: no output option
names (or, for a directory, holds) an input of the same command. :func:`int_range`,
:func:`float_range` and :func:`input_file` are the argparse types of the options' rules, for
scripts that want the same checks and messages.
"""

from __future__ import annotations

from ..number_options import float_range, int_range
from ..path_options import check_paths_apart, input_file

__all__: list[str] = ["check_paths_apart", "float_range", "input_file", "int_range"]
