"""``amp="auto"``: bf16 where the device has native bf16, float32 elsewhere (both branches by
injecting the capability), recorded in run.json, kept on resume; ``threads``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from neuralop_fem.errors import ConfigError
from neuralop_fem.models import PRESETS
from neuralop_fem.training import TrainConfig, Trainer, read_run_info
from neuralop_fem.training import amp as amp_module
from neuralop_fem.training.amp import AmpForward, cpu_bf16_features, resolve_amp

from .conftest import TINY_BURGERS, set_args

_ROOT = Path(__file__).resolve().parents[2]  # the checkout, for subprocesses

CPU = torch.device("cpu")
CFG = TrainConfig(task="burgers", epochs=2, batch_size=4, n_train=12, n_val=4, n_test=4,
                  resolution=64, gamma=0.1)


def _model():
    return PRESETS["burgers-galerkin"].replace(**TINY_BURGERS)


@pytest.mark.parametrize(
    ("flags", "expected"),
    [({"avx2", "avx512f"}, "none"), ({"avx512_bf16"}, "bf16"), ({"amx_bf16", "avx2"}, "bf16"),
     (set(), "none")],
)
def test_auto_on_cpu_follows_the_native_bf16_flags(flags, expected):
    choice = resolve_amp("auto", CPU, cpu_flags=flags)
    assert choice.amp == expected
    assert choice.requested == "auto"
    assert ("has native bf16" in choice.reason) == (expected == "bf16")


@pytest.mark.parametrize(("native", "expected"), [(True, "bf16"), (False, "none")])
def test_auto_on_cuda_follows_the_gpu(native, expected):
    choice = resolve_amp("auto", torch.device("cuda:0"), cuda_native=native)
    assert choice.amp == expected
    assert "GPU cuda:0" in choice.reason
    assert ("--amp none" in choice.reason) == native  # the H100's measurement, said


def test_explicit_choices_are_kept_and_emulated_bf16_is_said():
    assert resolve_amp("none", CPU, cpu_flags={"avx512_bf16"}).amp == "none"
    emulated = resolve_amp("bf16", CPU, cpu_flags={"avx2"})
    assert emulated.amp == "bf16"
    assert "emulated" in emulated.note
    assert resolve_amp("bf16", CPU, cpu_flags={"amx_bf16"}).reason == "as requested"
    with pytest.raises(ConfigError, match="`amp` must be one of 'auto', 'none', 'bf16'"):
        resolve_amp("fp16", CPU)
    with pytest.raises(ConfigError, match="`amp` must be a resolved choice"):
        AmpForward(torch.nn.Identity(), amp="auto", device_type="cpu")  # type: ignore[arg-type]


def test_cpu_flags_are_read_from_cpuinfo(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu avx2 amx_bf16 avx512_bf16\n\n"
                    "processor\t: 1\nflags\t\t: fpu avx2 amx_bf16 avx512_bf16\n")
    assert cpu_bf16_features(info) == ("avx512_bf16", "amx_bf16")
    info.write_text("processor\t: 0\nflags\t\t: fpu avx2 avx512f\n")
    assert cpu_bf16_features(info) == ()
    # this machine: auto says what its flags say
    here = resolve_amp("auto", CPU)
    assert here.amp == ("bf16" if cpu_bf16_features() else "none")


def test_trainer_records_the_resolved_choice_and_resumes_in_it(tmp_path, burgers_file,
                                                              monkeypatch):
    # Started on a "CPU with avx512_bf16": auto trains in bf16 and says so in run.json ...
    monkeypatch.setattr(amp_module, "cpu_bf16_features", lambda: ("avx512_bf16",))
    with Trainer(tmp_path / "r", burgers_file, model_config=_model(), config=CFG) as trainer:
        assert trainer.config.amp == "bf16"
        trainer.fit(max_epochs_this_call=1)
    info = read_run_info(tmp_path / "r")
    assert info["train_config"]["amp"] == "bf16"
    assert info["precision"] == {"amp": "bf16", "requested": "auto",
                                 "reason": "the CPU has native bf16 (avx512_bf16)"}
    # ... and resumed on a CPU without it, auto keeps the run's bf16 instead of refusing.
    monkeypatch.setattr(amp_module, "cpu_bf16_features", lambda: ())
    with Trainer(tmp_path / "r", burgers_file, model_config=_model(), config=CFG) as trainer:
        assert trainer.config.amp == "bf16"
        assert trainer.resumed_from == 1
        assert trainer.fit()["finished"]
    info = read_run_info(tmp_path / "r")
    assert info["precision"]["amp"] == "bf16"
    assert "started with (here auto gives none)" in info["precision"]["reason"]
    # an explicit other choice is still a different setting
    with pytest.raises(ConfigError, match="amp: 'bf16' \\(run\\) vs 'none' \\(now\\)"):
        Trainer(tmp_path / "r", burgers_file, model_config=_model(),
                config=CFG.replace(amp="none", epochs=3))


def test_auto_without_native_bf16_trains_in_float32(tmp_path, burgers_file, monkeypatch):
    monkeypatch.setattr(amp_module, "cpu_bf16_features", lambda: ())
    with Trainer(tmp_path / "r", burgers_file, model_config=_model(),
                 config=CFG.replace(epochs=1)) as trainer:
        assert trainer.amp_choice.amp == "none"
        trainer.fit()
    info = read_run_info(tmp_path / "r")
    assert info["train_config"]["amp"] == "none"
    assert info["precision"]["requested"] == "auto"


def test_threads_are_set_recorded_and_given_back(tmp_path, burgers_file):
    before = torch.get_num_threads()
    with Trainer(tmp_path / "r", burgers_file, model_config=_model(),
                 config=CFG.replace(epochs=1, threads=before + 1)) as trainer:
        assert torch.get_num_threads() == before + 1
        trainer.fit()
    assert torch.get_num_threads() == before
    info = read_run_info(tmp_path / "r")
    assert info["train_config"]["threads"] == before + 1
    assert info["hardware"]["torch_threads"] == before + 1


def test_command_line_says_the_precision_and_records_threads(tmp_path, burgers_file):
    env = {**os.environ, "PYTHONPATH": str(_ROOT)}
    cmd = [sys.executable, "-m", "neuralop_fem.cli", "train", "--data", str(burgers_file),
           "--preset", "burgers-galerkin", "--out", str(tmp_path / "r"), "--resolution", "64",
           "--batch-size", "4", "--epochs", "1", "--n-train", "12", "--n-val", "4",
           "--n-test", "4", "--threads", "1", *set_args(TINY_BURGERS)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    expected = resolve_amp("auto", CPU)
    assert expected.note in done.stdout.splitlines()
    info = json.loads((tmp_path / "r" / "run.json").read_text())
    assert info["precision"] == expected.to_dict()
    assert info["train_config"]["threads"] == 1
    bad = subprocess.run([*cmd[:-len(set_args(TINY_BURGERS))], "--threads", "0"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines()[-1].endswith(
        "argument --threads: must be an integer >= 1; got '0'")


@pytest.mark.parametrize(("threads", "load", "cores", "warned"), [
    (1, 9.0, 2, False),   # one thread never waits for another
    (2, 0.2, 2, False),   # idle cores
    (2, 0.6, 2, True),    # a busy process beside two threads on two cores
    (4, 3.4, 8, False),
    (4, 4.6, 8, True),
])
def test_threads_note_warns_only_when_threads_would_share_busy_cores(threads, load, cores,
                                                                    warned):
    from neuralop_fem.environment import threads_note

    note = threads_note(threads, load=load, cores=cores)
    assert (note is not None) == warned
    if warned:
        assert f"threads: {threads} on {cores} cores" in note
        assert "--threads 1" in note


_TINY_MODELS = {
    "burgers-galerkin": {"d_model": 8, "num_layers": 1, "d_ff": 8, "modes": 4, "freq_dim": 4},
    "burgers-fno": {"width": 4, "num_layers": 2, "modes": 4, "projection": 8},
    "darcy-galerkin": {"d_model": 12, "num_layers": 1, "d_ff": 8, "modes": 4, "freq_dim": 4},
    "darcy-fno": {"width": 4, "num_layers": 2, "modes": 4, "projection": 8},
    "darcy-inverse-galerkin": {"d_model": 12, "num_layers": 1, "d_ff": 8},
}


@pytest.mark.parametrize("name", sorted(_TINY_MODELS))
def test_bf16_keeps_the_output_layer_in_float32(name):
    """Under bf16 autocast the model body computes in bf16 but the layer that writes the output
    takes and gives float32; that layer's output is the model's output."""
    from neuralop_fem.models import NormalizedOperator, build_model
    from neuralop_fem.training.amp import output_layer

    torch.manual_seed(0)
    model = build_model(name, **_TINY_MODELS[name])
    x = torch.rand((2, 29, 29, 1) if name.startswith("darcy") else (2, 32, 1))
    seen: dict[str, torch.Tensor] = {}
    last = output_layer(model)
    first = next(m for m in model.modules() if isinstance(m, torch.nn.Linear))
    last.register_forward_hook(lambda m, a, out: seen.update(last_in=a[0], last_out=out))
    first.register_forward_hook(lambda m, a, out: seen.update(first_out=out))
    y = model(x)  # float32, no autocast: the output layer writes the model's output
    assert last.out_features == model.config.out_channels
    assert torch.equal(seen["last_out"], y)
    fwd = AmpForward(NormalizedOperator(model), amp="bf16", device_type="cpu")
    fwd(x).sum().backward()
    assert seen["first_out"].dtype == torch.bfloat16  # the body runs in bf16
    assert seen["last_in"].dtype == torch.float32
    assert seen["last_out"].dtype == torch.float32
    assert last.weight.grad is not None
    with torch.autocast("cpu", dtype=torch.bfloat16):  # the hooks restore the caller's state
        model(x)
        assert torch.is_autocast_enabled("cpu")
    assert not torch.is_autocast_enabled("cpu")
    AmpForward(NormalizedOperator(model), amp="bf16", device_type="cpu")  # hooks added once
    assert len(last._forward_pre_hooks) == 1
