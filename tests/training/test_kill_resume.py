"""``neuralop-fem train`` SIGKILLed at several moments, then run again: the uninterrupted result.

The moments are found by watching the run directory, as a user would: right after the first
checkpoint (``last.pt`` replaced), at a random moment of a later epoch, and while the test
errors are computed (``run.json`` says ``"finishing"``). Each killed process is started again
with the same command; the last one must finish and the run must equal, bitwise (CPU, one
thread), a run that was never interrupted. A finished run is then refused.
"""

from __future__ import annotations

import csv
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import torch

import neuralop_fem
from neuralop_fem.cli import main

from .conftest import TINY_BURGERS, set_args

REPO = Path(neuralop_fem.__file__).resolve().parents[1]
EPOCHS = 4
ARGS = ["--preset", "burgers-galerkin", "--resolution", "64", "--batch-size", "4",
        "--epochs", str(EPOCHS), "--n-train", "12", "--n-val", "4", "--n-test", "4",
        *set_args({**TINY_BURGERS, "encoder_dropout": 0.1, "ffn_dropout": 0.1})]
#: Seconds a step of the schedule may take on a loaded 2-core machine (imports included).
TIMEOUT = 240


def _command(data: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "neuralop_fem.cli", "train", "--data", str(data),
            "--out", str(out), *ARGS]


def _env() -> dict[str, str]:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


class _Checkpoints:
    """Counts replacements of ``last.pt`` (a new file: inode, mtime or size change)."""

    def __init__(self, path: Path) -> None:
        self.path, self.last, self.count = path, None, 0

    def poll(self) -> int:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return self.count
        key = (st.st_ino, st.st_mtime_ns, st.st_size)
        if key != self.last:
            self.last, self.count = key, self.count + 1
        return self.count


def _status(run: Path) -> str | None:
    try:
        return json.loads((run / "run.json").read_text())["status"]
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def _run_and_kill(cmd: list[str], when, *, delay: float = 0.0) -> subprocess.CompletedProcess:
    """Start ``cmd``; SIGKILL it ``delay`` s after ``when()`` first holds (polled every 2 ms)."""
    proc = subprocess.Popen(cmd, cwd=REPO, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + TIMEOUT
    try:
        while not when():
            if proc.poll() is not None:
                out, err = proc.communicate()
                msg = f"the run ended (rc {proc.returncode}) before the kill moment:\n{out}\n{err}"
                raise AssertionError(msg)
            if time.monotonic() > deadline:
                msg = "the kill moment never came"
                raise AssertionError(msg)
            time.sleep(0.002)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        out, err = proc.communicate()
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _metrics(run: Path) -> list[tuple[str, str, str, str]]:
    with (run / "metrics.csv").open() as fh:
        return [(r["epoch"], r["train_loss"], r["val_rel_l2"], r["lr"]) for r in csv.DictReader(fh)]


_RESULTS = ("status", "epochs_completed", "best_epoch", "best_val_rel_l2", "test_rel_l2_best",
            "test_rel_l2_final", "val_rel_l2_final")


def test_train_killed_at_any_moment_ends_as_the_uninterrupted_run(tmp_path, burgers_file, capsys):
    reference, run = tmp_path / "reference", tmp_path / "killed"
    assert main(["train", "--data", str(burgers_file), "--out", str(reference), *ARGS]) == 0
    cmd = _command(burgers_file, run)
    checkpoints = _Checkpoints(run / "last.pt")

    # 1. Right after the first checkpoint.
    killed = _run_and_kill(cmd, lambda: checkpoints.poll() >= 1)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    # 2. At a random moment of a later epoch (the next process resumes after epoch 1).
    seen = checkpoints.count
    killed = _run_and_kill(cmd, lambda: checkpoints.poll() >= seen + 1,
                           delay=random.Random(0).uniform(0.0, 0.05))
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    # 3. After the last epoch, while the test errors are computed.
    killed = _run_and_kill(cmd, lambda: _status(run) == "finishing")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert _status(run) == "finishing"
    assert torch.load(run / "last.pt", weights_only=True)["epoch"] == EPOCHS
    last_before = os.stat(run / "last.pt")

    # The same command finishes the run without training again (last.pt untouched).
    done = subprocess.run(cmd, cwd=REPO, env=_env(), capture_output=True, text=True,
                          timeout=TIMEOUT, check=False)
    assert done.returncode == 0, done.stderr
    assert f"epochs completed: {EPOCHS} (finished: True)" in done.stdout
    last_after = os.stat(run / "last.pt")
    assert (last_after.st_ino, last_after.st_mtime_ns) == (last_before.st_ino,
                                                          last_before.st_mtime_ns)

    got, want = (json.loads((d / "run.json").read_text()) for d in (run, reference))
    assert {k: got[k] for k in _RESULTS} == {k: want[k] for k in _RESULTS}
    assert got["status"] == "finished"
    assert _metrics(run) == _metrics(reference)
    for name, key in (("last.pt", "model"), ("best.pt", "state_dict")):
        a = torch.load(run / name, weights_only=True)[key]
        b = torch.load(reference / name, weights_only=True)[key]
        for k, v in b.items():
            assert torch.equal(a[k], v), (name, k)
    assert (run / "loss_curve.png").stat().st_size > 0
    assert not [p.name for p in run.iterdir() if p.name.endswith(".tmp")]

    # A truly finished run is still refused, with one line.
    capsys.readouterr()
    assert main(["train", "--data", str(burgers_file), "--out", str(run), *ARGS]) == 2
    err = capsys.readouterr().err
    assert "holds a finished run (4 epochs); pass --overwrite" in err
    assert err.count("\n") == 1
