"""Experiment logs (``--log``): TensorBoard events, MLflow runs and W&B runs read back."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from neuralop_fem.errors import ConfigError
from neuralop_fem.models import PRESETS
from neuralop_fem.training import TrainConfig, Trainer
from neuralop_fem.training.loggers import ExperimentLogger, make_logger, tracking_uri

from ..test_cli_errors import run_cli
from .conftest import TINY_BURGERS

CFG = TrainConfig(task="burgers", epochs=2, batch_size=4, n_train=12, n_val=4, n_test=4,
                  resolution=32)
MODEL = PRESETS["burgers-galerkin"].replace(**{**TINY_BURGERS, "num_layers": 1})


def _scalars(log_dir) -> dict[str, list[tuple[int, float]]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(log_dir), size_guidance={"scalars": 0})
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def _metrics(run_dir) -> list[dict[str, str]]:
    with (run_dir / "metrics.csv").open() as fh:
        return list(csv.DictReader(fh))


def test_train_log_tensorboard_writes_what_metrics_csv_holds(tmp_path, burgers_file):
    pytest.importorskip("tensorboard")
    run = tmp_path / "run"
    proc = run_cli(["train", "--data", str(burgers_file), "--preset", "burgers-galerkin",
                    "--out", str(run), "--epochs", "2", "--resolution", "32", "--batch-size",
                    "4", "--n-train", "12", "--n-val", "4", "--n-test", "4", "--log",
                    "tensorboard", "--set", "num_layers=1", "--set", "d_model=16"])
    assert proc.returncode == 0, proc.stderr
    scalars = _scalars(run / "tensorboard")
    rows = _metrics(run)
    for key, tag in (("train_loss", "train/loss"), ("val_rel_l2", "val/rel_l2"),
                     ("lr", "train/lr")):
        assert [s for s, _ in scalars[tag]] == [1, 2]
        for (_, value), row in zip(scalars[tag], rows, strict=True):
            assert value == pytest.approx(float(row[key]), rel=1e-6)  # stored as float32
    steps = scalars["train/loss_step"]
    assert [s for s, _ in steps] == list(range(1, 7))  # 2 epochs x 3 batches
    # the epoch's loss is the mean of its steps' losses
    assert sum(v for _, v in steps[:3]) / 3 == pytest.approx(float(rows[0]["train_loss"]),
                                                             rel=1e-5)
    info = json.loads((run / "run.json").read_text())
    assert info["status"] == "finished"
    # docs/training.md draws a log's scalars with python -m benchmarks.plot_tensorboard_run
    root = Path(__file__).parents[2]
    png = tmp_path / "tb.png"
    proc = subprocess.run([sys.executable, "-m", "benchmarks.plot_tensorboard_run",
                           str(run / "tensorboard"), "--out", str(png)], cwd=root,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"wrote {png}\n"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_resumed_run_continues_its_log(tmp_path, burgers_file):
    pytest.importorskip("tensorboard")
    run = tmp_path / "run"
    for _ in range(2):
        with Trainer(run, burgers_file, model_config=MODEL, config=CFG) as trainer:
            logger = make_logger("tensorboard", run, hparams=CFG.to_dict())
            assert isinstance(logger, ExperimentLogger)
            trainer.fit(max_epochs_this_call=1, logger=logger)
            logger.close()
    scalars = _scalars(run / "tensorboard")
    assert [s for s, _ in scalars["train/loss"]] == [1, 2]
    assert [s for s, _ in scalars["train/loss_step"]] == list(range(1, 7))
    rows = _metrics(run)
    assert [v for _, v in scalars["train/loss"]] == pytest.approx(
        [float(r["train_loss"]) for r in rows], rel=1e-6)


# mlflow's own SQLAlchemy queries use loader options SQLAlchemy 2.1 deprecates (not ours).
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_mlflow_sqlite_store_reads_back(tmp_path, burgers_file):
    pytest.importorskip("mlflow")
    import mlflow

    run = tmp_path / "run"
    with Trainer(run, burgers_file, model_config=MODEL, config=CFG) as trainer:
        logger = make_logger("mlflow", run, hparams={"lr_max": CFG.lr_max})
        trainer.fit(logger=logger)
        logger.close()
    client = mlflow.MlflowClient(tracking_uri=tracking_uri(run / "mlflow.db"))
    exp = client.get_experiment_by_name("neuralop-fem")
    (found,) = client.search_runs([exp.experiment_id])
    assert found.data.params["lr_max"] == str(CFG.lr_max)
    history = client.get_metric_history(found.info.run_id, "val/rel_l2")
    rows = _metrics(run)
    assert [m.step for m in history] == [1, 2]
    assert [m.value for m in history] == pytest.approx([float(r["val_rel_l2"]) for r in rows])
    assert len(client.get_metric_history(found.info.run_id, "train/loss_step")) == 6


def _wandb_history(path) -> list[dict]:
    """The ``history`` records of an offline W&B run file (a LevelDB-style record log: a
    7-byte header, 32 KiB blocks of records with a 7-byte header each: CRC, length, type)."""
    import struct

    from wandb.proto import wandb_internal_pb2 as pb

    data = path.read_bytes()
    assert data[:4] == b":W&B"
    pos, block, buf, out = 7, 32768, b"", []
    while pos + 7 <= len(data):
        left = block - pos % block
        _crc, length, kind = struct.unpack("<IHB", data[pos:pos + 7])
        if left < 7 or (length == 0 and kind == 0):  # block trailer / padding
            pos += left
            continue
        buf += data[pos + 7:pos + 7 + length]
        pos += 7 + length
        if kind in (1, 4):  # a full record, or the last piece of one
            record = pb.Record()
            record.ParseFromString(buf)
            buf = b""
            if record.WhichOneof("record_type") == "history":
                out.append({i.key or "/".join(i.nested_key): json.loads(i.value_json)
                            for i in record.history.item})
    return out


def test_wandb_offline_run_reads_back(tmp_path, burgers_file, monkeypatch):
    pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_SILENT", "true")
    run = tmp_path / "run"
    with Trainer(run, burgers_file, model_config=MODEL, config=CFG) as trainer:
        logger = make_logger("wandb", run, hparams={"lr_max": CFG.lr_max})
        trainer.fit(logger=logger)
        logger.close()
    (path,) = (run / "wandb").glob("wandb/offline-run-*/run-*.wandb")
    history = _wandb_history(path)
    epochs = [h for h in history if "epoch" in h]
    assert [h["epoch"] for h in epochs] == [1, 2]
    assert [h["val/rel_l2"] for h in epochs] == pytest.approx(
        [float(r["val_rel_l2"]) for r in _metrics(run)])
    assert [h["step"] for h in history if "step" in h] == list(range(1, 7))


def test_unknown_logger_is_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"`log` must be one of 'tensorboard', 'mlflow', "
                                          r"'wandb'; got 'csv'"):
        make_logger("csv", tmp_path, hparams={})


def test_a_missing_backend_is_refused_before_the_run_directory_exists(tmp_path, burgers_file,
                                                                      monkeypatch, capsys):
    """``--log`` whose package is not installed: one line naming the extra, exit 2, and no
    run directory (not one whose run.json says ``running`` forever)."""
    import importlib.util

    from neuralop_fem.cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "tensorboard" else real(name, *a))
    run = tmp_path / "run"
    status = main(["train", "--data", str(burgers_file), "--preset", "burgers-galerkin", "--out",
                   str(run), "--epochs", "1", "--resolution", "32", "--n-train", "12",
                   "--n-val", "4", "--n-test", "4", "--log", "tensorboard"])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1
    assert "pip install 'neuralop-fem[tensorboard]'" in err
    assert not run.exists()
