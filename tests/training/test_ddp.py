"""DistributedDataParallel on CPU (gloo) with 2 processes launched by torch.distributed.run."""

from __future__ import annotations

import os
import subprocess
import sys

import torch

from neuralop_fem.models import PRESETS
from neuralop_fem.training import TrainConfig, Trainer

from .conftest import TINY_BURGERS, set_args


def test_two_gloo_processes_match_one_process(tmp_path, burgers_file):
    common = ["--resolution", "64", "--epochs", "2", "--batch-size", "4", "--n-train", "12",
              "--n-val", "4", "--n-test", "4", "--device", "cpu", "--amp", "none",
              *set_args(TINY_BURGERS)]  # float32 on CPUs with native bf16 too
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
           "-m", "neuralop_fem.cli", "train", "--data", str(burgers_file), "--preset",
           "burgers-galerkin", "--out", str(tmp_path / "ddp"), *common]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # Only rank 0 reports.
    assert proc.stdout.count("run directory:") == 1, proc.stdout
    ddp = torch.load(tmp_path / "ddp" / "last.pt", weights_only=True)
    assert ddp["epoch"] == 2
    assert (tmp_path / "ddp" / "best.pt").is_file()

    # One process with the same global batch (4 = 2 processes x 2) sees the same batches.
    cfg = TrainConfig(task="burgers", epochs=2, batch_size=4, n_train=12, n_val=4, n_test=4,
                      resolution=64, gamma=0.1, device="cpu", amp="none")
    single = Trainer(tmp_path / "single", burgers_file,
                     model_config=PRESETS["burgers-galerkin"].replace(**TINY_BURGERS), config=cfg,
                     preset="burgers-galerkin")
    single.fit()
    # Gradients averaged over 2 x 2 samples vs over 4: equal up to float32 summation order.
    torch.testing.assert_close(torch.tensor(ddp["history"]["train_loss"]),
                               torch.tensor(single.history["train_loss"]), rtol=1e-5, atol=0)
    torch.testing.assert_close(torch.tensor(ddp["history"]["val_rel_l2"]),
                               torch.tensor(single.history["val_rel_l2"]), rtol=1e-4, atol=0)
    for key, value in single.operator.state_dict().items():
        torch.testing.assert_close(ddp["model"][key], value, rtol=1e-4, atol=1e-6)


#: Runs the command line in each process; the second process reads last.pt 3 s late in a
#: rollback (a slow file system), and each process writes its state after every rollback.
_LATE_READER = """
import json, os, sys, time
from neuralop_fem.training import divergence as dv, resume as rs
rank, out = int(os.environ["RANK"]), sys.argv[1]
read_last, undo = rs.read_last, dv.undo_diverged_epoch
def late(path, **kw):
    if rank == 1:
        time.sleep(3.0)
    return read_last(path, **kw)
def undo_and_say(t, loss, val):
    rs.read_last = late
    try:
        done = undo(t, loss, val)
    finally:
        rs.read_last = read_last
    if done:
        with open(f"{out}/rank{rank}.jsonl", "a") as fh:
            print(json.dumps([len(t.rollbacks), t.optimizer.param_groups[0]["max_lr"]]), file=fh)
    return done
dv.undo_diverged_epoch = undo_and_say
from neuralop_fem.cli import main
sys.exit(main(sys.argv[2:]))
"""


def test_two_gloo_processes_undo_a_diverged_epoch_together(tmp_path, burgers_file):
    """The divergence guard in a distributed run: the main process decides, every process goes
    back to last.pt at half the learning rate, also when one reads it late, and the run goes on
    (peak lr 0.3 after 2.4 epochs, no warm-up cap: epoch 2's loss is 85 times epoch 1's in one
    process)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    run = tmp_path / "ddp"
    script = tmp_path / "late_reader.py"
    script.write_text(_LATE_READER)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
           str(script), str(tmp_path), "train", "--data", str(burgers_file), "--preset",
           "burgers-galerkin", "--out", str(run), "--resolution", "64", "--epochs", "8",
           "--batch-size", "4", "--n-train", "12", "--n-val", "4", "--n-test", "4", "--device",
           "cpu", "--amp", "none", "--lr", "0.3", "--set", "min_warmup_steps=0",
           "--max-epochs-this-call", "2", *set_args(TINY_BURGERS)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    state = torch.load(run / "last.pt", weights_only=True)
    assert state["epoch"] == 2
    assert [r["epoch"] for r in state["rollbacks"]] == [2]
    assert state["rollbacks"][0]["train_loss"] > 10 * state["history"]["train_loss"][0]
    assert state["optimizer"]["param_groups"][0]["max_lr"] == 0.15
    assert proc.stderr.count("epoch 2 diverged") == 1, proc.stderr[-3000:]  # the main process
    seen = [(tmp_path / f"rank{r}.jsonl").read_text() for r in (0, 1)]
    assert seen[0] == seen[1] == "[1, 0.15]\n"
