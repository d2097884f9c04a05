"""What a :class:`~neuralop_fem.training.Trainer` writes about itself: the resume state of
``last.pt`` / ``partial.pt`` and the record of ``run.json`` (read back by :mod:`.resume` and
:class:`~neuralop_fem.runs.RunDir`).

The functions take the trainer's state as :class:`TrainerState`, the attributes they read
(the trainer satisfies it; :mod:`.divergence` adds what it changes, :class:`GuardedTrainer`).
The trainer module imports this one, not the other way round.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import torch

from ..models import NormalizedOperator
from ..models.presets import ModelConfig
from ..runs import RUN_FORMAT, DataRecord, Normalizers, RunDir, RunRecord, Splits
from ..runs.train_config import TrainConfig
from ..runs.validation import Rollback
from . import checkpoint as ck
from . import partial_checkpoint as we
from . import resume as rs
from ._env import training_environment
from .amp import AmpChoice, AmpForward
from .distributed import DistContext, GlobalBatchSampler
from .optim import peak_lr
from .setup import TrainingData

__all__ = ["GuardedTrainer", "TrainerState", "resume_state", "run_record"]


class TrainerState(Protocol):
    """The state of a :class:`~neuralop_fem.training.Trainer` that its records hold."""

    preset: str | None
    config: TrainConfig
    model_config: ModelConfig
    operator: NormalizedOperator
    forward_module: AmpForward
    data: TrainingData
    device: torch.device
    amp_choice: AmpChoice
    ctx: DistContext
    optimizer: torch.optim.Optimizer
    scheduler: Any  # a torch learning-rate scheduler
    sampler: GlobalBatchSampler
    steps_per_epoch: int
    epoch: int
    history: dict[str, list[float]]
    best_epoch: int
    best_val: float
    code_history: list[dict[str, Any]]
    rollbacks: list[Rollback]

    def wall_time(self) -> float:
        """Seconds of training so far."""
        ...


class GuardedTrainer(TrainerState, Protocol):
    """What the divergence guard (:mod:`.divergence`) reads and changes of a trainer."""

    run: RunDir
    run_dir: Path
    t_start: float
    wall_time_before: float
    within: we.WithinEpoch | None

    def load_state(self, state: dict[str, Any]) -> None:
        """Restore a checked ``last.pt`` state."""
        ...

    def save_last(self, within: we.WithinEpoch | None = None) -> None:
        """Write ``last.pt``."""
        ...

    def run_record(self, *, status: str,
                   results: Mapping[str, Any] | None = None) -> RunRecord:
        """The record of ``run.json``."""
        ...


def resume_state(trainer: TrainerState, identity: dict[str, Any],
                 within: we.WithinEpoch | None = None) -> dict[str, Any]:
    """The contents of ``last.pt`` (:class:`~.resume.LastState`) after the epochs completed;
    with ``within``, of ``partial.pt`` within the next epoch (:mod:`.partial_checkpoint`)."""
    t = trainer
    return {
        "format": ck.LAST_FORMAT if within is None else we.PARTIAL_FORMAT,
        "identity": identity,
        "epoch": t.epoch,
        "model": {k: v.detach().cpu().clone() for k, v in t.operator.state_dict().items()},
        "optimizer": t.optimizer.state_dict(),
        "scheduler": t.scheduler.state_dict(),
        "history": t.history,
        "best_epoch": t.best_epoch,
        "best_val": t.best_val,
        "wall_time_s": t.wall_time(),
        "rng": rs.capture_rng(t.sampler),
        "train_config": t.config.to_dict(),
        "model_family": t.model_config.family,
        "model_config": t.model_config.to_dict(),
        "code_history": t.code_history,
        "rollbacks": [dict(r) for r in t.rollbacks],
        **({} if within is None else {"within_epoch": within}),
    }


def run_record(trainer: TrainerState, *, status: str,
               results: Mapping[str, Any] | None = None) -> RunRecord:
    """The record of ``run.json``: ``status``, the run's settings, data, splits, hardware,
    code commits and progress, and ``results`` (the test errors of a finished run)."""
    t, d = trainer, trainer.data
    env = training_environment(t.device)
    res = dict(results or {})
    warnings = res.get("warnings")
    return RunRecord(
        nulls=RunRecord.TRAINER_FIELDS,
        format=RUN_FORMAT,
        status=status,
        preset=t.preset,
        task=t.config.task,
        model_family=t.model_config.family,
        model_config=t.model_config.to_dict(),
        n_parameters=sum(p.numel() for p in t.operator.model.parameters()),
        train_config=t.config.to_dict(),
        data=DataRecord.from_dict(d.provenance),
        resolution=d.resolution,
        coarse_resolution=d.coarse_resolution,
        output_resolution=d.coarse_resolution or d.resolution,
        normalizers=Normalizers(
            input=d.input_normalizer is not None, output=d.output_normalizer is not None,
            dirichlet=any(d.dirichlet), dirichlet_edges=tuple(d.dirichlet)),
        splits=Splits(**{k: tuple(v.tolist()) for k, v in d.splits.items()}),
        ood_reference=d.ood_reference,
        sample_counts={k: int(v.size) for k, v in d.splits.items()},
        device=str(t.device),
        precision={**t.amp_choice.to_dict(), **(
            {"float32_parts": list(parts)} if (parts := t.forward_module.float32_parts) else {})},
        world_size=t.ctx.world_size,
        versions=env.versions,
        code=env.code,
        hardware=env.hardware,
        code_history=tuple(t.code_history),
        peak_lr=peak_lr(t.config, steps_per_epoch=t.steps_per_epoch),
        epochs_completed=t.epoch,
        rollbacks=tuple(dict(r) for r in t.rollbacks),
        wall_time_s=t.wall_time(),
        best_epoch=t.best_epoch,
        best_val_rel_l2=None if math.isinf(t.best_val) else t.best_val,
        test_rel_l2_best=res.get("test_rel_l2_best"),
        test_rel_l2_final=res.get("test_rel_l2_final"),
        val_rel_l2_final=res.get("val_rel_l2_final"),
        bf16_output_deviation=res.get("bf16_output_deviation"),
        warnings=None if warnings is None else tuple(warnings),
    )
