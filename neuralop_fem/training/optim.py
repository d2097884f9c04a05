"""The optimiser and learning-rate schedule of a training run (docs/training.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from .config import TrainConfig

if TYPE_CHECKING:  # pragma: no cover
    from torch.optim.optimizer import ParamsT

__all__ = ["MIN_WARMUP_STEPS", "make_optimizer", "make_scheduler", "peak_lr", "schedule_note",
           "warmup_steps"]

#: The default of ``TrainConfig.min_warmup_steps``: the fewest warm-up steps over which the
#: learning rate may rise to ``lr_max``; a shorter warm-up (few samples, few epochs) peaks at
#: ``lr_max * warmup / MIN_WARMUP_STEPS``. Measured (docs/training.md, "Small files"):
#: darcy-inverse-galerkin on 26 samples diverged with lr 1e-3 reached after 7 and 14 steps
#: (loss 1e2, validation error 10-170) and trained with 3e-4 after 7 steps; the Darcy rows of
#: benchmarks/results (256 samples) warm up over 384 steps to 1e-3 and are unchanged, as is
#: every paper-size run (3840 steps and more).
MIN_WARMUP_STEPS = TrainConfig.min_warmup_steps


def warmup_steps(config: TrainConfig, *, steps_per_epoch: int) -> float:
    """Steps of the rising phase of the one-cycle schedule: ``pct_start * epochs * steps``."""
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
    """
    if config.min_warmup_steps == 0:
        return float(config.lr_max)
    up = warmup_steps(config, steps_per_epoch=steps_per_epoch)
    return float(config.lr_max * min(1.0, up / config.min_warmup_steps))


def make_optimizer(params: ParamsT, config: TrainConfig) -> torch.optim.Optimizer:
    """Adam (default betas/eps, no weight decay) at ``lr_max``; the schedule sets the lr."""
    return torch.optim.Adam(params, lr=config.lr_max, weight_decay=0.0)


def make_scheduler(
    optimizer: torch.optim.Optimizer, config: TrainConfig, *, steps_per_epoch: int
) -> torch.optim.lr_scheduler.OneCycleLR:
    """OneCycleLR over ``epochs * steps_per_epoch`` steps, cosine, momentum cycling.

    The lr rises from ``peak / div_factor`` to ``peak`` at step ``pct_start * total - 1``
    and falls to ``peak / (div_factor * final_div_factor)`` at the last step; ``peak`` is
    :func:`peak_lr` (``lr_max`` unless the warm-up is shorter than :data:`MIN_WARMUP_STEPS`).
    """
    return torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=peak_lr(config, steps_per_epoch=steps_per_epoch),
        total_steps=config.epochs * steps_per_epoch,
        pct_start=config.pct_start, anneal_strategy="cos", cycle_momentum=True,
        div_factor=config.div_factor, final_div_factor=config.final_div_factor,
    )


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
