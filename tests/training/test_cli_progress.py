"""``neuralop-fem train`` as a user meets it off a terminal (a pipe, a log file, a batch job):
one line per epoch, a killed run's ``run.json`` counting its epochs, a rerun saying that it
resumes, the short warm-up of a small file, and the warning of a run that ended far above its
best epoch."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import TINY_BURGERS, set_args

ROOT = Path(__file__).resolve().parents[2]
# 12 training samples, batch 4: 3 batches per epoch
SMALL = ["--n-train", "12", "--n-val", "4", "--n-test", "4", "--batch-size", "4",
         "--resolution", "64", *set_args(TINY_BURGERS)]


def _env() -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}


def _train_argv(data: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "neuralop_fem.cli", "train", "--data", str(data), "--preset",
            "burgers-galerkin", "--out", str(out), *SMALL, *extra]


def _train(data: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_train_argv(data, out, *extra), capture_output=True, text=True,
                          env=_env(), cwd=ROOT, timeout=300, check=False)


def _epoch_lines(text: str) -> list[str]:
    return re.findall(r"^epoch \d+/\d+: loss .*$", text, flags=re.M)


def test_a_killed_run_counts_its_epochs_and_the_rerun_says_it_resumes(tmp_path, burgers_file):
    run = tmp_path / "run"
    proc = subprocess.Popen(_train_argv(burgers_file, run, "--epochs", "4"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env(), cwd=ROOT)
    try:
        first = ""
        for line in proc.stdout:  # a pipe, not a terminal: one line per epoch
            if line.startswith("epoch "):
                first = line
                break
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=60)
        proc.stdout.close()
        proc.stderr.close()
    assert re.match(r"epoch 1/4: loss \d\.\d{4}e[+-]\d\d, validation rel\. L2 .* \(best\), "
                    r"lr .*, [\d.]+ s$", first), first
    info = json.loads((run / "run.json").read_text())
    done = info["epochs_completed"]
    assert info["status"] == "running"
    assert 1 <= done < 4, info  # written after every epoch, not only at the start and end

    rerun = _train(burgers_file, run, "--epochs", "4")
    assert rerun.returncode == 0, rerun.stderr
    assert f"resuming {run} from epoch {done + 1} of 4 ({done} done" in rerun.stdout
    lines = _epoch_lines(rerun.stdout)
    assert [line.split(":")[0] for line in lines] == [f"epoch {k}/4" for k in range(done + 1, 5)]
    info = json.loads((run / "run.json").read_text())
    assert (info["status"], info["epochs_completed"]) == ("finished", 4)
    assert len(json.loads((run / "run.json").read_text())["splits"]["train"]) == 12


def test_a_stopped_run_records_its_epochs_and_a_finished_one_is_refused_by_flag(
        tmp_path, burgers_file):
    run = tmp_path / "run"
    first = _train(burgers_file, run, "--epochs", "2", "--max-epochs-this-call", "1")
    assert first.returncode == 0, first.stderr
    assert [line.split(":")[0] for line in _epoch_lines(first.stdout)] == ["epoch 1/2"]
    info = json.loads((run / "run.json").read_text())
    assert (info["status"], info["epochs_completed"]) == ("interrupted", 1)
    second = _train(burgers_file, run, "--epochs", "2")
    assert f"resuming {run} from epoch 2 of 2 (1 done" in second.stdout
    again = _train(burgers_file, run, "--epochs", "2")
    assert again.returncode == 2
    # the command line names its flag, not the Python argument
    assert "pass --overwrite to train it again" in again.stderr, again.stderr
    assert "overwrite=True" not in again.stderr
    assert again.stderr.count("\n") == 1


def test_a_short_warm_up_lowers_the_peak_learning_rate_and_says_so(tmp_path, burgers_file):
    """12 samples, batch 4, 2 epochs: 6 steps, a warm-up of 1.8 steps. The lr may rise by at
    most lr_max / min_warmup_steps (100) per step on average, so it peaks at 1.8e-5, not 1e-3."""
    run = tmp_path / "run"
    done = _train(burgers_file, run, "--epochs", "2")
    assert done.returncode == 0, done.stderr
    assert ("schedule: peak learning rate 1.8e-05 instead of --lr 0.001: the warm-up has 1.8 "
            "steps (3 batches per epoch x 2 epochs x pct_start 0.3)") in done.stdout
    info = json.loads((run / "run.json").read_text())
    assert info["peak_lr"] == pytest.approx(1.8e-5)
    lrs = [float(line.rsplit("lr ", 1)[1].split(",")[0]) for line in _epoch_lines(done.stdout)]
    assert max(lrs) <= 1.8e-5
    # the paper's schedule on demand: no note, the peak at lr_max
    paper = _train(burgers_file, tmp_path / "paper", "--epochs", "2", "--set",
                   "min_warmup_steps=0")
    assert paper.returncode == 0, paper.stderr
    assert "schedule:" not in paper.stdout
    assert json.loads((tmp_path / "paper" / "run.json").read_text())["peak_lr"] == 1e-3


def test_a_run_that_ends_far_above_its_best_epoch_gets_one_warning_line(tmp_path,
                                                                        burgers_file):
    """A peak lr of 0.1 after 6 steps, without clipping or the warm-up cap, throws the tiny
    model away from its first epoch's weights (validation 0.95, 1.4, 25, 92); the divergence
    guard, which would undo those epochs, is off."""
    run = tmp_path / "run"
    done = _train(burgers_file, run, "--epochs", "4", "--lr", "0.1", "--set",
                  "min_warmup_steps=0", "--set", "pct_start=0.5", "--set", "grad_clip=0",
                  "--set", "divergence_factor=0",
                  "--amp", "none")  # the float32 trajectory above, on CPUs with bf16 too
    assert done.returncode == 0, done.stderr
    info = json.loads((run / "run.json").read_text())
    val = [float(v) for v in re.findall(r"validation rel\. L2 ([^\s,]+)", done.stdout)]
    best = min(val)
    assert val[-1] > 2 * best, val  # the situation this test is about
    warning = [line for line in done.stderr.splitlines() if "warning" in line]
    assert len(warning) == 1, done.stderr
    assert warning[0].startswith(f"neuralop-fem train: warning: {run}: the final epoch's "
                                 "validation rel. L2")
    assert f"the best epoch's ({best:.3g}, epoch {info['best_epoch']})" in warning[0]
    assert len(info["warnings"]) == 1
    assert info["warnings"][0] in warning[0]


@pytest.mark.slow
def test_darcy_inverse_preset_trains_stably_on_the_tours_small_file(tmp_path):
    """The preset as it is on a 32-sample file at 85 (26 training samples, 8 epochs): the lr
    rose to 1e-3 in 14 steps and the run diverged (training loss 25.7, validation 12.9); with
    the capped warm-up every epoch stays near or below the first one (~2.5 min on one core)."""
    data = tmp_path / "d85.nc"
    gen = subprocess.run([sys.executable, "-m", "neuralop_fem.cli", "generate", "darcy",
                          "--samples", "32", "--resolution", "85", "--seed", "0", "--out",
                          str(data)], capture_output=True, text=True, env=_env(), cwd=ROOT,
                         timeout=600, check=False)
    assert gen.returncode == 0, gen.stderr
    done = subprocess.run([sys.executable, "-m", "neuralop_fem.cli", "train", "--data",
                           str(data), "--preset", "darcy-inverse-galerkin", "--out",
                           str(tmp_path / "run"), "--epochs", "8"], capture_output=True,
                          text=True, env=_env(), cwd=ROOT, timeout=1200, check=False)
    assert done.returncode == 0, done.stderr
    lines = _epoch_lines(done.stdout)
    loss = [float(re.search(r"loss (\S+),", line).group(1)) for line in lines]
    val = [float(re.search(r"L2 (\S+)", line).group(1).rstrip(",")) for line in lines]
    assert len(loss) == 8
    assert max(loss) < 1.1 * loss[0], loss
    assert max(val) < 1.1 * val[0], val
    assert "warning" not in done.stderr
