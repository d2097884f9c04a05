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

from ..runs.train_config import TrainConfig

if TYPE_CHECKING:  # pragma: no cover
    from torch.optim.optimizer import ParamsT

    from .distributed import DistContext

__all__ = [
    "MIN_WARMUP_STEPS",
    "PER_EPOCH",
    "LR_GROUP_KEYS",
    "SCHEDULER_PROGRESS",
    "from_main",
    "make_optimizer",
    "make_scheduler",
    "optimizer_steps_per_epoch",
    "peak_lr",
    "schedule_note",
    "scheduler_steps",
    "step_epoch",
    "step_epoch_schedule",
    "stop_early",
    "stopped_early",
    "warmup_steps",
]

#: Schedulers stepped once per epoch (the others after every optimizer step).
PER_EPOCH = ("step", "plateau")
#: Optimizer group entries that hold a learning rate (the schedules keep theirs there); a
#: rollback of the divergence guard scales them (:mod:`.divergence`).
LR_GROUP_KEYS = ("lr", "initial_lr", "max_lr", "min_lr")
#: Scheduler state entries that change as it steps (the others follow from the settings).
SCHEDULER_PROGRESS = ("last_epoch", "_step_count", "_last_lr", "_is_initial",
                      "_get_lr_called_within_step", "best", "num_bad_epochs",
                      "cooldown_counter")

#: The default of ``TrainConfig.min_warmup_steps``: the fewest warm-up steps over which the
#: learning rate may rise to ``lr_max``; a shorter warm-up (few samples, few epochs) peaks at
#: ``lr_max * warmup / MIN_WARMUP_STEPS``. Measured (docs/training.md, "Small files"):
#: darcy-inverse-galerkin on 26 samples diverged with lr 1e-3 reached after 7 and 14 steps
#: (loss 1e2, validation error 10-170) and trained with 3e-4 after 7 steps; the Darcy rows of
#: benchmarks/results (256 samples) warm up over 384 steps to 1e-3 and are unchanged, as is
#: every paper-size run (3840 steps and more).
MIN_WARMUP_STEPS = TrainConfig.min_warmup_steps


def warmup_steps(config: TrainConfig, *, steps_per_epoch: int) -> float:
    """Steps of the rising phase of the one-cycle schedule: ``pct_start * epochs * steps``
    (``steps_per_epoch``: optimizer steps)."""
    return config.pct_start * config.epochs * steps_per_epoch


def peak_lr(config: TrainConfig, *, steps_per_epoch: int) -> float:
    """The schedule's peak learning rate: ``lr_max``, lowered in proportion for a warm-up
    shorter than ``config.min_warmup_steps`` (:data:`MIN_WARMUP_STEPS` by default) steps: on
    average over the warm-up the lr rises by at most ``lr_max / min_warmup_steps`` per step.

    >>> from neuralop_fem.training import training_preset
    >>> cfg = training_preset("darcy-inverse-galerkin").replace(epochs=8)
    >>> peak_lr(cfg, steps_per_epoch=6)  # 26 samples, batch 4: 14.4 warm-up steps
    0.000144
    >>> peak_lr(cfg.replace(epochs=100), steps_per_epoch=256)  # the paper's 1024 samples
    0.001

    Only the one-cycle schedule is capped: the others start at (``cosine``: warm up to) their
    ``lr_max`` as configured.
    """
    if config.min_warmup_steps == 0 or config.scheduler != "onecycle":
        return float(config.lr_max)
    up = warmup_steps(config, steps_per_epoch=steps_per_epoch)
    return float(config.lr_max * min(1.0, up / config.min_warmup_steps))


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
            optimizer, max_lr=peak_lr(config, steps_per_epoch=steps_per_epoch),
            total_steps=total,
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


def from_main(ctx: DistContext, value: Any) -> Any:
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
        val = from_main(ctx, val_rel_l2)
        step_epoch(scheduler, config, math.inf if val is None else val)


def stop_early(config: TrainConfig, epoch: int, best_epoch: int, ctx: DistContext) -> bool:
    """:func:`stopped_early` as decided by the main process (which tracks the best epoch)."""
    if config.early_stopping == 0:
        return False
    return bool(from_main(ctx, stopped_early(config, epoch=epoch, best_epoch=best_epoch)))


def scheduler_steps(config: TrainConfig, *, epochs_done: int, steps_per_epoch: int) -> int:
    """The scheduler's ``last_epoch`` after ``epochs_done`` epochs."""
    if config.scheduler in PER_EPOCH:
        return epochs_done
    return epochs_done * steps_per_epoch


def stopped_early(config: TrainConfig, *, epoch: int, best_epoch: int) -> bool:
    """Whether early stopping ends the run after ``epoch``: ``early_stopping`` > 0 epochs have
    passed without a lower validation error than that of ``best_epoch``."""
    return 0 < config.early_stopping <= epoch - best_epoch and epoch < config.epochs


def schedule_note(config: TrainConfig, *, steps_per_epoch: int,
                  lr_name: str = "`lr_max`") -> str | None:
    """One line when the :func:`peak_lr` is below ``lr_max`` (a short warm-up), else None;
    ``lr_name``: how ``lr_max`` is named (the command line: ``--lr``)."""
    peak = peak_lr(config, steps_per_epoch=steps_per_epoch)
    if peak >= config.lr_max:
        return None
    up = warmup_steps(config, steps_per_epoch=steps_per_epoch)
    return (f"schedule: peak learning rate {peak:.3g} instead of {lr_name} {config.lr_max:g}: "
            f"the warm-up has {up:.3g} steps ({steps_per_epoch} batches per epoch x "
            f"{config.epochs} epochs x pct_start {config.pct_start:g}), fewer than the "
            f"{config.min_warmup_steps} (min_warmup_steps) the rate needs to rise to "
            f"{config.lr_max:g} without diverging on a small file; more epochs or samples give "
            "a higher peak.")
