"""The inference benchmark (benchmarks.lab.inference) and the GPU campaign's
``inference`` stage rehearsed on the CPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from benchmarks.gpu.campaign.inference import goal_rows
from benchmarks.lab import inference, inference_report
from neuralop_fem.data import load_dataset
from neuralop_fem.data.datasets import DarcyInverseDataset
from neuralop_fem.surrogate import Surrogate
from tests._surrogate_fixtures import darcy_run, inverse_run

ROOT = Path(__file__).resolve().parents[1]
CAMPAIGN = ["-m", "benchmarks.gpu.campaign"]


@pytest.fixture(scope="module")
def darcy(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("darcy")
    sur = Surrogate.load(darcy_run(tmp), device="cpu")
    ds = load_dataset(tmp / "d.nc")
    return sur, np.asarray(ds.a.values), np.asarray(ds.u.values)


def test_forward_flops_counts_the_matrix_products():
    """Pointwise linear layers on n points: 2 * n * in * out multiply-adds each."""
    net = torch.nn.Sequential(torch.nn.Linear(1, 3, bias=False), torch.nn.Linear(3, 1, bias=False))
    sur = Surrogate.from_module(net, problem="burgers", resolution=16, device="cpu")
    assert inference.forward_flops(sur, np.linspace(0.0, 1.0, 16)) == 2 * 16 * 3 + 2 * 16 * 3


def test_speed_rows_time_solve_and_forward_at_each_batch(darcy):
    sur, a, _ = darcy
    rows = inference.speed_rows(sur, a[:3], batches=(1, 4), where="CPU, 1 thread",
                                flops=1e6, peak=1e10, repeats=1, min_time=0.0)
    assert [r["batch"] for r in rows] == [1, 4]
    for r in rows:
        assert r["solve_samples_per_s"] > 0
        assert r["forward_samples_per_s"] > 0
        assert r["overhead"] == pytest.approx(
            r["forward_samples_per_s"] / r["solve_samples_per_s"])
        assert r["fraction_of_peak"] == pytest.approx(1e6 * r["forward_samples_per_s"] / 1e10)
        assert r["overhead_cpu_time"] > 0
    assert sur.batch_size == 16  # the automatic batch size is back


def test_speed_rows_skip_cells_that_would_take_too_long(darcy):
    sur, a, _ = darcy
    rows = inference.speed_rows(sur, a[:2], batches=(1, 10**7), where="CPU", flops=1.0,
                                peak=1.0, repeats=1, min_time=0.0, max_call_s=1.0)
    assert "overhead" in rows[0]
    assert rows[1]["skipped"].startswith("one call would take about")


def test_precision_rows_float32_first_and_bf16_moves_the_output(darcy):
    sur, a, u = darcy
    rows = inference.precision_rows(sur, a[:4], u[:4], precisions=("float32", "bf16"),
                                    batch=2, repeats=1, min_time=0.0)
    f32, bf16 = rows
    err = np.linalg.norm((sur.solve(a[:4]) - u[:4]).reshape(4, -1), axis=1) / np.linalg.norm(
        u[:4].reshape(4, -1), axis=1)
    assert f32["rel_l2"] == pytest.approx(err.mean(), rel=1e-12)
    assert (f32["cost"], f32["deviation_from_float32"], f32["speedup"]) == (0.0, 0.0, 1.0)
    assert bf16["deviation_from_float32"] > 0
    assert bf16["cost"] == pytest.approx(bf16["rel_l2"] - f32["rel_l2"])
    assert sur.precision == "float32"
    with pytest.raises(ValueError, match="must start with 'float32'"):
        inference.precision_rows(sur, a[:2], u[:2], precisions=("bf16",))


def test_markdown_states_the_goal_per_model():
    speed = [{"where": "CPU, 1 thread", "batch": 16, "solve_samples_per_s": 90.0,
              "forward_samples_per_s": 100.0, "overhead": 100 / 90, "overhead_cpu_time": 1.02,
              "forward_tflops": 1e-3,
              "fraction_of_peak": 0.5},
             {"where": "CPU, 1 thread", "batch": 128, "skipped": "one call would take 30 s"}]
    models = [{"name": "m1", "flops": 2e9, "speed": speed, "precision": []},
              {"name": "m2", "flops": 1e9, "precision": [],
               "speed": [{**speed[0], "overhead": 1.05, "overhead_cpu_time": 1.2}]}]
    text = "\n".join(inference_report.markdown(models, {"CPU, 1 thread": 5e10}))
    assert "| m1 | 1.111 | no | 1.020 | yes |" in text
    assert "| m2 | 1.050 | yes | 1.200 | no |" in text
    assert "skipped (one call would take 30 s)" in text
    assert "CPU, 1 thread: 0.05 TFLOP/s" in text


def test_goal_rows_read_the_gpu_rows():
    models = [{"name": "b", "problem": "burgers", "speed": [
        {"where": "GPU", "batch": 1, "solve_samples_per_s": 2000.0, "solve_ms_per_sample": 0.5},
        {"where": "GPU", "batch": 128, "solve_samples_per_s": 40000.0,
         "solve_ms_per_sample": 0.025},
        {"where": "GPU", "batch": 1024, "solve_samples_per_s": 60000.0,
         "solve_ms_per_sample": 0.017}]},
        {"name": "d", "problem": "darcy", "speed": [
            {"where": "CPU, 1 thread", "batch": 1, "solve_samples_per_s": 9.0,
             "solve_ms_per_sample": 111.0}]}]
    (row,) = goal_rows(models)
    assert (row["name"], row["samples_per_s"], row["rate_met"]) == ("b", 60000.0, True)
    assert (row["ms_one"], row["ms_met"]) == (0.5, True)


@pytest.mark.slow
def test_inference_stage_rehearsal(tmp_path):
    """The stage as the device runs it, on the CPU: one command, at most 8 small files."""
    out = tmp_path / "inference"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, *CAMPAIGN, "inference", "--rehearse", "--out",
                           str(out), "--work", str(tmp_path / "work"), "--budget-s", "500"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    files = sorted(p for p in out.rglob("*") if p.is_file())
    assert {p.name for p in files} == {"inference.json", "inference.md", "inference.log"}
    assert all(p.stat().st_size < 16 * 2**20 for p in files)
    result = json.loads((out / "inference.json").read_text())
    assert result["stage"] == "inference"
    assert result["rehearse"] is True
    names = [m["name"] for m in result["models"]]
    assert names == ["burgers-fno", "darcy-fno", "darcy-inverse-galerkin"]
    for m in result["models"]:
        assert m["flops"] > 0
        assert [r["batch"] for r in m["speed"]] == [1, 2]
        assert all(r["overhead"] > 0 for r in m["speed"])
        assert [r["precision"] for r in m["precision"]] == ["float32", "bf16"]
        # fresh samples: the float32 error is of the order of the card's test error
        f32 = m["precision"][0]["rel_l2"]
        assert m["card_test_rel_l2"] / 5 < f32 < 5 * m["card_test_rel_l2"]
    assert result["goals"] == []  # no GPU rows in a rehearsal
    md = (out / "inference.md").read_text()
    assert "## Environment" in md
    assert "-m benchmarks.gpu.campaign inference --rehearse" in md


def test_fresh_inverse_targets_are_the_training_targets(tmp_path):
    """An inverse model's fresh outputs are pooled like DarcyInverseDataset's targets."""
    run, data, _ = inverse_run(tmp_path, epochs=1)
    sur = Surrogate.load(run, device="cpu")
    ds = load_dataset(data)
    _, coarse = inference.fresh_samples(sur, ds)
    want = DarcyInverseDataset(ds, n_fine=sur.resolution, n_coarse=sur.output_resolution)
    # the dataset's targets are float32 tensors: float32 rounding
    np.testing.assert_allclose(coarse[3], want[3]["target"][..., 0].numpy(), rtol=1e-6)
