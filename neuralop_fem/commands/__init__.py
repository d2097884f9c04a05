"""Subcommands of the ``neuralop-fem`` command line.

Each module here exposes ``register(subparsers)``, which adds its parser, and
``run(args) -> int``, which executes it. :mod:`neuralop_fem.cli` lists the modules in
``COMMANDS`` and imports only the one that runs, so ``neuralop-fem --help`` stays fast.
Commands parse arguments and call library functions; they hold no numerics.
"""

from __future__ import annotations

__all__: list[str] = []
