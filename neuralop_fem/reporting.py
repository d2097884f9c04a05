"""How a failure ends a command or a script: one line on stderr and an exit status.

The ``neuralop-fem`` command line and the scripts run like its commands
(:mod:`neuralop_fem.reproduce.script_runner`) share these rules:

* a :class:`~neuralop_fem.errors.NeuralopFemError` (bad input, damaged file, ...), an
  :class:`OSError` (``<what> (<path>)``) and a :class:`MemoryError` are user errors, status 2;
* anything else is a bug of neuralop_fem, reported as an internal error, status 1;
* Ctrl-C gives status 130.

This module imports nothing heavy beyond the error classes (it is on the path of
``neuralop-fem --help``).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable

from .errors import NeuralopFemError
from .safe_text import printable

__all__ = ["error_message", "one_line", "run_reporting"]


def one_line(text: str) -> str:
    """``text`` on one line, its control characters escaped and cut to
    :data:`~neuralop_fem.safe_text.TEXT_LIMIT` characters (a message may quote a file).

    >>> one_line("bad\\n  value")
    'bad value'
    """
    return printable(" ".join(str(text).split()))


def error_message(exc: BaseException) -> tuple[str, int]:
    """The one-line message and exit status of an exception that ends a command.

    A :class:`~neuralop_fem.errors.NeuralopFemError` is reported as it is, an
    :class:`OSError` as ``<what> (<path>)``, a :class:`MemoryError` as out of memory (all exit
    status 2); anything else is an internal error (exit status 1).
    """
    if isinstance(exc, NeuralopFemError):
        return f"error: {one_line(str(exc))}", 2
    if isinstance(exc, OSError):
        what = exc.strerror or str(exc) or type(exc).__name__
        paths = [p for p in (exc.filename, exc.filename2) if p is not None]
        where = f" ({' -> '.join(map(str, paths))})" if paths else ""
        return f"error: {one_line(what)}{where}", 2
    text = one_line(f"{type(exc).__name__}: {exc}")
    if isinstance(exc, MemoryError):  # a resource limit, like a full disk: not a bug
        return f"error: out of memory ({text})", 2
    return (f"internal error: {text} (a bug in neuralop_fem: rerun with --debug for the "
            "traceback and report it)"), 1


def run_reporting(call: Callable[[], int], name: str | Callable[[], str], *, debug: bool,
                  wording: Callable[[str], str] | None = None) -> int:
    """Return ``call()``; an exception it raises becomes one line ``<name>: <message>`` on stderr.

    The exit status is :func:`error_message`'s (130 for Ctrl-C). With ``debug`` the exception
    propagates instead, traceback and all. The command line and the benchmark scripts share it.
    While ``call`` runs, a warning it issues is shown as one line ``<name>: warning: ...``
    (where the warnings filters show it at all). ``wording`` rewrites the messages (the command
    line names its options as flags, :func:`~neuralop_fem.cli.command_line_wording`). ``name``
    may be a callable, asked when a line is written (the command line names the subcommand once
    parsed).
    """
    reword = wording or (lambda text: text)
    label = name if callable(name) else (lambda: name)

    def show(message: Warning | str, category: type[Warning], *_: object, **__: object) -> None:
        text = one_line(reword(str(message)))
        sys.stderr.write(f"{label()}: warning: {text} ({category.__name__})\n")

    previous = warnings.showwarning
    warnings.showwarning = show
    try:
        return call()
    except KeyboardInterrupt:
        if debug:
            raise
        sys.stderr.write(f"{label()}: interrupted\n")
        return 130
    except Exception as exc:
        if debug:
            raise
        message, status = error_message(exc)
        sys.stderr.write(f"{label()}: {reword(message)}\n")
        return status
    finally:
        warnings.showwarning = previous
