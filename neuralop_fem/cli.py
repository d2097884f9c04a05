"""The ``neuralop-fem`` command line.

Usage::

    neuralop-fem [-v] [--debug] COMMAND [options]

Subcommands live in :mod:`neuralop_fem.commands`, one module each, listed in
:data:`COMMANDS`. Only the module of the command that runs is imported (``--help`` of the
top level only needs each module's ``register``, which must import nothing heavy at module
level).

Exit status: 0 on success; 2 with a one-line message on stderr for any
:class:`~neuralop_fem.errors.NeuralopFemError` or bad option (the traceback only with
``--debug``); 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence
from types import ModuleType

from ._version import __version__

__all__ = ["COMMANDS", "build_parser", "main"]

#: Command modules under :mod:`neuralop_fem.commands`; the command name is the module name
#: with ``_`` replaced by ``-`` (``import_mat`` -> ``import-mat``).
COMMANDS: tuple[str, ...] = (
    "generate", "info", "import_mat", "train", "evaluate", "compare", "demo",
)

#: One-line summaries shown by ``neuralop-fem --help`` without importing the modules.
_SUMMARIES: dict[str, str] = {
    "generate": "generate a Burgers or Darcy dataset (parallel, resumable, appendable)",
    "info": "describe a dataset file",
    "import_mat": "convert a legacy FNO/Galerkin-Transformer .mat file to netCDF",
    "train": "train a surrogate from a preset on a dataset",
    "evaluate": "relative L2 / H1 errors of a trained run on a dataset",
    "compare": "compare a surrogate against the classical solver and write a report",
    "demo": "the main job: a small end-to-end run on this machine",
}

_log = logging.getLogger("neuralop_fem")


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr (exit status 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def _command_name(module_name: str) -> str:
    return module_name.replace("_", "-")


def _load(module_name: str) -> ModuleType:
    return importlib.import_module(f"neuralop_fem.commands.{module_name}")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """Return the argument parser.

    Parameters
    ----------
    only
        Command name (e.g. ``"generate"``) whose module is imported to register its full
        parser; the others get a placeholder so the top-level ``--help`` lists them without
        being imported. None gives placeholders for all.
    """
    parser = _Parser(
        prog="neuralop-fem",
        description="Generate PDE datasets, train and compare neural-operator surrogates.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="log progress (-v: info, -vv: debug)")
    parser.add_argument("--debug", action="store_true",
                        help="show the full traceback of an error")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in COMMANDS:
        name = _command_name(module_name)
        if name != only:
            summary = _SUMMARIES.get(module_name, f"see `neuralop-fem {name} --help`")
            subparsers.add_parser(name, help=summary, add_help=False)
            continue
        try:
            module = _load(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != f"neuralop_fem.commands.{module_name}":
                raise
            continue  # command not installed in this build
        module.register(subparsers)
    return parser


def _configure_logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s: %(message)s"))
    _log.handlers[:] = [handler]
    _log.setLevel(level)
    _log.propagate = False


def _requested_command(argv: Sequence[str]) -> str | None:
    names = {_command_name(m) for m in COMMANDS}
    for arg in argv:
        if arg in names:
            return arg
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = _requested_command(argv)
    parser = build_parser(only=command)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a bad option (2)
        return int(exc.code or 0)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    _configure_logging(args.verbose)
    from .errors import NeuralopFemError

    module = _load((command or args.command).replace("-", "_"))
    try:
        return int(module.run(args))
    except NeuralopFemError as exc:
        if args.debug:
            raise
        sys.stderr.write(f"neuralop-fem {args.command}: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write(f"neuralop-fem {args.command}: interrupted\n")
        return 130


if __name__ == "__main__":
    sys.exit(main())
