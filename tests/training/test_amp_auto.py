"""``amp="auto"``: bf16 where the device has native bf16, float32 elsewhere (both branches by
injecting the capability), recorded in run.json, kept on resume; ``threads``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from neuralop_fem.errors import ConfigError
from neuralop_fem.models import PRESETS
from neuralop_fem.training import TrainConfig, Trainer, load_trained, read_run_info
from neuralop_fem.training import amp as amp_module
from neuralop_fem.training.amp import AmpForward, bf16_deviation, cpu_bf16_features, resolve_amp

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
                                 "reason": "the CPU has native bf16 (avx512_bf16)",
                                 "float32_parts": ["input_proj", "decoder"]}
    # ... and resumed on a CPU without it, auto keeps the run's bf16 instead of refusing.
    monkeypatch.setattr(amp_module, "cpu_bf16_features", lambda: ())
    with Trainer(tmp_path / "r", burgers_file, model_config=_model(), config=CFG) as trainer:
        assert trainer.config.amp == "bf16"
        assert trainer.resumed_from == 1
        assert trainer.fit()["finished"]
    info = read_run_info(tmp_path / "r")
    assert info["precision"]["amp"] == "bf16"
    assert "started with (here auto gives none)" in info["precision"]["reason"]
    # the finished bf16 run says how far bf16 moves the selected model's output
    op, _ = load_trained(tmp_path / "r")
    assert info["bf16_output_deviation"] == pytest.approx(
        bf16_deviation(op, _test_set(info, burgers_file), device=CPU, batch_size=4), rel=1e-6)
    # an explicit other choice is still a different setting
    with pytest.raises(ConfigError, match="amp: 'bf16' \\(run\\) vs 'none' \\(now\\)"):
        Trainer(tmp_path / "r", burgers_file, model_config=_model(),
                config=CFG.replace(amp="none", epochs=3))


def _test_set(info, path):
    """The run's test split as the trainer reads it."""
    import xarray as xr

    from neuralop_fem.training.setup import make_dataset

    with xr.open_dataset(path) as ds:
        return make_dataset(ds.load(), CFG, indices=info["splits"]["test"],
                            resolution=info["resolution"])


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
    parts = {"float32_parts": ["input_proj", "decoder"]} if expected.amp == "bf16" else {}
    assert info["precision"] == {**expected.to_dict(), **parts}
    assert ("bf16_output_deviation" in info) == (expected.amp == "bf16")
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


_FLOAT32_PARTS = {
    "burgers-galerkin": ["input_proj", "decoder"], "burgers-fno": ["lift", "proj"],
    "darcy-galerkin": ["decoder"], "darcy-fno": ["lift", "proj"],
    "darcy-inverse-galerkin": ["decoder"],
}


def _inside(name: str, parts) -> bool:
    return any(name == p or name.startswith(p + ".") for p in parts)


@pytest.mark.parametrize("name", sorted(_TINY_MODELS))
def test_bf16_keeps_the_float32_parts_in_float32(name):
    """Under bf16 autocast the blocks between the float32 parts compute in bf16, the float32
    parts (input layer, decoder or projection; the output layer in any case) take and give
    float32, and the output layer writes the model's output."""
    from neuralop_fem.models import NormalizedOperator, build_model
    from neuralop_fem.training.amp import float32_parts, output_layer

    torch.manual_seed(0)
    model = build_model(name, **_TINY_MODELS[name])
    parts = float32_parts(model)
    assert list(parts) == _FLOAT32_PARTS[name]
    last = output_layer(model)
    assert any(_inside(n, parts) for n, m in model.named_modules() if m is last)
    x = torch.rand((2, 29, 29, 1) if name.startswith("darcy") else (2, 32, 1))
    seen: dict[str, tuple] = {}
    for pname, module in parts.items():
        module.register_forward_hook(
            lambda m, a, out, pname=pname: seen.update({pname: (a[0].dtype, out.dtype)}))
    body = [(n, m) for n, m in model.named_modules()
            if isinstance(m, torch.nn.Linear) and not _inside(n, parts)]
    assert body  # something computes in bf16
    for n, m in body:
        m.register_forward_hook(lambda m, a, out, n=n: seen.update({n: (None, out.dtype)}))
    last.register_forward_hook(lambda m, a, out: seen.update(last_out=out))
    y = model(x)  # float32, no autocast: the output layer writes the model's output
    assert last.out_features == model.config.out_channels
    assert torch.equal(seen["last_out"], y)
    fwd = AmpForward(NormalizedOperator(model), amp="bf16", device_type="cpu")
    assert fwd.float32_parts == tuple(_FLOAT32_PARTS[name])
    fwd(x).sum().backward()
    for pname in parts:
        assert seen[pname] == (torch.float32, torch.float32), pname
    called = [n for n, _ in body if n in seen]  # (attention reads out_proj's weights itself)
    assert called
    for n in called:
        assert seen[n][1] == torch.bfloat16, n
    assert seen["last_out"].dtype == torch.float32
    assert last.weight.grad is not None
    with torch.autocast("cpu", dtype=torch.bfloat16):  # the hooks restore the caller's state
        model(x)
        assert torch.is_autocast_enabled("cpu")
    assert not torch.is_autocast_enabled("cpu")
    AmpForward(NormalizedOperator(model), amp="bf16", device_type="cpu")  # hooks added once
    for module in parts.values():
        assert len(module._forward_pre_hooks) == 1


def test_a_model_without_float32_parts_keeps_its_output_layer_and_bad_names_are_refused():
    from neuralop_fem.training.amp import float32_parts

    plain = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
    assert list(float32_parts(plain)) == ["2"]

    class Named(torch.nn.Sequential):
        float32_parts = ("head",)

    with pytest.raises(ConfigError, match="names 'head', which is not a submodule"):
        float32_parts(Named(torch.nn.Linear(2, 1)))


def test_bf16_deviation_against_a_naive_computation():
    """The mean relative distance of the bf16 and float32 outputs, sample by sample."""
    from neuralop_fem.models import NormalizedOperator, build_model
    from neuralop_fem.training.amp import bf16_deviation

    torch.manual_seed(1)
    op = NormalizedOperator(build_model("burgers-galerkin", **_TINY_MODELS["burgers-galerkin"]))
    x = torch.rand(5, 32, 1)
    data = [{"input": x[i]} for i in range(5)]
    got = bf16_deviation(op, data, device=CPU, batch_size=2)
    with torch.no_grad():
        ref = op(x).double()
        low = AmpForward(op, amp="bf16", device_type="cpu")(x).double()
    naive = sum(float(torch.linalg.norm(low[i] - ref[i]) / torch.linalg.norm(ref[i]))
                for i in range(5)) / 5
    assert got == pytest.approx(naive, rel=1e-12)
    assert 0 < got < 0.05  # bf16 rounding, not a different model
    assert np.isnan(bf16_deviation(op, [], device=CPU, batch_size=2))


@pytest.mark.parametrize(("deviation", "error", "warned"), [
    (None, 1e-3, False), (1e-4, 1e-3, False), (2e-4, 1e-3, False), (2.1e-4, 1e-3, True),
    (1.3e-3, 1.2e-3, True), (float("nan"), 1e-3, False), (1e-4, float("nan"), False)])
def test_bf16_warning_when_rounding_is_not_small_against_the_error(deviation, error, warned):
    from neuralop_fem.training.amp import bf16_warnings

    lines = bf16_warnings(deviation, error)
    assert bool(lines) == warned
    if warned:
        assert "--amp none" in lines[0]
        assert f"{deviation:.1e}" in lines[0]
