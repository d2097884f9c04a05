"""Experiment logs of a training run: TensorBoard, MLflow, Weights & Biases (docs/training.md).

One interface, :class:`ExperimentLogger`, fed by :meth:`Trainer.fit
<neuralop_fem.training.Trainer.fit>`: :meth:`~ExperimentLogger.log_step` after every optimizer
step (training loss and learning rate, at the run's global step) and
:meth:`~ExperimentLogger.log_epoch` after every epoch (the row of ``metrics.csv``). Every
backend writes to local files only, never to the network:

* ``tensorboard``: event files in ``RUN_DIR/tensorboard`` (``torch.utils.tensorboard``; needs
  the ``tensorboard`` package, the ``tensorboard`` extra);
* ``mlflow``: a local SQLite store ``RUN_DIR/mlflow.db`` (the ``mlflow`` extra;
  ``mlflow ui --backend-store-uri sqlite:///RUN_DIR/mlflow.db``);
* ``wandb``: an offline run in ``RUN_DIR/wandb`` (the ``wandb`` extra; ``wandb sync`` uploads
  it later).

Scalar names: ``train/loss_step`` and ``train/lr_step`` per step; ``train/loss``,
``val/rel_l2``, ``train/lr`` and ``time/epoch_s`` per epoch. A resumed run appends to the
same log (steps and epochs continue where the last checkpoint left them; steps logged after
that checkpoint by the killed process appear twice in TensorBoard, once per process).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..errors import ConfigError

__all__ = ["EPOCH_SCALARS", "LOGGERS", "ExperimentLogger", "MLflowLogger", "TensorBoardLogger",
           "WandbLogger", "check_backend", "make_logger", "tracking_uri"]

#: EpochRow key -> scalar name.
EPOCH_SCALARS = {"train_loss": "train/loss", "val_rel_l2": "val/rel_l2", "lr": "train/lr",
                 "epoch_time_s": "time/epoch_s"}


@runtime_checkable
class ExperimentLogger(Protocol):
    """What :meth:`Trainer.fit <neuralop_fem.training.Trainer.fit>` calls."""

    def log_step(self, step: int, loss: float, lr: float) -> None:
        """After optimizer step ``step`` (1-based, counted over the whole run)."""

    def log_epoch(self, row: Mapping[str, Any]) -> None:
        """After an epoch: ``row`` has ``epoch`` and the keys of :data:`EPOCH_SCALARS`."""

    def close(self) -> None:
        """Flush and close the log."""


def _epoch_scalars(row: Mapping[str, Any]) -> dict[str, float]:
    return {name: float(row[key]) for key, name in EPOCH_SCALARS.items()
            if row.get(key) is not None}


def _missing(package: str) -> ConfigError:
    return ConfigError(f"`log` {package!r} needs the {package!r} package, which is not "
                       f"installed (pip install 'neuralop-fem[{package}]').")


class TensorBoardLogger:
    """Event files for TensorBoard under ``log_dir`` (``tensorboard --logdir log_dir``)."""

    def __init__(self, log_dir: str | os.PathLike[str], *, hparams: Mapping[str, Any]) -> None:
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:
            error = _missing("tensorboard")
            raise error from None
        self.log_dir = Path(log_dir)
        self._writer = SummaryWriter(log_dir=os.fspath(self.log_dir))
        self._writer.add_text("config", "\n".join(f"    {k}: {v}" for k, v in hparams.items()))

    def log_step(self, step: int, loss: float, lr: float) -> None:
        self._writer.add_scalar("train/loss_step", loss, step)
        self._writer.add_scalar("train/lr_step", lr, step)

    def log_epoch(self, row: Mapping[str, Any]) -> None:
        for name, value in _epoch_scalars(row).items():
            self._writer.add_scalar(name, value, int(row["epoch"]))
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()


class MLflowLogger:
    """An MLflow run in the local SQLite database ``store`` (``mlflow ui --backend-store-uri
    sqlite:///STORE``)."""

    def __init__(self, store: str | os.PathLike[str], *, run_name: str,
                 hparams: Mapping[str, Any]) -> None:
        try:
            import mlflow
        except ImportError:
            error = _missing("mlflow")
            raise error from None
        self.store = Path(store)
        self._client = mlflow.MlflowClient(tracking_uri=tracking_uri(self.store))
        name = "neuralop-fem"
        exp = self._client.get_experiment_by_name(name)
        exp_id = exp.experiment_id if exp is not None else self._client.create_experiment(name)
        runs = self._client.search_runs([exp_id], filter_string=f"tags.run_dir = '{run_name}'")
        if runs:  # a resumed run continues its MLflow run
            self._run_id = runs[0].info.run_id
        else:
            run = self._client.create_run(exp_id, run_name=Path(run_name).name,
                                          tags={"run_dir": run_name})
            self._run_id = run.info.run_id
            for key, value in hparams.items():
                self._client.log_param(self._run_id, key, str(value)[:500])

    def log_step(self, step: int, loss: float, lr: float) -> None:
        self._client.log_metric(self._run_id, "train/loss_step", loss, step=step)
        self._client.log_metric(self._run_id, "train/lr_step", lr, step=step)

    def log_epoch(self, row: Mapping[str, Any]) -> None:
        for name, value in _epoch_scalars(row).items():
            self._client.log_metric(self._run_id, name, value, step=int(row["epoch"]))

    def close(self) -> None:
        with contextlib.suppress(Exception):  # a finished run may be closed twice
            self._client.set_terminated(self._run_id)


class WandbLogger:
    """A Weights & Biases run in offline mode under ``directory`` (no network)."""

    def __init__(self, directory: str | os.PathLike[str], *, run_name: str,
                 hparams: Mapping[str, Any]) -> None:
        try:
            import wandb
        except ImportError:
            error = _missing("wandb")
            raise error from None
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._run = wandb.init(project="neuralop-fem", name=Path(run_name).name,
                               dir=os.fspath(self.directory), mode="offline",
                               config=dict(hparams), reinit=True)

    def log_step(self, step: int, loss: float, lr: float) -> None:
        self._run.log({"train/loss_step": loss, "train/lr_step": lr, "step": step})

    def log_epoch(self, row: Mapping[str, Any]) -> None:
        self._run.log({**_epoch_scalars(row), "epoch": int(row["epoch"])})

    def close(self) -> None:
        self._run.finish()


#: ``--log`` names -> the directory each writes inside the run directory.
LOGGERS = {"tensorboard": "tensorboard", "mlflow": "mlflow.db", "wandb": "wandb"}


#: ``--log`` names -> the package each backend needs.
_PACKAGES = {"tensorboard": "tensorboard", "mlflow": "mlflow", "wandb": "wandb"}


def check_backend(name: str) -> None:
    """Check, without importing it, that the package of the logger ``name`` is installed, so
    that a command refuses a missing backend before it creates a run directory.

    Raises
    ------
    ConfigError
        An unknown name (the message lists them) or a backend whose package is not installed
        (the message names the extra to install).
    """
    if name not in LOGGERS:
        msg = f"`log` must be one of {', '.join(map(repr, LOGGERS))}; got {name!r}."
        raise ConfigError(msg)
    if importlib.util.find_spec(_PACKAGES[name]) is None:
        raise _missing(_PACKAGES[name])


def tracking_uri(store: str | os.PathLike[str]) -> str:
    """The MLflow tracking URI of the SQLite database file ``store``."""
    return "sqlite:///" + Path(store).resolve().as_posix()


def make_logger(name: str, run_dir: str | os.PathLike[str], *,
                hparams: Mapping[str, Any]) -> ExperimentLogger:
    """The logger ``name`` (a key of :data:`LOGGERS`) writing inside ``run_dir``.

    Raises
    ------
    ConfigError
        An unknown name (the message lists them) or a backend whose package is not installed
        (the message names the extra to install).
    """
    check_backend(name)
    run_dir = Path(run_dir)
    where = run_dir / LOGGERS[name]
    if name == "tensorboard":
        return TensorBoardLogger(where, hparams=hparams)
    if name == "mlflow":
        return MLflowLogger(where, run_name=os.path.abspath(run_dir), hparams=hparams)
    return WandbLogger(where, run_name=os.path.abspath(run_dir), hparams=hparams)
