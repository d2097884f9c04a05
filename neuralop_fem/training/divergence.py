r"""The divergence guard: an epoch in which training blew up is undone and trained again at half
the learning rate, so a run does not spend its remaining epochs on a broken model.

An epoch *diverged* when its mean training loss is not finite, or is more than
``TrainConfig.divergence_factor`` (default 10) times the lowest epoch mean so far, or when its
validation error is not finite. Measured on the 32 ``metrics.csv`` files committed in
``benchmarks/results`` (``benchmarks/bench_loss_jumps.py``, ``loss_jumps.md``): in the 25
healthy runs (31-400 epochs, Burgers and Darcy, float32 and bf16) no epoch's mean training loss
is more than 2.44 times the lowest before it; the seven others jumped by 2.0e3 to 1.2e8 times
within one epoch (six collapsed for good, one recovered after two epochs). Validation errors
alone rise by up to 5.6 times in healthy Burgers runs, so they only count when not finite.

A diverged epoch is not recorded (no history row, ``best.pt`` untouched). The trainer goes back
to ``last.pt`` (the end of the epoch before: weights, Adam moments, schedule, RNG states),
multiplies the learning rate of the rest of the schedule by :data:`LR_FACTOR` (one-cycle: its
initial, peak and final rates; cosine and constant: the base rate; step and plateau: the
current rate), saves that as ``last.pt`` and trains the epoch again: the same batches, at the
lower rate. ``run.json`` and ``last.pt`` list every rollback (``rollbacks``: the epoch, its
loss and validation error, the learning-rate scale from then on), and the log has a WARNING
line for each. A run killed at any point of this resumes to the same weights.

The guard gives up, with :class:`TrainingDivergedError` and ``run.json`` status
``"diverged"``, when an epoch diverges after ``TrainConfig.max_rollbacks`` (default 3)
rollbacks: that epoch is undone too (``last.pt``: the end of the epoch before, at half the rate
again, the rollback listed) and the run stops there, so the same command with
``--set max_rollbacks=K`` (a larger K) trains that epoch again at the lower rate. In the first
epoch there is no earlier state to go back to: the run stops, and a lower ``--lr`` with
``--overwrite`` starts again. ``best.pt`` is kept either way. ``divergence_factor = 0`` turns
the guard off. Both settings may change when a run is resumed.
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any

import torch

from ..errors import TrainingDivergedError
from ..runs.validation import Rollback, rollback_entry_ok
from . import checkpoint as ck
from . import resume as rs
from .optim import LR_GROUP_KEYS, from_main
from .run_state import GuardedTrainer

__all__ = ["LR_FACTOR", "LR_GROUP_KEYS", "Rollback", "TrainingDivergedError", "check_rollbacks",
           "divergence", "loss_jump", "lr_scale", "scale_lr", "undo_diverged_epoch"]

_log = logging.getLogger("neuralop_fem.training.trainer")

#: The learning rate of the rest of a run is multiplied by this at each rollback.
LR_FACTOR = 0.5


def divergence(train_loss: float, val: float | None, train_history: list[float], *,
               factor: float) -> str | None:
    """Why an epoch with mean training loss ``train_loss`` and validation error ``val``
    diverged, after epochs whose mean training losses were ``train_history``; None when it
    did not (or ``factor`` is 0: the guard is off).

    >>> divergence(0.05, 0.04, [0.3, 0.06], factor=10.0) is None
    True
    >>> divergence(1359.2, 0.50, [0.3, 0.054], factor=10.0)
    'its mean training loss 1.359e+03 is 2.5e+04 times the lowest before it (5.400e-02)'
    >>> divergence(float("nan"), None, [], factor=10.0)
    'its mean training loss is not finite (nan)'
    """
    if factor == 0:
        return None
    if not math.isfinite(train_loss):
        return f"its mean training loss is not finite ({train_loss})"
    if val is not None and not math.isfinite(val):
        return f"its validation error is not finite ({val})"
    jump = loss_jump(train_loss, train_history)
    if jump > factor:
        return (f"its mean training loss {train_loss:.3e} is {jump:.2g} times the lowest "
                f"before it ({train_loss / jump:.3e})")
    return None


def loss_jump(train_loss: float, train_history: list[float]) -> float:
    """``train_loss`` over the lowest finite positive value of ``train_history`` (infinite
    when ``train_loss`` is not finite; 0 when there is no such earlier value).

    >>> loss_jump(0.06, [0.3, 0.05])
    1.2
    """
    if not math.isfinite(train_loss):
        return math.inf
    lowest = min((v for v in train_history if math.isfinite(v) and v > 0), default=math.inf)
    return train_loss / lowest if lowest < math.inf else 0.0


def lr_scale(rollbacks: list[Rollback]) -> float:
    """The learning-rate scale after ``rollbacks``: :data:`LR_FACTOR` to their number."""
    return LR_FACTOR ** len(rollbacks)


def scale_lr(optimizer: torch.optim.Optimizer, scheduler: Any, factor: float) -> None:
    """Multiply the learning rate of the rest of the schedule by ``factor``: every
    :data:`LR_GROUP_KEYS` entry of the optimizer's groups and the scheduler's ``base_lrs``
    and ``_last_lr`` (each of :func:`~neuralop_fem.training.optim.make_scheduler`'s schedules
    reads its rate from these)."""
    for group in optimizer.param_groups:
        for key in LR_GROUP_KEYS:
            if key in group:
                group[key] = group[key] * factor
    for name in ("base_lrs", "_last_lr"):
        values = getattr(scheduler, name, None)
        if isinstance(values, list):
            setattr(scheduler, name, [v * factor for v in values])


def check_rollbacks(value: Any, epoch: int, source: Any) -> list[Rollback]:
    """The ``rollbacks`` of a ``last.pt`` whose ``epoch`` epochs are done, checked (absent:
    none); a :class:`~neuralop_fem.errors.RunDirectoryError` naming ``source`` otherwise."""
    if value is None:
        return []
    expected = ("a list of {epoch, train_loss, val_rel_l2, reason, lr_scale} with epochs "
                f"rising, at most epoch + 1 = {epoch + 1}, and lr_scale {LR_FACTOR} ** (k + 1)")
    if not isinstance(value, list):
        raise rs.fail(source, "rollbacks", expected)
    previous = 0
    for k, entry in enumerate(value):
        ok = (rollback_entry_ok(entry) and previous <= entry["epoch"] <= epoch + 1
              and math.isclose(entry["lr_scale"], LR_FACTOR ** (k + 1)))
        if not ok:
            raise rs.fail(source, "rollbacks", expected)
        previous = entry["epoch"]
    return [Rollback(**entry) for entry in value]


def undo_diverged_epoch(trainer: GuardedTrainer, loss: float, val: float | None) -> bool:
    """After training epoch ``trainer.epoch + 1`` (mean loss ``loss``, validation error
    ``val``): if it diverged, go back to ``last.pt`` at a lower learning rate and return True
    (train the epoch again); else False. Raises :class:`TrainingDivergedError` when the guard
    gives up (see the module docstring). The main process decides; in a distributed run every
    process reads ``last.pt`` before the main process writes it again."""
    t, cfg = trainer, trainer.config
    decision = None
    if t.ctx.is_main:
        reason = divergence(loss, val, t.history["train_loss"], factor=cfg.divergence_factor)
        if reason is not None:
            decision = (reason, len(t.rollbacks) >= cfg.max_rollbacks)
    decision = from_main(t.ctx, decision)
    if decision is None:
        return False
    (reason, give_up), epoch = decision, t.epoch + 1
    if t.epoch == 0:
        _give_up(t, epoch, reason, "in its first epoch (no earlier state to go back to)",
                 "Train again with a lower --lr and --overwrite.")
    record = Rollback(epoch=epoch, train_loss=_finite(loss), val_rel_l2=_finite(val),
                      reason=reason, lr_scale=lr_scale(t.rollbacks) * LR_FACTOR)
    wall = t.wall_time()  # the undone epoch's time counts
    t.within = None
    t.load_state(rs.read_last(t.run_dir / ck.LAST))
    t.ctx.barrier()  # every process has read last.pt before the main process rewrites it
    t.wall_time_before = wall - (time.perf_counter() - t.t_start)
    scale_lr(t.optimizer, t.scheduler, LR_FACTOR)
    t.rollbacks = [*t.rollbacks, record]
    if t.ctx.is_main:
        if not give_up:
            _log.warning("%s: epoch %d diverged: %s (validation rel. L2 %s). Going back to the "
                         "end of epoch %d and training it again at %g times the learning rate "
                         "(rollback %d of at most %d).", t.run_dir, epoch, reason,
                         "n/a" if val is None else f"{val:.3e}", t.epoch, record["lr_scale"],
                         len(t.rollbacks), cfg.max_rollbacks)
        # partial.pt first: it would resume the undone epoch (its epoch count is last.pt's)
        (t.run_dir / ck.PARTIAL).unlink(missing_ok=True)
        t.save_last()
        t.run.write(t.run_record(status="running"))
    t.ctx.barrier()
    if give_up:
        _give_up(t, epoch, reason, f"again after {len(t.rollbacks) - 1} rollbacks "
                 f"(max_rollbacks {cfg.max_rollbacks})",
                 f"The run stopped after undoing it: last.pt is the end of epoch {t.epoch} at "
                 f"{record['lr_scale']:g} times the learning rate, from which the same command "
                 f"with --set max_rollbacks=K (K > {cfg.max_rollbacks}) trains epoch {epoch} "
                 "again; or train again with a lower --lr and --overwrite.")
    return True


def _finite(value: float | None) -> float | None:
    """``value``, or None when it is not a finite number (``run.json`` stays strict JSON)."""
    return value if value is not None and math.isfinite(value) else None


def _give_up(t: GuardedTrainer, epoch: int, reason: str, why: str, remedy: str) -> None:
    kept = (f" best.pt (epoch {t.best_epoch}, validation rel. L2 {t.best_val:.3e}) is kept."
            if t.best_epoch else "")
    msg = f"{t.run_dir}: training diverged in epoch {epoch} {why}: {reason}.{kept} {remedy}"
    if t.ctx.is_main:
        t.run.write(t.run_record(status="diverged"))
    raise TrainingDivergedError(msg)
