"""The optimiser and learning-rate schedule of a training run (docs/training.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from .config import TrainConfig

if TYPE_CHECKING:  # pragma: no cover
    from torch.optim.optimizer import ParamsT

__all__ = ["make_optimizer", "make_scheduler"]


def make_optimizer(params: ParamsT, config: TrainConfig) -> torch.optim.Optimizer:
    """Adam (default betas/eps, no weight decay) at ``lr_max``; the schedule sets the lr."""
    return torch.optim.Adam(params, lr=config.lr_max, weight_decay=0.0)


def make_scheduler(
    optimizer: torch.optim.Optimizer, config: TrainConfig, *, steps_per_epoch: int
) -> torch.optim.lr_scheduler.OneCycleLR:
    """OneCycleLR over ``epochs * steps_per_epoch`` steps, cosine, momentum cycling.

    The lr rises from ``lr_max / div_factor`` to ``lr_max`` at step ``pct_start * total - 1``
    and falls to ``lr_max / (div_factor * final_div_factor)`` at the last step.
    """
    return torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=config.lr_max, total_steps=config.epochs * steps_per_epoch,
        pct_start=config.pct_start, anneal_strategy="cos", cycle_momentum=True,
        div_factor=config.div_factor, final_div_factor=config.final_div_factor,
    )
