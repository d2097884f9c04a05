"""Progress of a training run that moves during an epoch, the first (slowest) one included.

On a terminal, :class:`TrainingProgress` shows one bar over every batch of the run
(``epoch 3/100: 41%|████   | 5248/12800 [...] loss=...``), updated after each batch (redrawn at
most every :data:`REFRESH_S` seconds); the epoch's validation error and learning rate are
added when it ends. Without a terminal (a log file, a batch job) it logs an INFO line during an
epoch at most every :data:`LOG_EVERY_S` seconds (``-v`` shows them), next to the trainer's line
per epoch.
"""

from __future__ import annotations

import logging
import math
import time
from typing import IO, Any

__all__ = ["FINAL_OVER_BEST", "LOG_EVERY_S", "REFRESH_S", "TrainingProgress",
           "training_warnings"]

_log = logging.getLogger("neuralop_fem.training.trainer")

#: Smallest interval in seconds between two redraws of the bar.
REFRESH_S = 0.5
#: Smallest interval in seconds between two log lines within an epoch (no terminal).
LOG_EVERY_S = 30.0
#: A final validation error more than this many times the best epoch's is reported.
FINAL_OVER_BEST = 2.0


def training_warnings(val_history: list[float], best_epoch: int, *,
                      log_as: str | None = None) -> list[str]:
    """One line for each sign that a finished run went wrong (none for a healthy run).

    * the final epoch's validation error is more than :data:`FINAL_OVER_BEST` times the best
      epoch's (training became unstable after the best epoch), or not finite;
    * the best validation error is 1 or more (the model does no better than predicting zero).

    Parameters
    ----------
    val_history
        Mean validation relative L2 error of every epoch, in order.
    best_epoch
        The epoch (from 1) of the lowest one; 0 when none was finite.
    log_as
        If given, each line is also logged at WARNING, prefixed ``"<log_as>: "`` (the run
        directory).

    >>> training_warnings([0.5, 0.3, 0.31], 2)
    []
    >>> print(training_warnings([0.45, 5.4, 24.7], 1)[0])  # doctest: +NORMALIZE_WHITESPACE
    the final epoch's validation rel. L2 (24.7, epoch 3) is 55x the best epoch's (0.45, epoch 1):
    training became unstable; the selected model (best.pt) is epoch 1's. Train with a lower
    peak learning rate or on more samples.
    """
    lines = _warnings(val_history, best_epoch)
    for line in lines if log_as is not None else ():
        _log.warning("%s: %s", log_as, line)
    return lines


def _warnings(val_history: list[float], best_epoch: int) -> list[str]:
    if not val_history:
        return []
    n, final = len(val_history), float(val_history[-1])
    best = float(val_history[best_epoch - 1]) if best_epoch > 0 else math.inf
    lines = []
    if not math.isfinite(best):
        return ["no epoch had a finite validation error: training diverged from the start. "
                "Train with a lower peak learning rate."]
    if not math.isfinite(final) or final > FINAL_OVER_BEST * best:
        ratio = "not finite" if not math.isfinite(final) else f"{final / best:.0f}x"
        lines.append(f"the final epoch's validation rel. L2 ({final:.3g}, epoch {n}) is {ratio} "
                     f"the best epoch's ({best:.3g}, epoch {best_epoch}): training became "
                     f"unstable; the selected model (best.pt) is epoch {best_epoch}'s. Train "
                     "with a lower peak learning rate or on more samples.")
    if best >= 1.0:
        lines.append(f"the best validation rel. L2 is {best:.3g} (epoch {best_epoch}), not below "
                     "1: the model does no better than predicting zero.")
    return lines


class TrainingProgress:
    """Per-batch progress of a training run.

    Parameters
    ----------
    epochs
        Epochs of the run.
    steps_per_epoch
        Batches per epoch.
    done_epochs
        Epochs finished before (a resumed run starts its bar there).
    bar
        Draw a bar (tqdm) on ``file``; else log.
    log
        Log within epochs when there is no bar (False on the other processes of a
        distributed run, which show nothing).
    file
        Where the bar is drawn (default ``sys.stderr``).
    """

    def __init__(self, *, epochs: int, steps_per_epoch: int, done_epochs: int = 0,
                 bar: bool, log: bool = True, file: IO[str] | None = None) -> None:
        self.epochs, self.steps = int(epochs), max(int(steps_per_epoch), 1)
        self.epoch, self.step = int(done_epochs), 0
        self.log = log and not bar
        self._loss_sum, self._t_epoch, self._t_log = 0.0, 0.0, 0.0
        self.bar: Any = None
        if bar:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=self.epochs * self.steps, initial=self.epoch * self.steps,
                            desc=self._desc(self.epoch + 1), unit="batch", file=file,
                            mininterval=REFRESH_S, dynamic_ncols=True)

    def _desc(self, epoch: int) -> str:
        return f"epoch {min(epoch, self.epochs)}/{self.epochs}"

    def start_epoch(self, epoch: int, *, done: int = 0, loss_sum: float = 0.0) -> None:
        """Epoch ``epoch`` (from 1) starts, or resumes after ``done`` batches whose losses
        sum to ``loss_sum``; an epoch trained again (:mod:`.divergence`) starts its bar over."""
        self.epoch, self.step, self._loss_sum = epoch, done, loss_sum
        self._t_epoch = self._t_log = time.perf_counter()
        if self.bar is not None:
            self.bar.set_description(self._desc(epoch), refresh=False)
            position = (epoch - 1) * self.steps + done
            if self.bar.n != position:  # resumed within the epoch, or the epoch trained again
                self.bar.n = position
                self.bar.refresh()

    def batch(self, loss: float) -> None:
        """One batch of the current epoch finished with training loss ``loss``."""
        self.step += 1
        self._loss_sum += loss
        mean = self._loss_sum / self.step
        if self.bar is not None:
            self.bar.set_postfix_str(f"loss={mean:.3e}", refresh=False)
            self.bar.update(1)
            return
        now = time.perf_counter()
        if self.log and self.step < self.steps and now - self._t_log >= LOG_EVERY_S:
            self._t_log = now
            _log.info("epoch %d/%d: batch %d/%d, mean loss %.4e (%.0f s)", self.epoch,
                      self.epochs, self.step, self.steps, mean, now - self._t_epoch)

    def end_epoch(self, *, loss: float, val: float | None, lr: float) -> None:
        """The epoch ended: its mean loss, validation error and last learning rate."""
        if self.bar is None:
            return
        val_text = "nan" if val is None or not math.isfinite(val) else f"{val:.3e}"
        self.bar.set_postfix_str(f"loss={loss:.3e}, val={val_text}, lr={lr:.2e}", refresh=False)
        self.bar.refresh()

    def close(self) -> None:
        """Close the bar (if any)."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None
