"""The ``neuralop-fem`` command line.

Usage::

    neuralop-fem [-v] [--debug] [--plugin MODULE] COMMAND [options]

Subcommands live in :mod:`neuralop_fem.commands`, one module each, listed in
:data:`COMMANDS`. Only the module of the command that runs is imported (``--help`` of the
top level only needs each module's ``register``, which must import nothing heavy at module
level).

``-v``/``-vv`` and ``--debug`` may be given before or after the command name.
``--plugin MODULE`` (before the command, repeatable) imports ``MODULE`` first: a module that
registers a problem (:func:`neuralop_fem.problems.register_problem`) makes it a choice of every
command (``generate NAME``, its presets for ``train``, its runs for ``compare`` ...).

Exit status and messages (one line on stderr; the traceback only with ``--debug``):

* 0 on success;
* 2 for a user error: a bad option (argparse), any
  :class:`~neuralop_fem.errors.NeuralopFemError` (bad input, damaged file, ...) and any
  :class:`OSError` (permission denied, disk full, a directory where a file is needed ...),
  ``neuralop-fem COMMAND: error: <what> (<path>)``; and :class:`MemoryError` (out of memory);
* 1 for anything else, which is a bug of neuralop_fem:
  ``neuralop-fem COMMAND: internal error: <type>: <message> (rerun with --debug ...)``;
* 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import logging
import re
import sys
from collections.abc import Sequence
from types import ModuleType

from ._version import __version__
from .errors import UsageError
from .path_options import check_paths_apart
from .reporting import error_message, run_reporting
from .reporting import one_line as _one_line

__all__ = ["COMMANDS", "build_parser", "error_message", "main"]

#: Command modules under :mod:`neuralop_fem.commands`; the command name is the module name
#: with ``_`` replaced by ``-`` (``import_mat`` -> ``import-mat``).
COMMANDS: tuple[str, ...] = (
    "generate", "info", "plot", "import_mat", "import", "export", "check", "train", "evaluate",
    "compare", "demo", "reproduce", "zoo",
)

#: One-line summaries shown by ``neuralop-fem --help`` without importing the modules.
_SUMMARIES: dict[str, str] = {
    "generate": "generate a Burgers or Darcy dataset (parallel, resumable, appendable)",
    "info": "describe a dataset file",
    "plot": "plot a few samples of a dataset file",
    "import_mat": "convert a legacy FNO/Galerkin-Transformer .mat file to netCDF",
    "import": "convert a neuraloperator .pt or PDEBench .hdf5 file to netCDF",
    "export": "write a dataset in neuraloperator's .pt or PDEBench's HDF5 layout",
    "check": "check a dataset's labels with our solver (per sample, grid by grid)",
    "train": "train a surrogate from a preset on a dataset",
    "evaluate": "relative L2 / H1 errors of a trained run on a dataset",
    "compare": "compare a surrogate against the classical solver and write a report",
    "demo": "the main job: a small end-to-end run on this machine",
    "reproduce": "reproduce the paper's tables and record each run traceably",
    "zoo": "list, show and add the trained surrogates shipped with the package",
}

_log = logging.getLogger("neuralop_fem")


_CHOICE = re.compile(r"invalid choice: '([^']*)'")


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr (exit status 2); a
    mistyped command name gets the closest one suggested."""

    def error(self, message: str) -> None:  # type: ignore[override]
        match = _CHOICE.search(message)
        if match:
            names = [c for a in self._actions if a.choices for c in a.choices]
            message += _suggestion(match.group(1), names)
        self.exit(2, f"{self.prog}: error: {message}\n")


def _suggestion(word: str, names: Sequence[str]) -> str:
    """`` (did you mean NAME?)`` for the name of ``names`` closest to ``word``, or ``""``."""
    close = difflib.get_close_matches(word, [str(n) for n in names], n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def _chosen_parser(parser: argparse.ArgumentParser,
                   args: argparse.Namespace) -> argparse.ArgumentParser:
    """The innermost subcommand of ``parser`` that ``args`` went through (``generate darcy``)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            name = getattr(args, action.dest, None)
            if name in action.choices:
                return _chosen_parser(action.choices[name], args)
    return parser


def _unknown_option_hint(option: str, sub: argparse.ArgumentParser,
                         chosen: argparse.ArgumentParser) -> str:
    """The closest option of ``chosen`` (the subcommand of ``sub`` used), or which sibling
    subcommand has ``option`` (``generate darcy --viscosity``: an option of ``generate
    burgers``)."""
    own = [s for a in chosen._actions for s in a.option_strings if s.startswith("--")]
    if option not in own:
        elsewhere = [p.prog for p in _subcommand_parsers(sub) if p is not chosen and option in
                     (s for a in p._actions for s in a.option_strings)]
        if elsewhere:
            return f" ({option} is an option of `{elsewhere[0]}`, not of `{chosen.prog}`)"
    return _suggestion(option, own)


def _subcommand_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """``parser`` and every subcommand parser nested in it."""
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _subcommand_parsers(sub)
    return found


def _command_parser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices[command]
    return parser  # pragma: no cover - every parser has the subcommands


def _flags(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """Option destination -> its action, for the options of ``parser`` and nested commands."""
    found: dict[str, argparse.Action] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                for dest, sub_action in _flags(sub).items():
                    found.setdefault(dest, sub_action)
        elif action.option_strings and action.dest != "help":
            found.setdefault(action.dest, action)
    return found


_ASSIGNMENT = re.compile(r"`?\b([a-z][a-z0-9_]*)=(True|False|None|[\w.+-]+)`?")
#: A backticked name, unless it names a part of a file (``field `data```, ```seed`` attribute``).
_PART = "field|attribute|coordinate|variable|section|key|dimension"
_NAMED = re.compile("".join(f"(?<!{w} )" for w in _PART.split("|"))
                    + rf"`([a-z][a-z0-9_]*)`(?! (?:{_PART})\b| in the\b)")
#: A message about a configuration file's contents (``c.yaml: `epochs` must be ...``): its
#: backticked names are the file's keys, not the command's flags.
_FILE_MESSAGE = re.compile(r"^(?:error: )?\S+\.(?:ya?ml|json): ")


def command_line_wording(text: str, parser: argparse.ArgumentParser | None) -> str:
    """``text`` (a message of the library) with the Python arguments that are options of the
    command (``parser``) named as its flags: ``overwrite=True`` -> ``--overwrite``,
    ``warm_start=False`` -> ``--no-warm-start``, ``append=M``/```append``` -> ``--append M``
    / ``--append``; a flag given twice (``--overwrite (--overwrite)``) once.

    >>> p = argparse.ArgumentParser()
    >>> _ = p.add_argument("--overwrite", action="store_true")
    >>> _ = p.add_argument("--n-train", dest="n_train", type=int, metavar="N")
    >>> command_line_wording("pass overwrite=True; `n_train` must be >= 1; set n_train=5", p)
    'pass --overwrite; --n-train must be >= 1; set --n-train 5'
    >>> command_line_wording("Pass --overwrite (overwrite=True) to start again.", p)
    'Pass --overwrite to start again.'
    >>> command_line_wording("run.json: field `n_train` must be >= 1", p)  # a file's field
    'run.json: field `n_train` must be >= 1'
    >>> command_line_wording("c.yaml: `n_train` must be >= 1", p)  # a config file's key
    'c.yaml: `n_train` must be >= 1'
    """
    if parser is None:
        return text
    actions = _flags(parser)

    def flag(action: argparse.Action) -> str:
        return max(action.option_strings, key=len)

    def assignment(match: re.Match[str]) -> str:
        action = actions.get(match.group(1))
        if action is None:
            return match.group(0)
        value = match.group(2)
        if action.nargs == 0:  # a switch: the flag whose effect is this value
            if value == repr(action.const):
                return flag(action)
            return match.group(0)
        if value in ("True", "False", "None"):
            return f"{flag(action)} {action.metavar or action.dest.upper()}"
        return f"{flag(action)} {value}"

    def named(match: re.Match[str]) -> str:
        action = actions.get(match.group(1))
        return match.group(0) if action is None else flag(action)

    text = _ASSIGNMENT.sub(assignment, text)
    if not _FILE_MESSAGE.match(text):
        text = _NAMED.sub(named, text)
    return re.sub(r"(--[a-z][\w-]*(?: [A-Z]+)?) \(\1\)", r"\1", text)


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
    _add_global_flags(parser, after=False)
    parser.add_argument("--plugin", action="append", metavar="MODULE", default=[],
                        help="import MODULE first (e.g. one that registers a new problem); "
                             "repeatable")
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
        _add_flags_to_subcommands(subparsers.choices[name])
    return parser


def _add_global_flags(parser: argparse.ArgumentParser, *, after: bool) -> None:
    """``-v`` and ``--debug``; ``after``: on a subcommand, counted with the ones before it."""
    suffix, counts, flag = ("_after", argparse.SUPPRESS, argparse.SUPPRESS) if after else \
        ("", 0, False)
    parser.add_argument("-v", "--verbose", dest="verbose" + suffix, action="count",
                        default=counts, help="log progress (-v: info, -vv: debug)")
    parser.add_argument("--debug", dest="debug" + suffix, action="store_true", default=flag,
                        help="show the full traceback of an error")


def _add_flags_to_subcommands(parser: argparse.ArgumentParser) -> None:
    """Accept ``-v``/``--debug`` after the command name too (and after a nested one)."""
    _add_global_flags(parser, after=True)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _add_flags_to_subcommands(sub)


class _CommandLineFormatter(logging.Formatter):
    """Log records as the command line shows them: options named as flags; without ``-v``
    a warning is one line ``neuralop-fem COMMAND: warning: ...``."""

    def __init__(self, fmt: str, *, name: str, parser: argparse.ArgumentParser | None,
                 plain: bool) -> None:
        super().__init__(fmt)
        self.command, self.parser, self.plain = name, parser, plain

    def format(self, record: logging.LogRecord) -> str:
        if self.plain and record.levelno >= logging.WARNING:
            text = _one_line(command_line_wording(record.getMessage(), self.parser))
            return f"{self.command}: {record.levelname.lower()}: {text}"
        return command_line_wording(super().format(record), self.parser)


def _configure_logging(verbosity: int, *, name: str = "neuralop-fem",
                       parser: argparse.ArgumentParser | None = None) -> None:
    level = logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    fmt = "%(asctime)s %(name)s %(levelname)s: %(message)s"
    handler.setFormatter(_CommandLineFormatter(fmt, name=name, parser=parser,
                                               plain=verbosity == 0))
    _log.handlers[:] = [handler]
    _log.setLevel(level)
    _log.propagate = False


def _requested_command(argv: Sequence[str]) -> str | None:
    names = {_command_name(m) for m in COMMANDS}
    for arg in argv:
        if arg in names:
            return arg
    return None


def _plugins(argv: Sequence[str]) -> list[str]:
    """The modules named by ``--plugin MODULE`` / ``--plugin=MODULE`` before the command."""
    names, command = [], _requested_command(argv)
    for i, arg in enumerate(argv):
        if arg == command:
            break
        if arg == "--plugin" and i + 1 < len(argv):
            names.append(argv[i + 1])
        elif arg.startswith("--plugin="):
            names.append(arg.partition("=")[2])
    return names


def load_plugins(names: Sequence[str]) -> None:
    """Import each module of ``names`` (``--plugin``), so that what it registers is known
    before the command's parser is built.

    Raises
    ------
    UsageError
        For a module that cannot be imported, naming it and the reason.
    """
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            msg = f"argument --plugin: cannot import module {name!r} ({exc})."
            raise UsageError(msg) from None


def _run(argv: list[str], debug: bool, seen: dict[str, argparse.ArgumentParser]) -> int:
    load_plugins(_plugins(argv))
    command = _requested_command(argv)
    parser = build_parser(only=command)
    try:
        args, extras = parser.parse_known_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a bad option (2)
        return int(exc.code or 0)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    sub = _command_parser(parser, args.command)
    chosen = _chosen_parser(sub, args)  # errors name the subcommand used, as argparse's do
    if extras:
        unknown = next((e.split("=")[0] for e in extras if e.startswith("-")), "")
        hint = _unknown_option_hint(unknown, sub, chosen) if unknown else ""
        sys.stderr.write(f"{chosen.prog}: error: unrecognized arguments: "
                         f"{' '.join(extras)}{hint}\n")
        return 2
    seen["parser"], seen["prog"] = sub, chosen
    args.verbose += getattr(args, "verbose_after", 0)
    args.debug = debug
    _configure_logging(args.verbose, name=f"neuralop-fem {args.command}", parser=sub)
    check_paths_apart(args, sub)
    module = _load((command or args.command).replace("-", "_"))
    return int(module.run(args))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit status.

    With ``--debug`` an error propagates (its traceback is shown); without it, it becomes one
    line on stderr and the exit status of :func:`error_message`.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv  # also before parsing succeeds (or when it fails)
    command = _requested_command(argv) or "?"
    seen: dict[str, argparse.ArgumentParser] = {}

    def name() -> str:  # `neuralop-fem generate darcy` once parsed, as argparse's own errors
        return seen["prog"].prog if "prog" in seen else f"neuralop-fem {command}"

    return run_reporting(lambda: _run(argv, debug, seen), name, debug=debug,
                         wording=lambda text: command_line_wording(text, seen.get("parser")))


if __name__ == "__main__":
    sys.exit(main())
