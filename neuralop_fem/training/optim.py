r"""The optimiser and learning-rate schedule of a training run (docs/training.md).

Chosen by :class:`~neuralop_fem.training.TrainConfig` fields:

* ``optimizer``: ``"adam"`` (the paper; L2 penalty ``weight_decay`` added to the gradient) or
  ``"adamw"`` (decoupled weight decay, Loshchilov & Hutter 2019); default betas and eps.
* ``scheduler``, with :math:`L` = ``lr_max``, :math:`d` = ``div_factor``,
  :math:`f` = ``final_div_factor``, :math:`S` optimizer steps in all:

  - ``"onecycle"`` (the paper's; default): torch ``OneCycleLR``, cosine from :math:`L/d` up to
    :math:`L` at step ``pct_start * S - 1`` and down to :math:`L/(d f)`, with beta1 cycling
    0.95 -> 0.85 -> 0.95; stepped after every optimizer step;
  - ``"cosine"``: linear warm-up from :math:`L/d` to :math:`L` over ``warmup_epochs``, then
    cosine decay to :math:`L/(d f)` at the last step; stepped after every optimizer step;
  - ``"step"``: :math:`L` multiplied by ``lr_decay`` every ``step_epochs`` epochs;
  - ``"plateau"``: :math:`L` multiplied by ``lr_decay`` when the validation error has not
    improved (relative threshold 1e-4) for ``plateau_patience`` epochs;
  - ``"constant"``: :math:`L` throughout.

Every scheduler's state is a ``state_dict`` saved in ``last.pt``, so a resumed run follows the
same learning rates bitwise. :func:`scheduler_steps` is the step count a run's scheduler has
after a number of epochs (checked on resume).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import torch

from .config import TrainConfig

if TYPE_CHECKING:  # pragma: no cover
    from torch.optim.optimizer import ParamsT

    from .distributed import DistContext

__all__ = [
    "PER_EPOCH",
    "SCHEDULER_PROGRESS",
    "make_optimizer",
    "make_scheduler",
    "optimizer_steps_per_epoch",
    "scheduler_steps",
    "step_epoch",
    "step_epoch_schedule",
    "stop_early",
    "stopped_early",
]

#: Schedulers stepped once per epoch (the others after every optimizer step).
PER_EPOCH = ("step", "plateau")
#: Scheduler state entries that change as it steps (the others follow from the settings).
SCHEDULER_PROGRESS = ("last_epoch", "_step_count", "_last_lr", "_is_initial",
                      "_get_lr_called_within_step", "best", "num_bad_epochs",
                      "cooldown_counter")


def make_optimizer(params: ParamsT, config: TrainConfig) -> torch.optim.Optimizer:
    """Adam or AdamW (default betas/eps) at ``lr_max`` with ``weight_decay``."""
    if config.optimizer == "adamw":
        return torch.optim.AdamW(params, lr=config.lr_max, weight_decay=config.weight_decay)
    return torch.optim.Adam(params, lr=config.lr_max, weight_decay=config.weight_decay)


def optimizer_steps_per_epoch(batches: int, config: TrainConfig) -> int:
    """Optimizer steps in an epoch of ``batches`` batches: one per ``grad_accumulation``
    batches, the last group possibly shorter."""
    return math.ceil(batches / config.grad_accumulation)


def _cosine_factor(step: int, *, warmup: int, total: int, start: float, end: float) -> float:
    """Learning-rate factor of step ``step``: linear ``start`` -> 1 over ``warmup`` steps,
    then cosine 1 -> ``end`` at step ``total - 1``."""
    if step < warmup:
        return start + (1.0 - start) * step / warmup
    span = max(total - 1 - warmup, 1)
    t = min(step - warmup, span) / span
    return end + (1.0 - end) * 0.5 * (1.0 + math.cos(math.pi * t))


def make_scheduler(
    optimizer: torch.optim.Optimizer, config: TrainConfig, *, steps_per_epoch: int
) -> Any:
    """The learning-rate scheduler of ``config.scheduler`` (see the module docstring).

    Parameters
    ----------
    optimizer
        From :func:`make_optimizer`.
    config
        The run's settings.
    steps_per_epoch
        Optimizer steps per epoch (:func:`optimizer_steps_per_epoch`).
    """
    total = config.epochs * steps_per_epoch
    lr_end = 1.0 / (config.div_factor * config.final_div_factor)
    kind = config.scheduler
    if kind == "onecycle":
        return torch.optim.lr_scheduler.OneCycleLR(
            optimizer, max_lr=config.lr_max, total_steps=total,
            pct_start=config.pct_start, anneal_strategy="cos", cycle_momentum=True,
            div_factor=config.div_factor, final_div_factor=config.final_div_factor,
        )
    if kind == "cosine":
        warmup = min(config.warmup_epochs * steps_per_epoch, total - 1)
        start = 1.0 / config.div_factor

        def factor(step: int) -> float:
            return _cosine_factor(step, warmup=warmup, total=total, start=start, end=lr_end)

        return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
    if kind == "step":
        return torch.optim.lr_scheduler.StepLR(optimizer, step_size=config.step_epochs,
                                               gamma=config.lr_decay)
    if kind == "plateau":
        return torch.optim.lr_scheduler.ReduceLROnPlateau(
            optimizer, mode="min", factor=config.lr_decay, patience=config.plateau_patience,
        )
    return torch.optim.lr_scheduler.LambdaLR(optimizer, _one)


def _one(step: int) -> float:
    return 1.0


def step_epoch(scheduler: Any, config: TrainConfig, val_rel_l2: float) -> None:
    """Step a per-epoch scheduler after an epoch (``plateau`` reads the validation error)."""
    if config.scheduler == "plateau":
        scheduler.step(val_rel_l2)
    elif config.scheduler in PER_EPOCH:
        scheduler.step()


def _from_main(ctx: DistContext, value: Any) -> Any:
    """``value`` of the main process, in every process of a distributed run."""
    if not ctx.distributed:
        return value
    shared = [value]
    torch.distributed.broadcast_object_list(shared, src=0)
    return shared[0]


def step_epoch_schedule(scheduler: Any, config: TrainConfig, val_rel_l2: float | None,
                        ctx: DistContext) -> None:
    """After an epoch: step a per-epoch schedule, ``plateau`` with the validation error of the
    main process (the only one that computes it; None elsewhere)."""
    if config.scheduler in PER_EPOCH:
        val = _from_main(ctx, val_rel_l2)
        step_epoch(scheduler, config, math.inf if val is None else val)


def stop_early(config: TrainConfig, epoch: int, best_epoch: int, ctx: DistContext) -> bool:
    """:func:`stopped_early` as decided by the main process (which tracks the best epoch)."""
    if config.early_stopping == 0:
        return False
    return bool(_from_main(ctx, stopped_early(config, epoch=epoch, best_epoch=best_epoch)))


def scheduler_steps(config: TrainConfig, *, epochs_done: int, steps_per_epoch: int) -> int:
    """The scheduler's ``last_epoch`` after ``epochs_done`` epochs."""
    if config.scheduler in PER_EPOCH:
        return epochs_done
    return epochs_done * steps_per_epoch


def stopped_early(config: TrainConfig, *, epoch: int, best_epoch: int) -> bool:
    """Whether early stopping ends the run after ``epoch``: ``early_stopping`` > 0 epochs have
    passed without a lower validation error than that of ``best_epoch``."""
    return 0 < config.early_stopping <= epoch - best_epoch and epoch < config.epochs
