"""Checkpoints within an epoch: ``partial.pt``, so that a killed run loses minutes, not an epoch.

An epoch of the paper-scale Darcy models takes 10-40 min on one CPU core; ``last.pt`` is
written only at its end. Every ``TrainConfig.checkpoint_minutes`` (after an optimizer step,
never after the epoch's last batch) the trainer also writes ``partial.pt``: the contents of
``last.pt`` at that moment (the epochs completed, the model, optimizer and scheduler *now*,
every RNG state now) plus :class:`WithinEpoch`: how many batches of the next epoch are done,
their summed loss, the seconds spent on them, and the RNG states at the start of that epoch.

A resumed run replays the epoch's start (the same data-order permutation and the same draw
of the data loader's base seed), skips the batches done and continues with the saved RNG
states, so it ends with bitwise the same weights and metrics as a run never interrupted (CPU).
When the epoch ends, ``last.pt`` is written and ``partial.pt`` removed; a ``partial.pt`` older
than ``last.pt`` (a kill between the two) is ignored and removed. Processes of a distributed
run write no ``partial.pt`` (its timing would differ between processes).
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any, TypedDict

from ..errors import RunDirectoryError
from . import checkpoint as ck
from . import resume as rs

__all__ = ["PARTIAL_FORMAT", "CheckpointClock", "WithinEpoch", "check_within", "read_partial",
           "with_remedy"]

#: ``format`` of ``partial.pt`` (not ``last.pt``'s: the file is not an end-of-epoch state).
PARTIAL_FORMAT = "neuralop_fem.training.partial/1"


class WithinEpoch(TypedDict):
    """Progress within the epoch after ``epoch`` (``partial.pt``'s ``within_epoch``)."""

    batches_done: int
    loss_sum: float
    lr: float
    elapsed_s: float
    epoch_rng: dict[str, Any]


class CheckpointClock:
    """Whether a within-epoch checkpoint is due: ``minutes`` since the last checkpoint (or
    the start); ``minutes`` 0 never."""

    def __init__(self, minutes: float) -> None:
        self.seconds = 60.0 * minutes
        self.reset()

    def reset(self) -> None:
        """A checkpoint was written (or the clock starts)."""
        self.t0 = time.perf_counter()

    def due(self) -> bool:
        """Whether ``minutes`` have passed since :meth:`reset`."""
        return self.seconds > 0 and time.perf_counter() - self.t0 >= self.seconds


def _remedy(path: Path) -> str:
    return (f"Delete {path.name} to resume from {ck.LAST} (the end of the last completed "
            "epoch), or pass overwrite=True to start the run again.")


def _fail(path: Path, field: str, expected: str) -> RunDirectoryError:
    return RunDirectoryError(f"{path}: field `{field}` must be {expected}. {_remedy(path)}")


def with_remedy(exc: RunDirectoryError, path: Path) -> RunDirectoryError:
    """``exc`` (about ``partial.pt`` at ``path``) with the way back to ``last.pt``."""
    text = str(exc).removesuffix(f" {rs.RETRY}")
    return RunDirectoryError(f"{text} {_remedy(path)}")


def check_within(within: Any, path: Path, *, batches: int, accumulation: int) -> WithinEpoch:
    """``partial.pt``'s ``within_epoch`` checked against the run's ``batches`` per epoch and
    ``grad_accumulation``.

    Raises
    ------
    RunDirectoryError
        Naming ``path`` and the field.
    """
    if not isinstance(within, dict):
        raise _fail(path, "within_epoch", "an object")
    done = within.get("batches_done")
    if not (isinstance(done, int) and not isinstance(done, bool)
            and 0 < done < batches and done % accumulation == 0):
        raise _fail(path, "within_epoch.batches_done",
                    f"an integer in [1, {batches - 1}] that is a multiple of "
                    f"grad_accumulation={accumulation}; got {done!r}")
    for key in ("loss_sum", "lr", "elapsed_s"):
        value = within.get(key)
        if (not isinstance(value, int | float) or isinstance(value, bool)
                or not math.isfinite(value) or (key != "loss_sum" and value < 0)):
            raise _fail(path, f"within_epoch.{key}",
                        "a finite number" + ("" if key == "loss_sum" else " >= 0"))
    rng = within.get("epoch_rng")
    if not isinstance(rng, dict) or set(rng) != set(rs.RNG_STATES):
        raise _fail(path, "within_epoch.epoch_rng",
                    f"an object with the states {', '.join(rs.RNG_STATES)}")
    return within  # type: ignore[return-value]


def read_partial(path: Path, *, completed: int, is_main: bool) -> dict[str, Any] | None:
    """``partial.pt`` to resume from, None when there is none or it is stale.

    Parameters
    ----------
    path : Path
        ``RUN_DIR/partial.pt``.
    completed : int
        Epochs completed according to ``last.pt`` (0 without one).
    is_main : bool
        Whether this process may remove a stale file.

    Returns
    -------
    dict or None
        The state (``last.pt``'s fields, checked, and ``within_epoch``, checked by
        :func:`check_within` once the run's batches are known); None when the file is missing
        or older than ``last.pt`` (then removed).

    Raises
    ------
    RunDirectoryError
        A damaged file, or one of a later epoch than ``last.pt`` records.
    """
    if not path.exists():
        return None
    try:
        state = rs.read_last(path, fmt=PARTIAL_FORMAT,
                             what=f"a within-epoch checkpoint ({path.name})")
    except RunDirectoryError as exc:
        raise with_remedy(exc, path) from None
    if state["epoch"] < completed:  # killed between last.pt and the removal of partial.pt
        if is_main:
            path.unlink(missing_ok=True)
        return None
    if state["epoch"] > completed:
        msg = (f"{path}: holds the progress within epoch {state['epoch'] + 1}, but {ck.LAST} "
               f"records {completed} completed epochs; delete {path.name} to resume from "
               f"{ck.LAST}, or pass overwrite=True to start the run again.")
        raise RunDirectoryError(msg)
    if not isinstance(state.get("within_epoch"), dict):
        raise _fail(path, "within_epoch", "an object")
    return state
