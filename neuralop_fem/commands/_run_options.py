"""The options that name a trained run (private): ``RUN_DIR`` (a directory or ``zoo:NAME``)
and ``--indices`` checked against the dataset, for ``evaluate``, ``compare`` and ``zoo add``.

Apart from :mod:`._options` because they read the zoo and the evaluation's index rules, which
the data commands (``generate``, ``info`` ...) do not need.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..errors import ConfigError, InputError
from ..path_options import check_problem, input_dir_problem, option_error
from ..zoo import PLANNED, PREFIX, available, entry_dir, resolve_run_dir

__all__ = ["check_indices", "check_run_dir", "run_dir"]


def _zoo_hint(path: Path) -> str:
    """For a missing directory named like a zoo model (``burgers-fno``): ``; did you mean
    zoo:burgers-fno?``, or for a planned model this version does not ship, why ``zoo:NAME``
    would not load either; else ``""``."""
    name = os.fspath(path)
    if path.exists() or name not in (*available(), *PLANNED):
        return ""
    try:
        entry_dir(name)
    except InputError as exc:  # planned, not shipped: the zoo's own words
        return f"; as a zoo model ({PREFIX}{name}): {str(exc).rstrip('.')}"
    return f"; did you mean {PREFIX}{name}?"


def _run_dir_problem(path: Path) -> str | None:
    what = input_dir_problem(path)
    return None if what is None else what + _zoo_hint(path)


def run_dir(text: str) -> Path:
    """An argparse type: a run directory, or ``zoo:NAME`` (a model of the zoo shipped with
    the package: its directory, :func:`neuralop_fem.zoo.resolve_run_dir`).

    A missing directory named like a zoo model gets a hint: ``must be an existing directory;
    got 'burgers-fno', which does not exist; did you mean zoo:burgers-fno?``.
    """
    if text.startswith("zoo:"):
        try:
            return resolve_run_dir(text)
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc).rstrip(".")) from None
    path = Path(text)
    what = _run_dir_problem(path)
    if what is not None:
        raise argparse.ArgumentTypeError(what)
    return path


run_dir.role = "input"  # type: ignore[attr-defined]  # read by check_paths_apart


def check_run_dir(path: Path, option: str = "RUN_DIR") -> Path:
    """Check that ``path`` (a :func:`run_dir` argument, ``zoo:NAME`` resolved) is an existing
    directory; one named like a zoo model gets the hint ``did you mean zoo:NAME?``."""
    check_problem(_run_dir_problem(path), option)
    return path


def check_indices(spec: str, data: Path, option: str = "--indices") -> None:
    """Check that the positions ``A:B`` exist in the dataset ``data`` (read lazily).

    ``test`` and ``all`` are checked later, against the run's split.
    """
    if spec in ("test", "all"):
        return
    # deferred: torch (the run options also serve `zoo list` and `zoo show`, which load no model)
    from ..data.io import load_dataset

    # deferred: torch (as above: the evaluation imports torch)
    from ..evaluation.run_evaluation import parse_indices

    with load_dataset(data) as ds:
        n_samples = int(ds.sizes["sample"])
    try:
        parse_indices(spec, n_samples=n_samples, test=[])
    except ConfigError as exc:
        what = f"{str(exc).rstrip('.')} (--data {os.fspath(data)!r})."
        raise option_error(option, what) from None
