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

__all__ = ["LOG_EVERY_S", "REFRESH_S", "TrainingProgress"]

_log = logging.getLogger("neuralop_fem.training.trainer")

#: Smallest interval in seconds between two redraws of the bar.
REFRESH_S = 0.5
#: Smallest interval in seconds between two log lines within an epoch (no terminal).
LOG_EVERY_S = 30.0


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

    def start_epoch(self, epoch: int) -> None:
        """Epoch ``epoch`` (from 1) starts."""
        self.epoch, self.step, self._loss_sum = epoch, 0, 0.0
        self._t_epoch = self._t_log = time.perf_counter()
        if self.bar is not None:
            self.bar.set_description(self._desc(epoch), refresh=False)

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
