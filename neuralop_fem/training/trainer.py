r"""The :class:`Trainer`: one training run in a run directory, resumable, single or multi-process.

Optimisation (Cao 2021; docs/training.md): by default Adam without weight decay, torch
``OneCycleLR`` stepped after every batch (cosine, momentum cycling :math:`\beta_1` 0.95 -> 0.85
-> 0.95); other optimisers, schedules, early stopping and gradient accumulation are chosen by
the config (:mod:`.optim`). Total-norm gradient clipping, loss
:func:`~neuralop_fem.training.losses.operator_loss` with the config's :math:`\gamma`
(coefficient-weighted H1 term for Darcy). After every epoch: an epoch whose loss blew up is
undone (:mod:`.divergence`), the validation relative L2 error of the others decides ``best.pt``.
At the end the test error of that model and of the final epoch are reported.

Resume: ``last.pt`` is written (atomically) after every epoch with the model, optimizer,
scheduler, history and every RNG state, and ``partial.pt`` within an epoch every
``checkpoint_minutes`` (:mod:`.partial_checkpoint`), so a run killed at any point - in an epoch,
between the files of one checkpoint, or while the test errors are computed - and started again
with the same arguments finishes with bitwise the same weights and metrics (on CPU). Every file of
the run directory is read back as untrusted (:mod:`.resume`, :class:`~neuralop_fem.runs.RunDir`).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import xarray as xr
from torch import nn

from ..environment import code_version
from ..errors import ConfigError, RunDirectoryError
from ..models import MODEL_FAMILIES, NormalizedOperator
from ..models.presets import ModelConfig
from ..runs import RunDir, RunRecord
from ..runs.train_config import RESUME_FREE_FIELDS, TrainConfig, added_defaults
from . import checkpoint as ck
from . import divergence as dv
from . import optim, run_state
from . import partial_checkpoint as we
from . import resume as rs
from .amp import AmpChoice, AmpForward, bf16_deviation, bf16_warnings, resolve_amp, resumed
from .augment import training_augmenter
from .data_identity import with_moved_data
from .determinism import enable_deterministic
from .distributed import DistContext, GlobalBatchSampler
from .loaders import split_errors, training_loader
from .loss_readout import LossReadout, readout_interval
from .losses import operator_loss
from .optim import make_optimizer, make_scheduler
from .progress import TrainingProgress, training_warnings
from .setup import TrainingData, build_training_data, check_problem, open_data

if TYPE_CHECKING:  # pragma: no cover
    from .loggers import ExperimentLogger

__all__ = ["AmpForward", "Trainer", "make_optimizer", "make_scheduler"]

_log = logging.getLogger(__name__)


class Trainer:
    """Train one model on one dataset into ``run_dir`` (see :mod:`.checkpoint` for the layout).

    Parameters
    ----------
    run_dir : path
        Output directory (created; not a symbolic link), locked from construction to the end
        of :meth:`fit` (or :meth:`close`): a second trainer on it, in this or another process,
        is refused at once. If it holds an unfinished run with the same settings, it resumes
        from ``last.pt`` (a run killed after its last epoch only computes its test errors); a
        finished run (``run.json`` status ``"finished"``) is refused unless ``overwrite``; a
        run with other settings is refused naming the differing fields; a damaged ``last.pt``
        or a trainer file that is a symbolic link is a
        :class:`~neuralop_fem.errors.RunDirectoryError`.
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
        model_config: ModelConfig,
        config: TrainConfig,
        preset: str | None = None,
        overwrite: bool = False,
    ) -> None:
        if not isinstance(config, TrainConfig):
            msg = f"`config` must be a TrainConfig; got {type(config).__name__}."
            raise ConfigError(msg)
        family = getattr(model_config, "family", None)
        if family not in MODEL_FAMILIES or type(model_config) is not MODEL_FAMILIES[family][0]:
            msg = ("`model_config` must be a neuralop_fem.models config; "
                   f"got {type(model_config).__name__}.")
            raise ConfigError(msg)
        self.run_dir = Path(run_dir)
        self.run = RunDir(self.run_dir)  # run.json, the lock, the file names
        self.ctx, self.device = DistContext.from_env(config.device)
        self.amp_choice: AmpChoice = resolve_amp(config.amp, self.device)  # in run.json too
        config = config.replace(amp=self.amp_choice.amp)
        self.config, self.model_config, self.preset = config, model_config, preset
        self.t_start = time.perf_counter()
        path = None if isinstance(data, xr.Dataset) else data
        dataset = open_data(data)  # opened (and validated) once
        check_problem(dataset, config, preset=preset, source=path)  # before touching run_dir
        self._identity_value = self._identity(path)
        self._lock = None
        self._threads_before = torch.get_num_threads()  # given back by close()
        torch.set_num_threads(config.threads or self._threads_before)
        fresh = not self.run_dir.exists()  # created by this set-up: not left behind if it fails
        try:
            self._setup(dataset, path, overwrite=overwrite)
        except BaseException:
            self.close()
            if fresh:
                with contextlib.suppress(OSError):  # only while empty: no file of a run goes
                    self.run_dir.rmdir()
            raise

    def _setup(self, dataset: xr.Dataset, path: Any, *, overwrite: bool) -> None:
        resume = self._check_run_dir(dataset, path, overwrite=overwrite)
        config, model_config, preset = self.config, self.model_config, self.preset
        family = model_config.family
        if self.ctx.is_main:
            _log.info("%s", self.amp_choice.note)

        torch.manual_seed(config.seed)  # model initialisation
        model = MODEL_FAMILIES[family][1](model_config)
        self.data: TrainingData = build_training_data(dataset, config, model=model, preset=preset,
                                                      path=path)
        self.augmenter = training_augmenter(config.task, config.augment, self.data.grid,
                                            seed=config.seed, rank=self.ctx.rank)
        self.operator = NormalizedOperator(
            model, input_normalizer=self.data.input_normalizer,
            output_normalizer=self.data.output_normalizer, dirichlet=self.data.dirichlet,
        ).to(self.device)
        self.forward_module = AmpForward(self.operator, amp=config.amp,
                                         device_type=self.device.type)
        self.train_module: nn.Module = self.forward_module
        if self.ctx.distributed:
            ids = [self.device.index] if self.device.type == "cuda" else None
            self.train_module = nn.parallel.DistributedDataParallel(
                self.forward_module, device_ids=ids, broadcast_buffers=False)
        self.sampler = GlobalBatchSampler(
            len(self.data.train), config.batch_size, seed=config.seed,
            rank=self.ctx.rank, world_size=self.ctx.world_size)
        # per-sample loading or both splits on the device, bit for bit the same batches
        self.loader, self.val_data, self.data_path = training_loader(
            self.data.train, self.data.val, sampler=self.sampler, choice=config.data_on_device,
            device=self.device, num_workers=config.num_workers)
        if self.ctx.is_main:
            _log.info("%s", self.data_path)
        self.optimizer = make_optimizer(self.operator.parameters(), config)
        self.steps_per_epoch = optim.optimizer_steps_per_epoch(len(self.sampler), config)
        self.scheduler = make_scheduler(self.optimizer, config,
                                        steps_per_epoch=self.steps_per_epoch)
        self.epoch = 0
        self.history: dict[str, list[float]] = {
            k: [] for k in ("train_loss", "val_rel_l2", "lr", "epoch_time_s")}
        self.best_epoch, self.best_val, self.wall_time_before = 0, math.inf, 0.0
        self.logger: ExperimentLogger | None = None
        self.within: we.WithinEpoch | None = None  # from partial.pt, for the next epoch
        self.rollbacks: list[dv.Rollback] = []  # epochs undone by the divergence guard
        if resume is not None:
            self.load_state(resume)
            _log.info("resuming %s after epoch %d%s", self.run_dir, self.epoch, "" if
                      self.within is None else f" and batch {self.within['batches_done']} of "
                      f"{len(self.sampler)} of epoch {self.epoch + 1}")
        self.resumed_from = None if resume is None else self.epoch  # epochs done before
        self.code_history = rs.code_history((resume or {}).get("code_history"), code_version(),
                                            next_epoch=self.epoch + 1)
        if self.ctx.is_main:  # a resumed run records the epochs it restored at once
            self.run.write(self.run_record(status="running"))
        self.ctx.barrier()

    # -- run directory ---------------------------------------------------------------------
    def _identity(self, path: Any) -> dict[str, Any]:
        path = None if path is None else os.path.abspath(os.fspath(path))
        train = {k: v for k, v in self.config.to_dict().items() if k not in RESUME_FREE_FIELDS}
        return {
            "preset": self.preset, "data_path": path, **train,
            **{f"model.{k}": v for k, v in self.model_config.to_dict().items()},
        }

    def _check_run_dir(self, dataset: xr.Dataset, path: Any, *,
                       overwrite: bool) -> dict[str, Any] | None:
        """The ``last.pt`` state to resume from, None for a fresh run; refusals as documented."""
        self._lock = self.run.prepare(overwrite=overwrite, is_main=self.ctx.is_main)
        self.ctx.barrier()
        last = self.run_dir / ck.LAST
        if overwrite:
            return None
        status = self.run.recorded_status()
        state = rs.read_last(last) if last.exists() else None
        if state is None and status in ("finished", "finishing"):
            msg = (f"{self.run_dir} holds a finished run whose {ck.LAST} is missing; pass "
                   "overwrite=True to train it again.")
            raise ConfigError(msg)
        partial = we.read_partial(self.run_dir / ck.PARTIAL, is_main=self.ctx.is_main,
                                  completed=0 if state is None else state["epoch"])
        state, last = (state, last) if partial is None else (partial, self.run_dir / ck.PARTIAL)
        if state is None:
            return None
        recorded = {**added_defaults(state["identity"]), **state["identity"]}.get("amp")
        choice = resumed(self.amp_choice, recorded)  # auto: the precision the run started in
        if choice is not self.amp_choice:
            self.amp_choice, self.config = choice, self.config.replace(amp=choice.amp)
            self._identity_value = self._identity(path)
        identity = with_moved_data(self._identity_value, state["identity"],
                                   run_dir=self.run_dir, dataset=dataset, path=path)
        rs.check_resumable(state, last, config=self.config, identity=identity, status=status)
        return state

    def load_state(self, state: dict[str, Any]) -> None:
        """Restore a checked ``last.pt`` / ``partial.pt`` state (:func:`.resume.read_last`)."""
        source, steps_within = self.run_dir / ck.LAST, 0
        if "within_epoch" in state:  # partial.pt: replay the epoch's start, then skip
            source = self.run_dir / ck.PARTIAL
            self.within = we.check_within(state["within_epoch"], source, batches=len(
                self.sampler), accumulation=self.config.grad_accumulation)
            self.within_rng = state["rng"]  # set once the epoch's loader has started
            state = {**state, "rng": self.within["epoch_rng"]}
            steps_within = self.within["batches_done"] // self.config.grad_accumulation
        try:
            rollbacks = dv.check_rollbacks(state.get("rollbacks"), state["epoch"], source)
            (self.epoch, self.history, self.best_epoch, self.best_val, self.wall_time_before) = \
                rs.restore(state, source, operator=self.operator, optimizer=self.optimizer,
                           scheduler=self.scheduler, sampler=self.sampler, config=self.config,
                           steps_per_epoch=self.steps_per_epoch, steps_within=steps_within,
                           lr_scale=dv.lr_scale(rollbacks) / dv.lr_scale(self.rollbacks))
            self.rollbacks = rollbacks
        except RunDirectoryError as exc:
            raise (exc if self.within is None else we.with_remedy(exc, source)) from None

    def wall_time(self) -> float:
        """Seconds of training so far, this process's and those of the calls before."""
        return self.wall_time_before + time.perf_counter() - self.t_start

    def save_last(self, within: we.WithinEpoch | None = None) -> None:
        """``last.pt`` (after an epoch) or, with ``within``, ``partial.pt`` (within one)."""
        ck.save_atomic(run_state.resume_state(self, self._identity_value, within),
                       self.run_dir / (ck.LAST if within is None else ck.PARTIAL))

    def run_record(self, *, status: str,
                   results: Mapping[str, Any] | None = None) -> RunRecord:
        """The record of ``run.json`` (:func:`.run_state.run_record`)."""
        return run_state.run_record(self, status=status, results=results)

    # -- training ----------------------------------------------------------------------------
    def _batch(self, batch: dict[str, torch.Tensor], index: int) -> dict[str, torch.Tensor]:
        """The epoch's ``index``-th training batch on the device, moved by the problem's
        symmetries under ``augment="symmetries"`` (:mod:`.augment`)."""
        batch = {k: v.to(self.device, non_blocking=True) for k, v in batch.items()}
        return batch if self.augmenter is None else self.augmenter(batch, epoch=self.epoch,
                                                                   index=index)

    def _loss(self, pred: torch.Tensor, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        gamma = self.config.gamma
        return operator_loss(
            pred.float(), batch["target"],
            target_grad=batch.get("target_grad") if gamma > 0 else None,
            coefficient=batch.get("coefficient"),  # the H1 weight K: Darcy forward only
            gamma=gamma,
        )

    def _train_epoch(self, progress: TrainingProgress, t0: float) -> tuple[float, float]:
        """One epoch: an optimizer step after every ``grad_accumulation`` batches (and after
        the last batch), each loss divided by the size of its group. ``t0``: the epoch's start
        (``time.perf_counter``; earlier by the seconds a resumed epoch had run). The losses
        are read from the device in groups (:class:`.loss_readout.LossReadout`): on a GPU the
        host does not wait for each step to finish."""
        self.train_module.train()
        total, lr = 0.0, float("nan")
        k, n = self.config.grad_accumulation, len(self.sampler)
        per_step = self.config.scheduler not in optim.PER_EPOCH
        within, self.within = self.within, None
        # the RNG states before the loader draws its seed (a resumed epoch: the saved ones)
        epoch_rng = rs.capture_rng(self.sampler) if within is None else within["epoch_rng"]
        if within is not None:  # resumed from partial.pt
            total, lr = within["loss_sum"], within["lr"]
            self.sampler.skip = within["batches_done"]
        batches = iter(self.loader)
        if within is not None:
            rs.restore_rng(self.within_rng, None, self.run_dir / ck.PARTIAL)
        clock = we.CheckpointClock(0 if self.ctx.distributed else self.config.checkpoint_minutes)
        losses = LossReadout(readout_interval(self.device), progress.batch, total)
        for i, batch in enumerate(batches, start=0 if within is None else within["batches_done"]):
            batch = self._batch(batch, i)
            if i % k == 0:
                self.optimizer.zero_grad(set_to_none=True)
            pred = self.train_module(batch["input"])
            loss = self._loss(pred, batch)
            size = min(k, n - i // k * k)
            (loss / size).backward()
            losses.add(loss, size)
            if (i + 1) % k == 0 or i + 1 == n:
                if self.config.grad_clip > 0:
                    nn.utils.clip_grad_norm_(self.operator.parameters(), self.config.grad_clip)
                lr = float(self.optimizer.param_groups[0]["lr"])
                self.optimizer.step()
                if per_step:
                    self.scheduler.step()
                if self.logger is not None:  # reads the group's losses
                    self.logger.log_step(self.epoch * self.steps_per_epoch + i // k + 1,
                                         losses.take_group(), lr)
            if (i + 1) % k == 0 and i + 1 < n and clock.due():
                losses.flush()
                self.save_last(we.WithinEpoch(
                    batches_done=i + 1, loss_sum=losses.total, lr=lr, epoch_rng=epoch_rng,
                    elapsed_s=time.perf_counter() - t0))
                clock.reset()
        losses.flush()
        return self.ctx.mean(losses.total / n, self.device), lr

    def errors(self, module: nn.Module, dataset: torch.utils.data.Dataset) -> np.ndarray:
        """Per-sample relative L2 errors of ``module`` on ``dataset``
        (:func:`.loaders.split_errors`; the float32 operator also under ``amp="bf16"``)."""
        return split_errors(module, dataset, device=self.device,
                            batch_size=self.config.eval_batch_size)

    def fit(
        self,
        *,
        max_epochs_this_call: int | None = None,
        callback: Callable[[Trainer, ck.EpochRow], None] | None = None,
        logger: ExperimentLogger | None = None,
    ) -> dict[str, Any]:
        """Train until ``config.epochs`` (or ``max_epochs_this_call`` more epochs).

        Parameters
        ----------
        max_epochs_this_call : int, optional
            Stop after this many epochs (the run stays resumable).
        callback : callable, optional
            Called as ``callback(trainer, row)`` after each epoch's checkpoint is written
            (``row``: :class:`~neuralop_fem.training.checkpoint.EpochRow`).
        logger : ExperimentLogger, optional
            Receives every optimizer step's loss and learning rate and every epoch's row
            (main process only; :mod:`~neuralop_fem.training.loggers`); closed by the caller.

        Returns
        -------
        dict
            ``finished``, ``epochs_completed``, ``best_epoch``, ``best_val_rel_l2`` and, when
            finished, ``test_rel_l2_best``, ``test_rel_l2_final`` and ``warnings`` (run.json's).
        """
        cfg = self.config
        restore_determinism = enable_deterministic(cfg.deterministic, self.device.type)
        main = self.ctx.is_main  # per-batch progress: a bar on a terminal, else log lines
        progress = TrainingProgress(epochs=cfg.epochs, steps_per_epoch=len(self.sampler),
                                    done_epochs=self.epoch, bar=main and sys.stderr.isatty(),
                                    log=main)
        stop = cfg.epochs if max_epochs_this_call is None else min(
            cfg.epochs, self.epoch + max_epochs_this_call)
        if self._lock is None and self.ctx.is_main:  # a second fit() of this trainer
            self._lock = self.run.lock()
        self.logger = logger if self.ctx.is_main else None
        early = optim.stop_early(cfg, self.epoch, self.best_epoch, self.ctx)
        try:
            while self.epoch < stop and not early:
                done = self.within or {}  # a resumed epoch's progress (partial.pt)
                t0 = time.perf_counter() - done.get("elapsed_s", 0.0)
                progress.start_epoch(self.epoch + 1, done=done.get("batches_done", 0),
                                     loss_sum=done.get("loss_sum", 0.0))
                loss, lr = self._train_epoch(progress, t0)
                val = None
                if self.ctx.is_main:
                    val = float(self.errors(self.operator, self.val_data).mean())
                if dv.undo_diverged_epoch(self, loss, val):  # back to last.pt, at a lower lr
                    continue
                self.epoch += 1
                optim.step_epoch_schedule(self.scheduler, cfg, val, self.ctx)
                row = self._record(loss, val, lr, time.perf_counter() - t0)
                early = optim.stop_early(cfg, self.epoch, self.best_epoch, self.ctx)
                if self.logger is not None:
                    self.logger.log_epoch(row)
                progress.end_epoch(loss=loss, val=val, lr=lr)
                if progress.bar is None and self.ctx.is_main:
                    _log.info("epoch %d/%d loss %.4e val %.4e lr %.3e (%.1fs)", self.epoch,
                              cfg.epochs, loss, val, lr, row["epoch_time_s"])
                if callback is not None:
                    callback(self, row)
            return self._finish()
        finally:
            self.logger = None
            progress.close()
            restore_determinism()
            self._release()

    def _record(self, loss: float, val: float | None, lr: float, dt: float) -> ck.EpochRow:
        row: ck.EpochRow = {"epoch": self.epoch, "train_loss": loss, "val_rel_l2": val,
                            "lr": lr, "epoch_time_s": dt}
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
            self.save_last()
            (self.run_dir / ck.PARTIAL).unlink(missing_ok=True)  # older than last.pt now
            ck.write_metrics_csv(self.history, self.run_dir / ck.METRICS)
            self.run.write(self.run_record(status="running"))
        self.ctx.barrier()
        return row

    def _finish(self) -> dict[str, Any]:
        """Write the run's results; resumable: a kill here is finished by the next call.

        A finished run first records ``status: "finishing"``, rewrites ``metrics.csv`` and
        the loss curve from the history, then computes the test errors and records
        ``"finished"``. Everything is derived from ``last.pt`` and ``best.pt``, so a run killed
        in this phase and started again ends with the same files.
        """
        finished = self.epoch >= self.config.epochs or optim.stopped_early(
            self.config, epoch=self.epoch, best_epoch=self.best_epoch)
        out: dict[str, Any] = {
            "finished": finished, "epochs_completed": self.epoch, "best_epoch": self.best_epoch,
            "best_val_rel_l2": self.best_val,
        }
        if self.ctx.is_main and finished:
            self.run.write(self.run_record(status="finishing"))
            ck.write_metrics_csv(self.history, self.run_dir / ck.METRICS)
        if self.ctx.is_main and self.history["train_loss"]:
            title = f"{self.preset or self.model_config.family} (n={self.data.resolution})"
            ck.write_loss_curve(self.history, self.run_dir / ck.CURVE, title=title)
        if finished and self.ctx.is_main:
            out.update(self._test_errors())
            out["warnings"] = training_warnings(self.history["val_rel_l2"], self.best_epoch,
                                                log_as=str(self.run_dir)) + bf16_warnings(
                out.get("bf16_output_deviation"), out["test_rel_l2_best"], log_as=str(self.run_dir))
        if self.ctx.is_main:
            results = {k: out[k] for k in ("test_rel_l2_best", "test_rel_l2_final",
                                            "val_rel_l2_final", "bf16_output_deviation",
                                            "warnings") if k in out}
            self.run.write(self.run_record(status="finished" if finished else "interrupted",
                                           results=results))
        self.ctx.barrier()
        return out

    def _test_errors(self) -> dict[str, float]:
        """Mean test relative L2 of the selected model (``best.pt``) and of the final one."""
        path = self.run_dir / ck.BEST
        if not path.exists():
            msg = (f"{path}: missing; no epoch of this run had a finite validation error, or the "
                   "file was removed. Pass overwrite=True to train again.")
            raise RunDirectoryError(msg)
        best = ck.load_best(path).to(self.device)  # float32, as every later use of the model
        out = {
            "test_rel_l2_best": float(self.errors(best, self.data.test).mean()),
            "test_rel_l2_final": float(self.errors(self.operator, self.data.test).mean()),
            "val_rel_l2_final": self.history["val_rel_l2"][-1],
        }
        if self.config.amp == "bf16":  # how far the rounding the training saw moves the output
            out["bf16_output_deviation"] = bf16_deviation(
                best, self.data.test, device=self.device, batch_size=self.config.eval_batch_size)
        return out

    def _release(self) -> None:
        """Release the run directory: held from construction to the end of :meth:`fit`."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def close(self) -> None:
        """Release the run directory, end a process group it created, restore torch's threads."""
        self._release()
        self.ctx.close()
        torch.set_num_threads(self._threads_before)

    def __enter__(self) -> Trainer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
