"""Training on a CUDA device: fp32 and bf16, deterministic Darcy, resume, devices mixed.

Marked ``cuda``: skipped without a GPU (see tests/gpu/conftest.py for the CPU rehearsal).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import warnings

import pytest
import torch
from torch import nn

from neuralop_fem.models import PRESETS
from neuralop_fem.training import TrainConfig, Trainer, load_trained
from neuralop_fem.training.loaders import ResidentDataset

from .conftest import TINY_BURGERS, TINY_DARCY

pytestmark = pytest.mark.cuda

#: CUDA's warning for the backward of bilinear interpolation under deterministic algorithms.
NONDETERMINISTIC = "does not have a deterministic implementation"


def _burgers_config(device: torch.device, **changes) -> TrainConfig:
    settings = dict(task="burgers", epochs=2, batch_size=4, n_train=12, n_val=4, n_test=4,
                    resolution=64, gamma=0.1, device=str(device))
    return TrainConfig(**{**settings, **changes})


def _burgers_trainer(run_dir, data, config: TrainConfig) -> Trainer:
    return Trainer(run_dir, data, model_config=PRESETS["burgers-galerkin"].replace(**TINY_BURGERS),
                   config=config, preset="burgers-galerkin")


@pytest.mark.parametrize("amp", ["none", "bf16"])
def test_training_runs_on_the_device_in_fp32_and_bf16(tmp_path, burgers_file, device, amp):
    trainer = _burgers_trainer(tmp_path / "run", burgers_file, _burgers_config(device, amp=amp))
    seen: list[torch.dtype] = []
    linear = next(m for m in trainer.operator.model.modules() if isinstance(m, nn.Linear))
    hook = linear.register_forward_hook(lambda _m, _i, out: seen.append(out.dtype))
    with trainer:
        result = trainer.fit()
    hook.remove()
    # The model body runs under bf16 autocast; the parameters stay float32.
    assert set(seen) == {torch.bfloat16 if amp == "bf16" else torch.float32}
    assert all(p.dtype == torch.float32 and p.device.type == device.type
               for p in trainer.operator.parameters())
    assert result["finished"]
    assert all(math.isfinite(v) for v in trainer.history["train_loss"])
    assert math.isfinite(result["test_rel_l2_best"])
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["device"] == str(device)
    if device.type == "cuda":
        assert info["hardware"]["gpu"] == torch.cuda.get_device_name(device)
        assert info["versions"]["cuda"] == torch.version.cuda


def test_bf16_forward_agrees_with_fp32(tmp_path, burgers_file, device):
    from neuralop_fem.training.trainer import AmpForward

    trainer = _burgers_trainer(tmp_path / "run", burgers_file, _burgers_config(device, epochs=1))
    with trainer:
        trainer.fit()
    x = torch.stack([trainer.data.test[i]["input"] for i in range(4)]).to(device)
    op = trainer.operator.eval()
    with torch.no_grad():
        full = AmpForward(op, amp="none", device_type=device.type)(x)
        half = AmpForward(op, amp="bf16", device_type=device.type)(x)
    assert half.dtype == torch.float32
    # bf16 keeps 8 significant bits (relative rounding 2**-9 ~ 2e-3 per operation); through
    # two attention layers and the decoder the output moves by a few 1e-3, far under 5e-2.
    rel = float((half - full).norm() / full.norm())
    assert rel < 5e-2, rel


def _darcy_deterministic_run(run_dir, darcy_file, device) -> tuple[Trainer, dict, list]:
    config = TrainConfig(task="darcy", epochs=1, batch_size=2, n_train=8, n_val=2, n_test=2,
                         resolution=15, gamma=0.5, device=str(device), deterministic=True)
    trainer = Trainer(run_dir, darcy_file,
                      model_config=PRESETS["darcy-galerkin"].replace(**TINY_DARCY),
                      config=config, preset="darcy-galerkin")
    with trainer, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = trainer.fit()
    return trainer, result, [str(w.message) for w in caught]


def test_darcy_trains_with_deterministic_algorithms(tmp_path, darcy_file, device):
    """Darcy training under deterministic algorithms does not stop at the CiNN samplers'
    bilinear interpolation. Where torch has no deterministic CUDA backward for it, the run warns
    (and is not reproducible); where it has one (torch 2.11 on an H100, measured) and on the
    CPU, the run is silent and two runs agree bit for bit."""
    first, result, messages = _darcy_deterministic_run(tmp_path / "a", darcy_file, device)
    assert result["finished"]
    assert math.isfinite(result["test_rel_l2_best"])
    assert not torch.are_deterministic_algorithms_enabled()  # restored after fit
    unexpected = [m for m in messages if NONDETERMINISTIC not in m]
    assert not unexpected, unexpected
    if device.type != "cuda":
        assert not messages
    if messages:
        return  # a nondeterministic kernel ran: nothing to compare
    second, _, messages = _darcy_deterministic_run(tmp_path / "b", darcy_file, device)
    assert not messages
    assert second.history["train_loss"] == first.history["train_loss"]
    for key, value in first.operator.state_dict().items():
        assert torch.equal(second.operator.state_dict()[key], value), key


def test_resumed_run_equals_uninterrupted_run(tmp_path, burgers_file, device):
    config = _burgers_config(device)
    with _burgers_trainer(tmp_path / "straight", burgers_file, config) as straight:
        straight.fit()
    with _burgers_trainer(tmp_path / "resumed", burgers_file, config) as first:
        first.fit(max_epochs_this_call=1)
    with _burgers_trainer(tmp_path / "resumed", burgers_file, config) as second:
        assert second.epoch == 1
        second.fit()
    # Deterministic algorithms and the saved RNG states: the same weights, bit for bit.
    assert second.history == {**straight.history, "epoch_time_s": second.history["epoch_time_s"]}
    for key, value in straight.operator.state_dict().items():
        assert torch.equal(second.operator.state_dict()[key], value), key


def test_data_on_the_device_trains_the_same_run(tmp_path, burgers_file, device):
    """On a GPU ``data_on_device="auto"`` stacks the splits there; the run equals the
    per-sample one bit for bit."""
    trainers = {}
    for choice in ("auto", "off"):
        config = _burgers_config(device, data_on_device=choice)
        with _burgers_trainer(tmp_path / choice, burgers_file, config) as trainer:
            trainer.fit()
        trainers[choice] = trainer
    resident = trainers["auto"].val_data
    assert isinstance(resident, ResidentDataset) == (device.type == "cuda")
    if device.type == "cuda":
        assert resident.tensors["input"].device.type == "cuda"
    auto, off = trainers["auto"], trainers["off"]
    assert auto.history == {**off.history, "epoch_time_s": auto.history["epoch_time_s"]}
    for key, value in off.operator.state_dict().items():
        assert torch.equal(auto.operator.state_dict()[key], value), key


def test_device_checkpoint_loads_on_the_cpu_and_resumes_across_devices(tmp_path, burgers_file,
                                                                       device):
    run = tmp_path / "run"
    with _burgers_trainer(run, burgers_file, _burgers_config(device, epochs=3)) as trainer:
        trainer.fit(max_epochs_this_call=1)
    on_cpu, _ = load_trained(run, map_location="cpu")
    on_dev, _ = load_trained(run, map_location=device)
    assert next(on_dev.parameters()).device.type == device.type
    x = torch.randn(3, 64, 1, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        ref = on_cpu(x)
        got = on_dev(x.to(device)).cpu()
    # float32 kernels of two devices: rounding-level differences (~1e-6 relative).
    torch.testing.assert_close(got, ref, rtol=1e-4, atol=1e-6)

    with _burgers_trainer(run, burgers_file, _burgers_config("cpu", epochs=3)) as cpu_run:
        assert cpu_run.epoch == 1
        cpu_run.fit(max_epochs_this_call=1)
        state = next(iter(cpu_run.optimizer.state.values()))
        assert state["exp_avg"].device.type == "cpu"
    with _burgers_trainer(run, burgers_file, _burgers_config(device, epochs=3)) as back:
        assert back.epoch == 2
        result = back.fit()
        state = next(iter(back.optimizer.state.values()))
        assert state["exp_avg"].device.type == device.type
    assert result["finished"]
    assert math.isfinite(result["test_rel_l2_best"])
    info = json.loads((run / "run.json").read_text())
    assert info["status"] == "finished"
    assert info["device"] == str(device)


def test_torchrun_with_one_process(tmp_path, burgers_file, device):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "1",
           "-m", "neuralop_fem.cli", "train", "--data", str(burgers_file), "--preset",
           "burgers-galerkin", "--out", str(tmp_path / "run"), "--resolution", "64",
           "--epochs", "1", "--batch-size", "4", "--n-train", "12", "--n-val", "4",
           "--n-test", "4", "--device", device.type]
    for key, value in TINY_BURGERS.items():
        cmd += ["--set", f"{key}={value}"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["status"] == "finished"
    assert info["world_size"] == 1
    assert info["device"] == ("cuda:0" if device.type == "cuda" else "cpu")
