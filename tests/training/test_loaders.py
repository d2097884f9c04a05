"""Training data on the device (``data_on_device``): the same batches as per-sample loading.

On the CPU ``data_on_device="on"`` stacks the splits in host memory through the same code a
GPU uses, so the runs below check the GPU path's arithmetic here: a run with the data stacked
must equal, bit for bit (CPU, one thread, dropout on), the per-sample run of the same settings,
also when it is stopped within an epoch and resumed with the other setting.
"""

from __future__ import annotations

import dataclasses
import logging

import pytest
import torch
from torch.utils.data import default_collate

from neuralop_fem.cli import main
from neuralop_fem.data import BurgersDataset, DarcyDataset, DarcyInverseDataset
from neuralop_fem.errors import ConfigError
from neuralop_fem.models import PRESETS
from neuralop_fem.training import TrainConfig, Trainer, read_run_info
from neuralop_fem.training import loaders as rd

from .conftest import TINY_BURGERS, TINY_DARCY, set_args
from .test_partial_checkpoint import _assert_same_run, _interrupt_after, _Stop

CPU = torch.device("cpu")
DROPOUT = {"encoder_dropout": 0.1, "ffn_dropout": 0.1}
BURGERS_MODEL = dataclasses.replace(PRESETS["burgers-galerkin"], **TINY_BURGERS, **DROPOUT)
DARCY_MODEL = PRESETS["darcy-galerkin"].replace(**TINY_DARCY)


def _burgers(**changes) -> TrainConfig:
    settings = dict(task="burgers", epochs=2, batch_size=2, n_train=12, n_val=4, n_test=4,
                    resolution=64, threads=1, gamma=0.1, checkpoint_minutes=0)
    return TrainConfig(**{**settings, **changes})


def _darcy(**changes) -> TrainConfig:
    return TrainConfig(task="darcy", epochs=2, batch_size=2, n_train=8, n_val=3, n_test=3,
                       gamma=0.5, threads=1, checkpoint_minutes=0, **changes)


def _datasets(burgers_file, darcy_file):
    return {
        "burgers": BurgersDataset(burgers_file, resolution=64, indices=range(6), in_memory=True),
        "darcy": DarcyDataset(darcy_file, indices=range(5), in_memory=True),
        "inverse": DarcyInverseDataset(darcy_file, n_fine=15, n_coarse=8, indices=range(5),
                                       in_memory=True),
    }


@pytest.mark.parametrize("name", ["burgers", "darcy", "inverse"])
def test_resident_batches_equal_the_collated_items(burgers_file, darcy_file, name):
    dataset = _datasets(burgers_file, darcy_file)[name]
    stacked = rd.ResidentDataset(dataset, rd.BATCH_KEYS, CPU)
    assert len(stacked) == len(dataset)
    keys = [k for k in rd.BATCH_KEYS if k in dataset[0]]
    assert stacked.keys == tuple(keys)
    for indices in ([3, 0, 4], [1], list(range(len(dataset)))):
        want = default_collate([dataset[i] for i in indices])
        got = stacked.__getitems__(indices)
        assert sorted(got) == sorted(keys)
        for k in keys:
            assert got[k].dtype == want[k].dtype
            assert torch.equal(got[k], want[k]), (name, k)
    for k in keys:
        assert torch.equal(stacked[2][k], dataset[2][k])
    loader = rd.eval_loader(stacked, batch_size=2)
    n = len(dataset)
    batches = list(loader)
    assert [b["input"].shape[0] for b in batches] == [min(2, n - i) for i in range(0, n, 2)]
    assert torch.equal(torch.cat([b["target"] for b in batches]),
                       torch.stack([dataset[i]["target"] for i in range(n)]))


def test_resident_data_fills_in_chunks(burgers_file, monkeypatch):
    monkeypatch.setattr(rd, "_CHUNK", 4)  # 10 items: chunks of 4, 4 and 2
    dataset = BurgersDataset(burgers_file, resolution=64, indices=range(10), in_memory=True)
    stacked = rd.ResidentDataset(dataset, rd.BATCH_KEYS, CPU)
    for k in stacked.keys:
        assert torch.equal(stacked.tensors[k], torch.stack([dataset[i][k] for i in range(10)]))


def test_the_choice_of_where_the_data_lives(monkeypatch):
    assert rd.use_resident("auto", CPU, 10)[0] is False
    assert rd.use_resident("on", CPU, 10)[0] is True
    on, why = rd.use_resident("off", torch.device("cuda:0"), 10)
    assert not on
    assert "data_on_device=off" in why
    gpu = torch.device("cuda:0")
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device: (8 * 2**30, 80 * 2**30))
    on, why = rd.use_resident("auto", gpu, 2 * 2**30)  # exactly a quarter of the free memory
    assert on
    assert "25.0% of the free memory" in why
    on, why = rd.use_resident("auto", gpu, 2 * 2**30 + 1)
    assert not on
    assert "more than 25% of the 8.0 GiB free on cuda:0" in why
    with pytest.raises(ConfigError, match="`data_on_device` must be one of 'auto', 'on', 'off'; "
                                          "got 'yes'"):
        rd.use_resident("yes", CPU, 10)
    with pytest.raises(ConfigError, match="`data_on_device` must be one of"):
        TrainConfig(task="burgers", data_on_device="always")


def _fit(run, data, model, config) -> Trainer:
    with Trainer(run, data, model_config=model, config=config) as trainer:
        trainer.fit()
    return trainer


@pytest.mark.parametrize("problem", ["burgers", "darcy"])
def test_a_run_with_the_data_stacked_equals_the_per_sample_run(tmp_path, burgers_file,
                                                               darcy_file, problem, caplog,
                                                               monkeypatch):
    data, model, config = ((burgers_file, BURGERS_MODEL, _burgers) if problem == "burgers"
                           else (darcy_file, DARCY_MODEL, _darcy))
    # an earlier command line in this process may have stopped "neuralop_fem" records from
    # reaching the root logger (and caplog)
    monkeypatch.setattr(logging.getLogger("neuralop_fem"), "propagate", True)
    caplog.set_level("INFO", logger="neuralop_fem.training.trainer")
    per_sample = _fit(tmp_path / "off", data, model, config(data_on_device="off"))
    assert isinstance(per_sample.val_data, type(per_sample.data.val))
    assert "per-sample loading (data_on_device=off)" in caplog.text
    stacked = _fit(tmp_path / "on", data, model, config(data_on_device="on"))
    assert isinstance(stacked.val_data, rd.ResidentDataset)
    assert "training data on cpu" in caplog.text
    assert read_run_info(tmp_path / "on")["train_config"]["data_on_device"] == "on"
    _assert_same_run(tmp_path / "on", tmp_path / "off")


def test_a_stopped_run_resumes_with_the_other_setting_bitwise(tmp_path, burgers_file,
                                                              monkeypatch):
    reference = tmp_path / "reference"
    _fit(reference, burgers_file, BURGERS_MODEL, _burgers(data_on_device="off"))
    run = tmp_path / "run"
    _interrupt_after(monkeypatch, 3)  # within epoch 1, after 3 of its 6 batches
    with pytest.raises(_Stop):
        _fit(run, burgers_file, BURGERS_MODEL,
             _burgers(data_on_device="on", checkpoint_minutes=1e-9))
    monkeypatch.undo()
    with Trainer(run, burgers_file, model_config=BURGERS_MODEL,
                 config=_burgers(data_on_device="off")) as trainer:
        assert trainer.within["batches_done"] == 3
        trainer.fit()
    _assert_same_run(run, reference)


def test_the_command_line_option(tmp_path, burgers_file, capsys):
    args = ["train", "--data", str(burgers_file), "--preset", "burgers-galerkin",
            "--resolution", "64", "--batch-size", "4", "--epochs", "1", "--n-train", "8",
            "--n-val", "4", "--n-test", "4", *set_args(TINY_BURGERS)]
    run = tmp_path / "run"
    assert main([*args, "--out", str(run), "--data-on-device", "on"]) == 0
    assert read_run_info(run)["train_config"]["data_on_device"] == "on"
    # (8 training + 4 validation samples) x 64 points x (input, target, its gradient) x 4 bytes
    kib = (8 + 4) * 64 * 3 * 4 // 1024
    assert f"training data on cpu ({kib} KiB; data_on_device=on)" in capsys.readouterr().out
    assert main([*args, "--out", str(tmp_path / "default")]) == 0
    assert "data_on_device" not in capsys.readouterr().out  # the CPU default is not news
    assert main([*args, "--out", str(tmp_path / "bad"), "--data-on-device", "always"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "--data-on-device" in err[0]
    assert "'always'" in err[0]
    assert not (tmp_path / "bad").exists()
