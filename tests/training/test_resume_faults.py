"""Resuming from a damaged or tampered ``last.pt``, and finishing a run killed while finishing.

A damaged ``last.pt`` must stop ``neuralop-fem train`` before anything is trained or written,
with one line that names the file and the field; a run whose ``last.pt`` holds the final epoch
but whose ``run.json`` is not ``"finished"`` (killed between the two) must be finished by the
next call, to the numbers of an uninterrupted run, without training again.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil

import numpy as np
import pytest
import torch

from neuralop_fem.cli import main
from neuralop_fem.errors import RunDirectoryError
from neuralop_fem.models import PRESETS
from neuralop_fem.training import TrainConfig, Trainer

from .conftest import TINY_BURGERS, set_args

#: The runs' peak learning rate: 2 epochs x 3 batches warm up over 1.8 steps, so the schedule
#: peaks at lr_max * 1.8 / min_warmup_steps (neuralop_fem.training.optim.peak_lr).
PEAK_LR = 1e-3 * (0.3 * 2 * 3) / 100
ARGS = ["--preset", "burgers-galerkin", "--resolution", "64", "--batch-size", "4",
        "--epochs", "2", "--n-train", "12", "--n-val", "4", "--n-test", "4",
        *set_args(TINY_BURGERS)]
RANDOM = np.random.default_rng(1).bytes(4096)


def _train(data, run, *extra) -> int:
    return main(["train", "--data", str(data), "--out", str(run), *ARGS, *extra])


@pytest.fixture(scope="module")
def unfinished(tmp_path_factory, burgers_file):
    run = tmp_path_factory.mktemp("unfinished") / "run"
    assert _train(burgers_file, run, "--max-epochs-this-call", "1") == 0
    return run


@pytest.fixture
def run(unfinished, tmp_path):
    return shutil.copytree(unfinished, tmp_path / "run")


def _edit(path, edit):
    state = torch.load(path, weights_only=True)
    edit(state)
    torch.save(state, path)


def _set(*keys, value):
    def edit(state):
        target = state
        for k in keys[:-1]:
            target = target[k]
        target[keys[-1]] = value
    return edit


def _truncate(p):
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


W = "model.input_proj.weight"
LAST_DAMAGE = {
    "truncated": (_truncate, r"last\.pt: cannot be read as a resume checkpoint \(last\.pt\): "
                             r"the file is truncated"),
    "empty": (lambda p: p.write_bytes(b""), r"last\.pt: is empty"),
    "random bytes": (lambda p: p.write_bytes(RANDOM), r"last\.pt: cannot be read as a resume"),
    "another format": (_set("format", value="x"), r"field `format` must be "
                                                  r"'neuralop_fem\.training\.last/1'"),
    "negative epoch": (_set("epoch", value=-1), r"field `epoch` must be an integer >= 0; got -1"),
    "epoch as text": (_set("epoch", value="1"), r"field `epoch` must be an integer >= 0; got '1'"),
    "epoch beyond the run": (_set("epoch", value=99),
                             r"field `history` must be lists train_loss, val_rel_l2, lr, "
                             r"epoch_time_s of 99 numbers"),
    "identity": (_set("identity", value=None), r"field `identity` must be an object"),
    "identity tensor": (_set("identity", "epochs", value=torch.zeros(2)),
                        r"field `identity` must be an object of plain values"),
    "history": (_set("history", "lr", value=[]), r"field `history` must be lists"),
    "best epoch": (_set("best_epoch", value=5), r"field `best_epoch` must be an integer in "
                                                r"\[0, epoch=1\]; got 5"),
    "wall time": (_set("wall_time_s", value=float("inf")), r"field `wall_time_s` must be a "
                                                           r"finite number >= 0"),
    "weight shape": (_set("model", W, value=torch.zeros(2, 2)),
                     rf"last\.pt, field `model`: '{W}' has shape \(2, 2\)"),
    "weight missing": (lambda s: s["model"].pop(W), rf"field `model` lacks '{W}'"),
    "Adam moments": (_set("optimizer", "state", 0, "exp_avg", value=torch.zeros(5)),
                     r"field `optimizer\.state\.exp_avg` must be a tensor of the parameter's "
                     r"shape \(16, 1\)"),
    "Adam settings": (_set("optimizer", "param_groups", 0, "max_lr", value=10.0),
                      r"field `optimizer\.param_groups\[0\]\.max_lr` must be "
                      + re.escape(repr(PEAK_LR))),
    "learning rate": (_set("optimizer", "param_groups", 0, "lr", value=float("nan")),
                      r"field `optimizer\.param_groups\[0\]\.lr` must be a finite number"),
    "optimizer": (_set("optimizer", value={"state": {}, "param_groups": []}),
                  r"field `optimizer` must be the Adam state of this model's parameters"),
    "scheduler key": (_set("scheduler", "optimizer", value=1),
                      r"field `scheduler` must be a OneCycleLR state with keys"),
    "schedule length": (_set("scheduler", "total_steps", value=10**9),
                        r"field `scheduler\.total_steps` must be 6 \(from the run's settings\)"),
    "schedule position": (_set("scheduler", "last_epoch", value=4),
                          r"field `scheduler\.last_epoch` must be 3 \(epoch x steps per epoch\)"),
    "torch RNG": (_set("rng", "torch", value=torch.zeros(3, dtype=torch.uint8)),
                  r"field `rng\.torch` must be the saved state of that generator"),
    "numpy RNG": (_set("rng", "numpy", value=["MT19937", [1, 2], 0, 0, 0.0]),
                  r"field `rng\.numpy` must be the saved state"),
    "RNG missing": (lambda s: s["rng"].pop("loader"), r"field `rng` must be an object with the "
                                                      r"states torch, cuda, numpy"),
    "code history empty": (_set("code_history", value=[]),
                           r"field `code_history` must be a list of \{commit, dirty, from_epoch\}"),
    "code history epochs": (_set("code_history", 0, "from_epoch", value=3),
                            r"field `code_history` must be .* rising from 1 to at most "
                            r"epoch \+ 1 = 2"),
    "code history commit": (_set("code_history", 0, "commit", value=7),
                            r"field `code_history` must be a list"),
}


@pytest.mark.parametrize("case", list(LAST_DAMAGE))
def test_a_damaged_resume_checkpoint_stops_before_training(run, burgers_file, capsys, case):
    damage, match = LAST_DAMAGE[case]
    path = run / "last.pt"
    if case in ("truncated", "empty", "random bytes"):
        damage(path)
    else:
        _edit(path, damage)
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    capsys.readouterr()
    assert _train(burgers_file, run) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    assert "last.pt" in err
    assert "--overwrite" in err
    assert "weights_only" not in err
    config = TrainConfig.from_dict(json.loads((run / "run.json").read_text())["train_config"])
    model = PRESETS["burgers-galerkin"].replace(**TINY_BURGERS)
    with pytest.raises(RunDirectoryError, match=match):
        Trainer(run, burgers_file, model_config=model, config=config, preset="burgers-galerkin")
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before  # nothing written


def test_overwrite_is_the_way_out_of_a_damaged_checkpoint(run, burgers_file, capsys):
    _truncate(run / "last.pt")
    assert _train(burgers_file, run) == 2
    assert "Pass --overwrite" in capsys.readouterr().err
    assert _train(burgers_file, run, "--overwrite") == 0
    assert json.loads((run / "run.json").read_text())["status"] == "finished"


def test_a_directory_in_place_of_last_pt(run, burgers_file, capsys):
    (run / "last.pt").unlink()
    (run / "last.pt").mkdir()
    assert _train(burgers_file, run) == 2
    assert "last.pt: is a directory; the trainer writes a file of that name" in (
        capsys.readouterr().err)


def test_a_finished_run_without_last_pt_is_not_trained_over(run, burgers_file, capsys):
    assert _train(burgers_file, run) == 0
    (run / "last.pt").unlink()
    best = (run / "best.pt").read_bytes()
    capsys.readouterr()
    assert _train(burgers_file, run) == 2
    assert "holds a finished run whose last.pt is missing" in capsys.readouterr().err
    assert (run / "best.pt").read_bytes() == best


def _rows(run):
    with (run / "metrics.csv").open() as fh:
        return [(r["epoch"], r["train_loss"], r["val_rel_l2"], r["lr"]) for r in csv.DictReader(fh)]


_RESULTS = ("test_rel_l2_best", "test_rel_l2_final", "val_rel_l2_final", "best_epoch",
            "best_val_rel_l2", "epochs_completed")


@pytest.mark.parametrize("killed_after", ["last.pt", "run.json finishing", "metrics.csv"])
def test_a_run_killed_while_finishing_is_finished_by_the_next_call(run, burgers_file,
                                                                   killed_after):
    assert _train(burgers_file, run) == 0
    want = json.loads((run / "run.json").read_text())
    rows = _rows(run)
    # The files as a SIGKILL at that point of the last epoch's finishing leaves them.
    info = {k: v for k, v in want.items() if k not in ("test_rel_l2_best", "test_rel_l2_final",
                                                       "val_rel_l2_final")}
    info["status"] = "running" if killed_after == "last.pt" else "finishing"
    (run / "run.json").write_text(json.dumps(info))
    if killed_after != "metrics.csv":  # metrics.csv is written after last.pt
        lines = (run / "metrics.csv").read_text().splitlines(keepends=True)
        (run / "metrics.csv").write_text("".join(lines[:-1]))
    (run / "loss_curve.png").unlink()
    last = os.stat(run / "last.pt")

    assert _train(burgers_file, run) == 0
    got = json.loads((run / "run.json").read_text())
    assert got["status"] == "finished"
    assert {k: got[k] for k in _RESULTS} == {k: want[k] for k in _RESULTS}
    assert _rows(run) == rows
    assert (run / "loss_curve.png").stat().st_size > 0
    now = os.stat(run / "last.pt")
    assert (now.st_ino, now.st_mtime_ns) == (last.st_ino, last.st_mtime_ns)  # no training


def test_a_damaged_run_json_of_an_unfinished_run_is_rewritten(run, burgers_file, capsys):
    (run / "run.json").write_bytes(RANDOM)
    assert _train(burgers_file, run) == 0
    assert "ignoring run.json (it is written again)" in capsys.readouterr().err
    assert json.loads((run / "run.json").read_text())["status"] == "finished"


def test_run_json_lists_the_code_commits_a_run_trained_under(unfinished, tmp_path, burgers_file,
                                                              monkeypatch):
    """One entry per commit, from the first epoch it trained; a last.pt from before the field
    lists its epochs under an unknown commit."""
    import neuralop_fem.training.trainer as trainer_module

    history = json.loads((unfinished / "run.json").read_text())["code_history"]
    assert len(history) == 1
    assert history[0]["from_epoch"] == 1
    run = shutil.copytree(unfinished, tmp_path / "later")
    monkeypatch.setattr(trainer_module, "code_version",
                        lambda: {"commit": "f" * 40, "dirty": True})
    assert _train(burgers_file, run) == 0
    info = json.loads((run / "run.json").read_text())
    assert info["status"] == "finished"
    assert info["code_history"] == [history[0], {"commit": "f" * 40, "dirty": True,
                                                 "from_epoch": 2}]
    old = shutil.copytree(unfinished, tmp_path / "old")
    _edit(old / "last.pt", lambda state: state.pop("code_history"))
    assert _train(burgers_file, old) == 0
    assert json.loads((old / "run.json").read_text())["code_history"] == [
        {"commit": None, "dirty": None, "from_epoch": 1},
        {"commit": "f" * 40, "dirty": True, "from_epoch": 2}]
