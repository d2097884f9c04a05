"""The run directory: its files, read and checked in one place, written atomically, locked.

Layout of a run directory (written by :class:`~neuralop_fem.training.Trainer`)::

    run.json        the run's record (:class:`~.record.RunRecord`)
    last.pt         everything to resume: model, optimizer, scheduler, epoch, history, RNG states
    partial.pt      the same within an epoch (removed when the epoch ends)
    best.pt         the selected model alone: weights + normaliser buffers + model config
    metrics.csv     per epoch: train loss, validation relative L2, learning rate, epoch time
    loss_curve.png  train loss and validation error against the epoch
    .lock           held by the training process

A zoo entry (:mod:`neuralop_fem.zoo_entries`) is a run directory holding ``run.json``, the
selected model as ``weights.safetensors`` and a model card. :class:`RunDir` is the only reader
and writer of ``run.json``: :meth:`RunDir.read` refuses a damaged or tampered file (a
:class:`~neuralop_fem.errors.RunDirectoryError` naming the file and the field,
:mod:`.validation`) and brings older field names to today's (:func:`~.record.migrate`);
:meth:`RunDir.write` replaces the file atomically (:mod:`neuralop_fem.files`).
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import RunDirectoryError
from ..files import ExclusiveLock, remove_stale_temporaries, write_text_atomic
from ..models.io import load_torch_file
from ..zoo_entries import WEIGHTS, read_entry_card, resolve_run_dir
from .record import RunRecord, migrate
from .validation import check_data_path, read_json_file, validate_run_info
from .weights import read_payload, verify_weights

__all__ = ["BEST", "CURVE", "LAST", "LOCK", "METRICS", "PARTIAL", "RETRY", "RUN_FILES",
           "RUN_JSON", "RunDir", "read_run_info", "write_json"]

_log = logging.getLogger(__name__)

RUN_JSON, LAST, BEST, METRICS, CURVE, PARTIAL = (
    "run.json", "last.pt", "best.pt", "metrics.csv", "loss_curve.png", "partial.pt",
)
#: Every file the trainer writes into a run directory.
RUN_FILES = (RUN_JSON, LAST, BEST, METRICS, CURVE, PARTIAL)
#: The lock file of a run directory (held by the training process).
LOCK = ".lock"
#: The remedy every refusal of a damaged run directory ends with.
RETRY = "Pass overwrite=True to start the run again."


def _compact_lists(text: str) -> str:
    """Put JSON lists of numbers on one line (split indices stay readable)."""
    return re.sub(
        r"\[\s*((?:-?[\d.eE+-]+,\s*)*-?[\d.eE+-]+)\s*\]",
        lambda m: "[" + ", ".join(m.group(1).replace(",", " ").split()) + "]",
        text,
    )


def write_json(obj: Mapping[str, object], path: Path) -> None:
    """Atomically write ``obj`` as indented JSON (lists of numbers on one line)."""
    write_text_atomic(path, _compact_lists(json.dumps(obj, indent=2, sort_keys=False)) + "\n")


def _link_target(path: Path) -> str:
    try:
        return str(path.readlink())
    except OSError:  # pragma: no cover - raced away
        return "?"


class RunDir:
    """A training run's directory (or a zoo entry's).

    Parameters
    ----------
    path : path-like
        The directory; ``"zoo:NAME"`` is resolved by :meth:`resolve`, not here.

    Examples
    --------
    >>> RunDir("runs/gt").run_json.as_posix()
    'runs/gt/run.json'
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    @classmethod
    def resolve(cls, run_dir: str | os.PathLike[str] | RunDir) -> RunDir:
        """The run directory named by ``run_dir``: a path, or ``zoo:NAME`` (the zoo entry).

        Raises
        ------
        InputError
            For an unknown zoo model (the message lists the available ones).
        """
        if isinstance(run_dir, RunDir):
            return run_dir
        return cls(resolve_run_dir(run_dir))

    def __repr__(self) -> str:
        return f"RunDir({os.fspath(self.path)!r})"

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    # -- the files ------------------------------------------------------------------------

    @property
    def run_json(self) -> Path:
        """``run.json``."""
        return self.path / RUN_JSON

    @property
    def best(self) -> Path:
        """``best.pt``: the selected model."""
        return self.path / BEST

    @property
    def last(self) -> Path:
        """``last.pt``: the resume state after the last completed epoch."""
        return self.path / LAST

    @property
    def partial(self) -> Path:
        """``partial.pt``: the resume state within an epoch."""
        return self.path / PARTIAL

    @property
    def metrics_csv(self) -> Path:
        """``metrics.csv``: one row per epoch."""
        return self.path / METRICS

    @property
    def loss_curve(self) -> Path:
        """``loss_curve.png``."""
        return self.path / CURVE

    @property
    def weights(self) -> Path:
        """``weights.safetensors`` (a zoo entry's selected model)."""
        return self.path / WEIGHTS

    # -- run.json ---------------------------------------------------------------------------

    def read(self) -> RunRecord:
        """The parsed, validated and migrated ``run.json``.

        Raises
        ------
        RunDirectoryError
            If the directory does not exist or has no ``run.json``, or the file is unreadable,
            damaged or holds a field of the wrong type or value
            (:func:`~.validation.validate_run_info`); the message names the file and the field.
        """
        directory = self.path
        if not directory.is_dir():
            state = "no such directory" if not directory.exists() else "not a directory"
            msg = (f"`run_dir` must be a training run directory with run.json; got {directory} "
                   f"({state}).")
            raise RunDirectoryError(msg)
        path = self.run_json
        if not path.exists() and not path.is_symlink():
            msg = f"`run_dir` must be a training run directory with run.json; got {directory}."
            raise RunDirectoryError(msg)
        info = read_json_file(path, what="the run.json of a training run")
        return RunRecord.from_dict(migrate(validate_run_info(info, source=path)))

    def read_checked(self) -> RunRecord:
        """:meth:`read`, and a ``data.path`` that names an existing file must be a dataset of
        the run's problem (:func:`~.validation.check_data_path`)."""
        record = self.read()
        check_data_path(record.to_dict(), source=self.run_json)
        return record

    def recorded_status(self) -> str | None:
        """``status`` of ``run.json``; None when it is missing, or unreadable (logged as a
        warning: a trainer writes it again)."""
        try:
            return self.read().status
        except RunDirectoryError as exc:
            if self.run_json.exists():
                _log.warning("ignoring run.json (it is written again): %s", exc)
            return None

    def write(self, record: RunRecord) -> None:
        """Replace ``run.json`` with ``record`` atomically (a killed writer leaves the old
        file or the new one, never a part)."""
        write_json(record.to_dict(), self.run_json)

    # -- the selected model ---------------------------------------------------------------------

    def card(self) -> dict[str, Any] | None:
        """The model card of a zoo entry (``card.json``); None for a run of the user's own."""
        return read_entry_card(self.path)

    def operator_payload(self) -> tuple[dict[str, Any], Path]:
        """The selected model's payload (not yet checked: ``build_operator`` does) and the file
        it came from: ``best.pt``, or a zoo entry's ``weights.safetensors`` (checked against
        its card's SHA-256 first).

        Raises
        ------
        RunDirectoryError
            If neither file exists, or the file cannot be read.
        """
        path = self.best
        if not path.exists() and not path.is_symlink() and self.weights.is_file():
            verify_weights(self.weights, self.card())
            return read_payload(self.weights), self.weights
        if not path.exists() and not path.is_symlink():
            msg = (f"`run_dir` must contain {BEST} (a run that finished at least one epoch); "
                   f"got {self.path}.")
            raise RunDirectoryError(msg)
        payload = load_torch_file(path, what=f"a best-model checkpoint ({BEST})",
                                  error=RunDirectoryError, map_location="cpu")
        return payload, path

    # -- training in it ---------------------------------------------------------------------

    def lock(self) -> ExclusiveLock:
        """The exclusive lock of the directory (created if missing); refused while another
        trainer holds it."""
        self.path.mkdir(parents=True, exist_ok=True)
        busy = RunDirectoryError(f"{self.path}: another trainer is using this run directory "
                                 f"(lock {self.path / LOCK}); wait for it to finish or use "
                                 "another --out.")
        return ExclusiveLock(self.path / LOCK, busy=busy)

    def prepare(self, *, overwrite: bool, is_main: bool) -> ExclusiveLock | None:
        """Lock, check (and with ``overwrite`` clear) the directory before a trainer uses it.

        The directory must be a real directory (not a symbolic link) and the trainer's files
        in it regular files; ``overwrite`` removes them (a link is removed, never its target).
        Temporaries left by a killed write are deleted.

        Returns
        -------
        ExclusiveLock or None
            The main process's lock (``.lock``), held until the trainer closes; None on the
            other processes of a distributed run.

        Raises
        ------
        RunDirectoryError
            The path is a symbolic link or not a directory, another process trains in it; a
            trainer file in it is a directory, or (without ``overwrite``) a symbolic link.
        """
        run_dir = self.path
        if run_dir.is_symlink():
            msg = (f"`run_dir` must be a directory, not a symbolic link; got {run_dir} -> "
                   f"{_link_target(run_dir)}. Pass the link's target ({run_dir.resolve()}) "
                   "instead.")
            raise RunDirectoryError(msg)
        if run_dir.exists() and not run_dir.is_dir():
            msg = f"`run_dir` must be a directory; got {run_dir}, which is a file."
            raise RunDirectoryError(msg)
        lock = self.lock() if is_main else None
        try:
            self._check_files(overwrite=overwrite, is_main=is_main)
        except BaseException:
            if lock is not None:
                lock.release()
            raise
        return lock

    def _check_files(self, *, overwrite: bool, is_main: bool) -> None:
        for name in RUN_FILES:
            path = self.path / name
            if path.is_symlink():
                if overwrite:
                    if is_main:
                        path.unlink()  # the link itself; its target is left alone
                    continue
                msg = (f"{path}: is a symbolic link (to {_link_target(path)}); the trainer writes "
                       "only regular files in its run directory. Remove the link, or pass "
                       "overwrite=True to start the run again.")
                raise RunDirectoryError(msg)
            if path.is_dir():
                msg = f"{path}: is a directory; the trainer writes a file of that name. Remove it."
                raise RunDirectoryError(msg)
            if overwrite and is_main:
                path.unlink(missing_ok=True)
        self.path.mkdir(parents=True, exist_ok=True)
        if is_main:
            for name in RUN_FILES:
                remove_stale_temporaries(self.path, name)


def read_run_info(run_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """The contents of a run directory's ``run.json`` as a plain dict, read and checked by
    :meth:`RunDir.read` (for scripts that want the JSON; the package reads
    :class:`~.record.RunRecord`).

    Raises
    ------
    RunDirectoryError
        As :meth:`RunDir.read`.
    """
    return RunDir(run_dir).read().to_dict()
