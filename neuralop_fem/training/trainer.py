r"""The :class:`Trainer`: one training run in a run directory, resumable, single or multi-process.

Optimisation (Cao 2021; docs/training.md): Adam without weight decay, torch ``OneCycleLR`` stepped after
every batch (cosine, momentum cycling :math:`\beta_1` 0.95 -> 0.85 -> 0.95), total-norm gradient
clipping, loss :func:`~neuralop_fem.training.losses.operator_loss` with the config's
:math:`\gamma` (coefficient-weighted H1 term for Darcy). After every epoch the mean relative L2
error on the validation split is computed; the model with the lowest one is kept in
``best.pt``. At the end the test error of that model and of the final epoch are reported.

Resume: ``last.pt`` is written (atomically) after every epoch with the model, optimizer,
scheduler, history and every RNG state, so a run killed at any point and started again with
the same arguments finishes with bitwise the same weights and metrics (on CPU).
"""

from __future__ import annotations

import logging
import math
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
import xarray as xr
from torch import nn

from ..errors import ConfigError
from ..metrics import relative_l2
from ..models import MODEL_FAMILIES, NormalizedOperator
from . import checkpoint as ck
from ._env import environment_info
from .config import RESUME_FREE_FIELDS, TrainConfig
from .distributed import DistContext, GlobalBatchSampler
from .losses import operator_loss
from .setup import TrainingData, build_training_data, check_problem, open_data

__all__ = ["AmpForward", "Trainer", "make_optimizer", "make_scheduler"]

_log = logging.getLogger(__name__)
_CHECKPOINT_FILES = (ck.RUN_JSON, ck.LAST, ck.BEST, ck.METRICS, ck.CURVE)


class AmpForward(nn.Module):
    """Forward of a :class:`NormalizedOperator` with only the model body under autocast.

    The input normaliser, the output normaliser (decode) and the boundary ring run in float32;
    with ``amp="bf16"`` the model runs under ``torch.autocast(bfloat16)`` (its FFTs upcast
    themselves to float32) and its output is cast back to float32.
    """

    def __init__(self, operator: NormalizedOperator, *, amp: str, device_type: str) -> None:
        super().__init__()
        self.operator = operator
        self.amp = amp
        self.device_type = device_type

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        op = self.operator
        if self.amp == "none":
            return op(x)
        if op.input_normalizer is not None:
            x = op.input_normalizer.encode(x)
        with torch.autocast(self.device_type, dtype=torch.bfloat16):
            y = op.model(x)
        y = y.float()
        if op.output_normalizer is not None:
            y = op.output_normalizer.decode(y)
        if op.dirichlet:
            y = nn.functional.pad(y[:, 1:-1, 1:-1, :], (0, 0, 1, 1, 1, 1))
        return y


def make_optimizer(params: Any, config: TrainConfig) -> torch.optim.Optimizer:
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


def _flat(prefix: str, d: dict[str, Any]) -> dict[str, Any]:
    return {f"{prefix}{k}": v for k, v in d.items()}


def _rng_state(sampler: GlobalBatchSampler) -> dict[str, Any]:
    np_state = np.random.get_state()
    py_state = random.getstate()
    return {
        "torch": torch.get_rng_state(),
        "cuda": [s for s in torch.cuda.get_rng_state_all()] if torch.cuda.is_available() else [],
        "numpy": [np_state[0], np_state[1].tolist(), int(np_state[2]), int(np_state[3]),
                  float(np_state[4])],
        "python": [py_state[0], list(py_state[1]), py_state[2]],
        "loader": sampler.generator.get_state(),
    }


def _set_rng_state(state: dict[str, Any], sampler: GlobalBatchSampler) -> None:
    torch.set_rng_state(state["torch"])
    if state["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
    n = state["numpy"]
    np.random.set_state((n[0], np.asarray(n[1], dtype=np.uint32), n[2], n[3], n[4]))
    p = state["python"]
    random.setstate((p[0], tuple(p[1]), p[2]))
    sampler.generator.set_state(state["loader"])


class Trainer:
    """Train one model on one dataset into ``run_dir`` (see :mod:`.checkpoint` for the layout).

    Parameters
    ----------
    run_dir : path
        Output directory (created). If it holds an unfinished run with the same settings, the
        run resumes from ``last.pt``; a finished run is refused unless ``overwrite``; a run
        with other settings is refused naming the differing fields.
    data : path or xarray.Dataset
        A dataset whose ``problem`` fits ``config.task``.
    model_config : model config
        A config of :data:`neuralop_fem.models.MODEL_FAMILIES` (e.g. ``PRESETS[name]``).
    config : TrainConfig
    preset : str, optional
        Name recorded in ``run.json`` and used in error messages.
    overwrite : bool
        Discard whatever ``run_dir`` holds.

    Examples
    --------
    ``Trainer("runs/gt", "burgers.nc", model_config=PRESETS["burgers-galerkin"],
    config=TRAIN_PRESETS["burgers-galerkin"]).fit()``
    """

    def __init__(
        self,
        run_dir: str | os.PathLike[str],
        data: str | os.PathLike[str] | xr.Dataset,
        *,
        model_config: Any,
        config: TrainConfig,
        preset: str | None = None,
        overwrite: bool = False,
    ) -> None:
        if not isinstance(config, TrainConfig):
            msg = f"`config` must be a TrainConfig; got {type(config).__name__}."
            raise ConfigError(msg)
        family = getattr(model_config, "family", None)
        if family not in MODEL_FAMILIES or type(model_config) is not MODEL_FAMILIES[family][0]:
            msg = f"`model_config` must be a neuralop_fem.models config; got {type(model_config).__name__}."
            raise ConfigError(msg)
        self.run_dir = Path(run_dir)
        self.config, self.model_config, self.preset = config, model_config, preset
        self.ctx, self.device = DistContext.from_env(config.device)
        self._t_start = time.perf_counter()
        path = None if isinstance(data, xr.Dataset) else data
        dataset = open_data(data)  # opened (and validated) once
        check_problem(dataset, config, preset=preset)  # before touching run_dir
        self._identity_value = self._identity(data)
        resume = self._check_run_dir(data, overwrite=overwrite)

        torch.manual_seed(config.seed)  # model initialisation
        model = MODEL_FAMILIES[family][1](model_config)
        self.data: TrainingData = build_training_data(dataset, config, model=model, preset=preset,
                                                      path=path)
        self.operator = NormalizedOperator(
            model, input_normalizer=self.data.input_normalizer,
            output_normalizer=self.data.output_normalizer, dirichlet=self.data.dirichlet,
        ).to(self.device)
        self.forward_module = AmpForward(self.operator, amp=config.amp, device_type=self.device.type)
        self.train_module: nn.Module = self.forward_module
        if self.ctx.distributed:
            ids = [self.device.index] if self.device.type == "cuda" else None
            self.train_module = nn.parallel.DistributedDataParallel(
                self.forward_module, device_ids=ids, broadcast_buffers=False
            )
        self.sampler = GlobalBatchSampler(
            len(self.data.train), config.batch_size, seed=config.seed,
            rank=self.ctx.rank, world_size=self.ctx.world_size,
        )
        self.loader = torch.utils.data.DataLoader(
            self.data.train, batch_sampler=self.sampler, num_workers=config.num_workers,
        )
        self.optimizer = make_optimizer(self.operator.parameters(), config)
        self.scheduler = make_scheduler(self.optimizer, config, steps_per_epoch=len(self.sampler))
        self.epoch = 0
        self.history: dict[str, list[float]] = {
            "train_loss": [], "val_rel_l2": [], "lr": [], "epoch_time_s": []
        }
        self.best_epoch, self.best_val = 0, math.inf
        self.wall_time_before = 0.0
        if resume is not None:
            self._load_state(resume)
            _log.info("resuming %s after epoch %d", self.run_dir, self.epoch)
        elif self.ctx.is_main:
            ck.write_json(self.run_info(status="running"), self.run_dir / ck.RUN_JSON)
        self.ctx.barrier()

    # -- run directory ---------------------------------------------------------------------
    def _identity(self, data: Any) -> dict[str, Any]:
        path = None if isinstance(data, xr.Dataset) else os.path.abspath(os.fspath(data))
        train = {k: v for k, v in self.config.to_dict().items() if k not in RESUME_FREE_FIELDS}
        return {
            "preset": self.preset, "data_path": path, **_flat("", train),
            **_flat("model.", self.model_config.to_dict()),
        }

    def _check_run_dir(self, data: Any, *, overwrite: bool) -> dict[str, Any] | None:
        last = self.run_dir / ck.LAST
        if overwrite and self.ctx.is_main:
            for name in _CHECKPOINT_FILES:
                (self.run_dir / name).unlink(missing_ok=True)
        self.ctx.barrier()
        if overwrite or not last.is_file():
            self.run_dir.mkdir(parents=True, exist_ok=True)
            return None
        state = torch.load(last, map_location="cpu", weights_only=True)
        old, new = state["identity"], self._identity_value
        diff = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
        if diff:
            shown = "; ".join(f"{k}: {old.get(k)!r} (run) vs {new.get(k)!r} (now)" for k in diff)
            msg = (
                f"{self.run_dir} holds a run with other settings: {shown}. Use another --out "
                "or pass --overwrite to discard it."
            )
            raise ConfigError(msg)
        if state["epoch"] >= self.config.epochs:
            msg = (
                f"{self.run_dir} holds a finished run ({state['epoch']} epochs); pass "
                "--overwrite (overwrite=True) to train it again."
            )
            raise ConfigError(msg)
        return state

    def _load_state(self, state: dict[str, Any]) -> None:
        self.operator.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.epoch = int(state["epoch"])
        self.history = {k: list(v) for k, v in state["history"].items()}
        self.best_epoch, self.best_val = int(state["best_epoch"]), float(state["best_val"])
        self.wall_time_before = float(state["wall_time_s"])
        _set_rng_state(state["rng"], self.sampler)

    def _wall_time(self) -> float:
        return self.wall_time_before + time.perf_counter() - self._t_start

    def _save_last(self, data_identity: dict[str, Any]) -> None:
        state = {
            "format": ck.LAST_FORMAT,
            "identity": data_identity,
            "epoch": self.epoch,
            "model": {k: v.detach().cpu().clone() for k, v in self.operator.state_dict().items()},
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "history": self.history,
            "best_epoch": self.best_epoch,
            "best_val": self.best_val,
            "wall_time_s": self._wall_time(),
            "rng": _rng_state(self.sampler),
            "train_config": self.config.to_dict(),
            "model_family": self.model_config.family,
            "model_config": self.model_config.to_dict(),
        }
        ck.save_atomic(state, self.run_dir / ck.LAST)

    def run_info(self, *, status: str, results: dict[str, Any] | None = None) -> dict[str, Any]:
        """The contents of ``run.json``."""
        env = environment_info(self.device)
        d = self.data
        return {
            "format": "neuralop_fem.training.run/1",
            "status": status,
            "preset": self.preset,
            "task": self.config.task,
            "model_family": self.model_config.family,
            "model_config": self.model_config.to_dict(),
            "n_parameters": sum(p.numel() for p in self.operator.model.parameters()),
            "train_config": self.config.to_dict(),
            "data": d.provenance,
            "resolution": d.resolution,
            "coarse_resolution": d.coarse_resolution,
            "output_resolution": d.coarse_resolution or d.resolution,
            "normalizers": {
                "input": d.input_normalizer is not None, "output": d.output_normalizer is not None,
                "dirichlet": d.dirichlet,
            },
            "splits": {k: v.tolist() for k, v in d.splits.items()},
            "ood_reference": d.ood_reference,
            "sample_counts": {k: int(v.size) for k, v in d.splits.items()},
            "device": str(self.device),
            "world_size": self.ctx.world_size,
            **env,
            "epochs_completed": self.epoch,
            "wall_time_s": self._wall_time(),
            "best_epoch": self.best_epoch,
            "best_val_rel_l2": None if math.isinf(self.best_val) else self.best_val,
            **(results or {}),
        }

    # -- training ----------------------------------------------------------------------------
    def _batch(self, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        return {k: v.to(self.device, non_blocking=True) for k, v in batch.items()}

    def _loss(self, pred: torch.Tensor, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        gamma = self.config.gamma
        return operator_loss(
            pred.float(), batch["target"],
            target_grad=batch.get("target_grad") if gamma > 0 else None,
            coefficient=batch.get("coefficient"),  # the H1 weight K: Darcy forward only
            gamma=gamma,
        )

    def _train_epoch(self) -> tuple[float, float]:
        self.train_module.train()
        total, lr = 0.0, float("nan")
        for batch in self.loader:
            batch = self._batch(batch)
            pred = self.train_module(batch["input"])
            loss = self._loss(pred, batch)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if self.config.grad_clip > 0:
                nn.utils.clip_grad_norm_(self.operator.parameters(), self.config.grad_clip)
            lr = float(self.optimizer.param_groups[0]["lr"])
            self.optimizer.step()
            self.scheduler.step()
            total += float(loss.detach())
        return self.ctx.mean(total / len(self.sampler), self.device), lr

    @torch.no_grad()
    def errors(self, module: nn.Module, dataset: torch.utils.data.Dataset) -> np.ndarray:
        """Per-sample relative L2 errors of ``module`` on ``dataset`` (eval mode)."""
        module.eval()
        loader = torch.utils.data.DataLoader(dataset, batch_size=self.config.eval_batch_size)
        out = [
            relative_l2(module(b["input"].to(self.device)).to("cpu", torch.float64).numpy(),
                        b["target"].to(torch.float64).numpy())
            for b in loader
        ]
        return np.concatenate(out)

    def fit(
        self,
        *,
        max_epochs_this_call: int | None = None,
        callback: Callable[[Trainer, dict[str, Any]], None] | None = None,
    ) -> dict[str, Any]:
        """Train until ``config.epochs`` (or ``max_epochs_this_call`` more epochs).

        Parameters
        ----------
        max_epochs_this_call : int, optional
            Stop after this many epochs (the run stays resumable).
        callback : callable, optional
            Called as ``callback(trainer, row)`` after each epoch's checkpoint is written.

        Returns
        -------
        dict
            ``finished``, ``epochs_completed``, ``best_epoch``, ``best_val_rel_l2`` and, when
            finished, ``test_rel_l2_best`` and ``test_rel_l2_final`` (mean relative L2).
        """
        cfg = self.config
        identity = self._identity_value
        old_det = torch.are_deterministic_algorithms_enabled()
        if cfg.deterministic:
            if self.device.type == "cuda":
                os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
            torch.use_deterministic_algorithms(True)
        bar = self._progress()
        stop = cfg.epochs if max_epochs_this_call is None else min(
            cfg.epochs, self.epoch + max_epochs_this_call
        )
        try:
            while self.epoch < stop:
                t0 = time.perf_counter()
                loss, lr = self._train_epoch()
                val = None
                if self.ctx.is_main:
                    val = float(self.errors(self.forward_module, self.data.val).mean())
                self.epoch += 1
                row = self._record(loss, val, lr, time.perf_counter() - t0, identity)
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(loss=f"{loss:.3e}", val=f"{val:.3e}", lr=f"{lr:.2e}")
                elif self.ctx.is_main:
                    _log.info("epoch %d/%d loss %.4e val %.4e lr %.3e (%.1fs)", self.epoch,
                              cfg.epochs, loss, val, lr, row["epoch_time_s"])
                if callback is not None:
                    callback(self, row)
        finally:
            if bar is not None:
                bar.close()
            torch.use_deterministic_algorithms(old_det)
        return self._finish()

    def _record(self, loss: float, val: float | None, lr: float, dt: float,
                identity: dict[str, Any]) -> dict[str, Any]:
        row = {"epoch": self.epoch, "train_loss": loss, "val_rel_l2": val, "lr": lr,
               "epoch_time_s": dt}
        if self.ctx.is_main:
            for key in self.history:
                self.history[key].append(row[key])
            if val < self.best_val:
                self.best_val, self.best_epoch = val, self.epoch
                payload = ck.operator_payload(self.operator, extra={
                    "epoch": self.epoch, "val_rel_l2": val, "preset": self.preset,
                    "task": self.config.task, "resolution": self.data.resolution,
                })
                ck.save_atomic(payload, self.run_dir / ck.BEST)
            self._save_last(identity)
            ck.write_metrics_csv(self.history, self.run_dir / ck.METRICS)
        self.ctx.barrier()
        return row

    def _progress(self) -> Any:
        if not self.ctx.is_main or not sys.stderr.isatty():
            return None
        from tqdm.auto import tqdm

        return tqdm(total=self.config.epochs, initial=self.epoch, desc="epochs", unit="ep",
                    dynamic_ncols=True)

    def _finish(self) -> dict[str, Any]:
        finished = self.epoch >= self.config.epochs
        out: dict[str, Any] = {
            "finished": finished, "epochs_completed": self.epoch, "best_epoch": self.best_epoch,
            "best_val_rel_l2": self.best_val,
        }
        if self.ctx.is_main and self.history["train_loss"]:
            title = f"{self.preset or self.model_config.family} (n={self.data.resolution})"
            ck.write_loss_curve(self.history, self.run_dir / ck.CURVE, title=title)
        if finished and self.ctx.is_main:
            best_payload = torch.load(self.run_dir / ck.BEST, map_location="cpu", weights_only=True)
            best = ck.build_operator(best_payload).to(self.device)
            best_fwd = AmpForward(best, amp=self.config.amp, device_type=self.device.type)
            out["test_rel_l2_best"] = float(self.errors(best_fwd, self.data.test).mean())
            out["test_rel_l2_final"] = float(self.errors(self.forward_module, self.data.test).mean())
            out["val_rel_l2_final"] = self.history["val_rel_l2"][-1]
        if self.ctx.is_main:
            results = {k: out[k] for k in ("test_rel_l2_best", "test_rel_l2_final",
                                            "val_rel_l2_final") if k in out}
            info = self.run_info(status="finished" if finished else "interrupted", results=results)
            ck.write_json(info, self.run_dir / ck.RUN_JSON)
        self.ctx.barrier()
        return out

    def close(self) -> None:
        """Tear down a process group this trainer created."""
        self.ctx.close()

    def __enter__(self) -> Trainer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
