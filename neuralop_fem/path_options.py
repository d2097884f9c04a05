"""Argparse types and checks for paths: the inputs and outputs of a command.

A bad path is a one-line usage error (exit status 2): the argparse types (:data:`input_file`,
:data:`input_dir`, :data:`output_file`, :data:`output_dir`) while the options are parsed, the
``check_*`` functions first thing in a command's ``run`` (for defaults, and for checks that
depend on several options, such as ``--overwrite``), each raising
:class:`~neuralop_fem.errors.UsageError` that names the option, what it must be and what it got.
:func:`check_paths_apart` is the check the command line makes before every command: no output
option names (or, for a directory, holds) an input of the same command.

The command line (:mod:`neuralop_fem.cli`) and the commands (:mod:`neuralop_fem.commands`)
share them; this module imports only the standard library and the error classes.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from .errors import UsageError

__all__ = [
    "check_input_dir",
    "check_input_file",
    "check_new_output_dir",
    "check_output_apart",
    "check_output_dir",
    "check_output_file",
    "check_paths_apart",
    "check_problem",
    "input_dir",
    "input_dir_problem",
    "input_file",
    "naming",
    "option_error",
    "output_dir",
    "output_file",
    "path_options",
]


def option_error(option: str, what: str) -> Exception:
    """The usage error ``argument OPTION: WHAT`` (raise it)."""
    return UsageError(f"argument {option}: {what}")


# -- paths: what is wrong with one (None: nothing) -------------------------------------------


def _input_file_problem(path: Path) -> str | None:
    name = repr(os.fspath(path))
    if not path.exists():
        return f"must be an existing file; got {name}, which does not exist"
    if not path.is_file():
        return f"must be a regular file; got {name}, which is {_kind(path)}"
    if not os.access(path, os.R_OK):
        return f"must be a readable file; got {name} (permission denied)"
    return None


def _kind(path: Path) -> str:
    """What ``path`` (which exists) is: "a directory", "a file", "a FIFO", "a device", ..."""
    mode = path.stat().st_mode
    kinds = ((stat.S_ISDIR, "a directory"), (stat.S_ISREG, "a file"), (stat.S_ISFIFO, "a FIFO"),
             (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def input_dir_problem(path: Path) -> str | None:
    """What is wrong with ``path`` as an input directory (None: nothing)."""
    if path.is_dir():
        return None
    what = f"which is {_kind(path)}" if path.exists() else "which does not exist"
    return f"must be an existing directory; got {os.fspath(path)!r}, {what}"


def _writable_problem(directory: Path, path: Path) -> str | None:
    if os.access(directory, os.W_OK | os.X_OK):
        return None
    return (f"must be in a writable directory; got {os.fspath(path)!r} "
            f"({os.fspath(directory)!r} is not writable)")


def _parent_problem(path: Path) -> str | None:
    parent = path.parent
    if not parent.is_dir():
        what = "is not a directory" if parent.exists() else "does not exist"
        return (f"must be in an existing directory; got {os.fspath(path)!r} "
                f"({os.fspath(parent)!r} {what})")
    return _writable_problem(parent, path)


def _output_file_problem(path: Path) -> str | None:
    if path.exists() and not path.is_file():  # a directory, or a device/FIFO never replaced
        return f"must be a file name; got {os.fspath(path)!r}, which is {_kind(path)}"
    return _parent_problem(path)


def _output_dir_problem(path: Path) -> str | None:
    if path.exists() and not path.is_dir():
        return f"must be a directory; got {os.fspath(path)!r}, which is {_kind(path)}"
    if path.is_dir():
        return _writable_problem(path, path)
    return _parent_problem(path)


def _path_type(problem: Callable[[Path], str | None], name: str) -> Callable[[str], Path]:
    def parse(text: str) -> Path:
        path = Path(text)
        what = problem(path)
        if what is not None:
            raise argparse.ArgumentTypeError(what)
        return path

    parse.__name__ = name
    parse.role = name.split()[0]  # type: ignore[attr-defined]  # read by check_paths_apart
    return parse


#: argparse types: the path is checked while the command line is parsed (exit status 2).
#: Their ``role`` (``"input"`` / ``"output"``) lets :func:`check_paths_apart` find the
#: inputs and outputs of any command.
input_file = _path_type(_input_file_problem, "input file")
input_dir = _path_type(input_dir_problem, "input directory")
output_file = _path_type(_output_file_problem, "output file")
output_dir = _path_type(_output_dir_problem, "output directory")


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _same(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name one file or directory (links and hard links followed)."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one does not exist (yet)
        return _real(a) == _real(b)


def _inside(path: Path, directory: Path) -> bool:
    """Whether ``path`` lies somewhere below ``directory`` (links followed)."""
    return _real(directory) in _real(path).parents


def _option_name(action: argparse.Action) -> str:
    if action.option_strings:
        return max(action.option_strings, key=len)
    return action.metavar if isinstance(action.metavar, str) else action.dest


def path_options(parser: argparse.ArgumentParser) -> list[tuple[argparse.Action, str]]:
    """The path options of ``parser`` and its nested subcommands, with their role
    (``"input"`` or ``"output"``), from their argparse types; one per destination."""
    found: dict[str, tuple[argparse.Action, str]] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                for item in path_options(sub):
                    found.setdefault(item[0].dest, item)
            continue
        role = getattr(action.type, "role", None)
        if role is not None:
            found.setdefault(action.dest, (action, role))
    return list(found.values())


def check_output_apart(path: Path, option: str, inputs: list[tuple[str, Path]], *,
                       directory: bool) -> None:
    """Refuse an output that names an input, or (``directory``) one that holds an input.

    Parameters
    ----------
    path
        The output (file, or directory the command writes into).
    option
        Its option name, e.g. ``"--out"``.
    inputs
        ``(option, path)`` of every input of the command.
    directory
        ``path`` is a directory the command writes files into (and may clear with
        ``--overwrite``): an input anywhere below it is refused too.
    """
    for name, source in inputs:
        if _same(path, source):
            check_problem(f"must not name an input of the command (it would be overwritten); got "
                   f"{os.fspath(path)!r}, which is {name} {os.fspath(source)!r}", option)
        if directory and _inside(source, path):
            check_problem(f"must not hold an input of the command (its files would be written "
                   f"beside it or replace it); got {os.fspath(path)!r}, which holds {name} "
                   f"{os.fspath(source)!r}", option)


def check_paths_apart(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """The one check every command gets before it runs: no output option names an input.

    The inputs and outputs are the options whose argparse type is one of :data:`input_file`,
    :data:`input_dir`, :data:`output_file`, :data:`output_dir` (a command checks outputs it
    derives itself, such as a summary beside ``--out``, with :func:`check_output_apart`).
    An output equal to an input (the same file or directory, through links too) is refused,
    and so is an output directory that holds an input.
    """
    options = path_options(parser)
    inputs = [(_option_name(a), getattr(args, a.dest)) for a, role in options
              if role == "input" and getattr(args, a.dest, None) is not None]
    for action, role in options:
        path = getattr(args, action.dest, None)
        if role != "output" or path is None:
            continue
        directory = action.type is output_dir
        check_output_apart(path, _option_name(action), inputs, directory=directory)


def check_problem(problem: str | None, option: str) -> None:
    """Raise the usage error of ``option`` when ``problem`` (a ``*_problem`` answer) is not None."""
    if problem is not None:
        raise option_error(option, problem + ".")


def check_input_file(path: Path, option: str) -> Path:
    """Check that ``path`` is an existing, readable regular file."""
    check_problem(_input_file_problem(path), option)
    return path


def check_input_dir(path: Path, option: str) -> Path:
    """Check that ``path`` is an existing directory."""
    check_problem(input_dir_problem(path), option)
    return path


def check_output_file(path: Path, option: str, *, overwrite: bool | None = None) -> Path:
    """Check that a file can be written at ``path``.

    Parameters
    ----------
    path
        The file to write.
    option
        The option name used in the message, e.g. ``"--out"``.
    overwrite
        False: an existing file is refused (the message names ``--overwrite``); True or None:
        it is replaced.
    """
    if overwrite is False and path.is_file():
        check_problem(f"must not be an existing file (pass --overwrite to replace it); got "
               f"{os.fspath(path)!r}", option)
    check_problem(_output_file_problem(path), option)
    return path


def check_output_dir(path: Path, option: str) -> Path:
    """Check that ``path`` is a writable directory or can be created in an existing one."""
    check_problem(_output_dir_problem(path), option)
    return path


def check_new_output_dir(path: Path, option: str, *, overwrite: bool) -> Path:
    """Check that ``path`` can hold a command's outputs: a writable directory that is new or
    empty, or any writable directory when ``overwrite`` (the message names ``--overwrite``)."""
    check_output_dir(path, option)
    if not overwrite and path.is_dir() and any(path.iterdir()):
        check_problem(f"must be a new or empty directory (pass --overwrite to replace the files an "
               f"earlier run wrote there); got {os.fspath(path)!r}, which is not empty", option)
    return path


@contextlib.contextmanager
def naming(path: Path) -> Iterator[None]:
    """Give an :class:`OSError` raised without a file name (a full disk while writing a plot,
    say) the output ``path``, so that the one-line message says where it happened."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None or exc.errno is None:
            raise
        raise OSError(exc.errno, exc.strerror or str(exc), os.fspath(path)) from exc
