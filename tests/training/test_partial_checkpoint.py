"""Checkpoints within an epoch (``partial.pt``): a run killed inside an epoch resumes there.

The interrupted runs save ``partial.pt`` after every optimizer step (``checkpoint_minutes``
tiny) and are stopped inside an epoch, in process (an exception raised right after a
``partial.pt`` is written) or by SIGKILL from outside (the command line); the same command then
finishes the run, which must equal, bitwise (CPU, one thread, dropout on), a run never
interrupted. Damaged, stale and inconsistent ``partial.pt`` files are handled as documented in
:mod:`neuralop_fem.training.partial_checkpoint`.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import shutil
import signal
import subprocess
import sys

import pytest
import torch

from neuralop_fem.cli import main
from neuralop_fem.errors import ConfigError
from neuralop_fem.models import PRESETS
from neuralop_fem.training import TrainConfig, Trainer
from neuralop_fem.training import trainer as trainer_module

from .conftest import TINY_BURGERS, set_args
from .test_kill_resume import REPO, TIMEOUT, _env, _run_and_kill

PRESET = "burgers-galerkin"
DROPOUT = {"encoder_dropout": 0.1, "ffn_dropout": 0.1}
MODEL = dataclasses.replace(PRESETS["burgers-galerkin"], **TINY_BURGERS, **DROPOUT)
#: 12 training samples in batches of 2: 6 batches per epoch.
BATCHES = 6
ARGS = ["--preset", "burgers-galerkin", "--resolution", "64", "--batch-size", "2",
        "--epochs", "3", "--n-train", "12", "--n-val", "4", "--n-test", "4",
        *set_args({**TINY_BURGERS, **DROPOUT})]
EVERY_STEP = 1e-9  # minutes: a partial.pt after every optimizer step


def _config(**changes) -> TrainConfig:
    return TrainConfig(task="burgers", epochs=3, batch_size=2, n_train=12, n_val=4, n_test=4,
                       resolution=64, threads=1, **changes)


class _Stop(Exception):
    """Raised right after the ``count``-th ``partial.pt`` is written (a kill at that moment)."""


def _interrupt_after(monkeypatch, count: int) -> list[int]:
    written: list[int] = []
    save = trainer_module.Trainer.save_last

    def save_and_stop(self, within=None):
        save(self, within)
        if within is not None:
            written.append(within["batches_done"])
            if len(written) == count:
                raise _Stop
    monkeypatch.setattr(trainer_module.Trainer, "save_last", save_and_stop)
    return written


def _fit(run, data, config: TrainConfig) -> dict:
    with Trainer(run, data, model_config=MODEL, config=config, preset=PRESET) as trainer:
        return trainer.fit()


def _metrics(run) -> list[tuple[str, ...]]:
    with (run / "metrics.csv").open() as fh:
        return [(r["epoch"], r["train_loss"], r["val_rel_l2"], r["lr"]) for r in csv.DictReader(fh)]


def _assert_same_run(run, reference) -> None:
    assert _metrics(run) == _metrics(reference)
    for name, key in (("last.pt", "model"), ("best.pt", "state_dict")):
        a = torch.load(run / name, weights_only=True)[key]
        b = torch.load(reference / name, weights_only=True)[key]
        assert a.keys() == b.keys()
        for k, v in b.items():
            assert torch.equal(a[k], v), (name, k)
    results = ("best_epoch", "best_val_rel_l2", "test_rel_l2_best", "test_rel_l2_final")
    got, want = (json.loads((d / "run.json").read_text()) for d in (run, reference))
    assert {k: got[k] for k in results} == {k: want[k] for k in results}
    assert not (run / "partial.pt").exists()


@pytest.fixture(scope="module")
def references(tmp_path_factory, burgers_file):
    """Uninterrupted runs, by settings (checkpoints within epochs off)."""
    out = {}
    for name, changes in {"onecycle": {}, "step-accum2": {"scheduler": "step", "step_epochs": 1,
                                                         "grad_accumulation": 2}}.items():
        run = tmp_path_factory.mktemp("reference") / name
        _fit(run, burgers_file, _config(checkpoint_minutes=0, **changes))
        out[name] = (run, changes)
    return out


@pytest.mark.parametrize(("name", "stop_at"), [("onecycle", 8), ("onecycle", 2),
                                               ("step-accum2", 4)])
def test_a_run_stopped_within_an_epoch_resumes_there_bitwise(references, burgers_file, tmp_path,
                                                             monkeypatch, name, stop_at):
    reference, changes = references[name]
    run = tmp_path / "run"
    written = _interrupt_after(monkeypatch, stop_at)
    with pytest.raises(_Stop):
        _fit(run, burgers_file, _config(checkpoint_minutes=EVERY_STEP, **changes))
    state = torch.load(run / "partial.pt", weights_only=True)
    k = changes.get("grad_accumulation", 1)
    epoch, done = divmod(stop_at - 1, BATCHES // k - 1)  # never after an epoch's last step
    assert (state["epoch"], state["within_epoch"]["batches_done"]) == (epoch, written[-1])
    assert written[-1] == (done + 1) * k
    monkeypatch.undo()
    # another checkpoint interval is allowed on resume; the result does not depend on it
    with Trainer(run, burgers_file, model_config=MODEL, config=_config(**changes),
                 preset=PRESET) as trainer:
        assert (trainer.resumed_from, trainer.within["batches_done"]) == (epoch, written[-1])
        trainer.fit()
    _assert_same_run(run, reference)


def _newer(a, b) -> bool:
    """Whether file ``a`` exists and was written after file ``b`` (which exists)."""
    try:
        return a.stat().st_mtime_ns > b.stat().st_mtime_ns
    except FileNotFoundError:
        return False


def test_a_killed_command_resumes_within_the_epoch(references, burgers_file, tmp_path):
    reference = references["onecycle"][0]
    run = tmp_path / "killed"
    cmd = [sys.executable, "-m", "neuralop_fem.cli", "train", "--data", str(burgers_file),
           "--out", str(run), *ARGS, "--threads", "1"]
    # SIGKILL once a partial.pt newer than the first last.pt exists (inside epoch 2 or later)
    killed = _run_and_kill([*cmd, "--checkpoint-minutes", str(EVERY_STEP)],
                           lambda: _newer(run / "partial.pt", run / "last.pt"))
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    state = torch.load(run / "partial.pt", weights_only=True)
    completed = torch.load(run / "last.pt", weights_only=True)["epoch"]
    assert 1 <= state["epoch"] <= completed
    assert 0 < state["within_epoch"]["batches_done"] < BATCHES
    done = subprocess.run(cmd, cwd=REPO, env=_env(), capture_output=True, text=True,
                          timeout=TIMEOUT, check=False)
    assert done.returncode == 0, done.stderr
    if state["epoch"] == completed:  # not killed between last.pt and the removal of partial.pt
        assert (f"within epoch {completed + 1} of 3 ({completed} done, and batch "
                f"{state['within_epoch']['batches_done']} of {BATCHES} of epoch "
                f"{completed + 1}, restored from partial.pt") in done.stdout
    _assert_same_run(run, reference)


@pytest.fixture
def interrupted(burgers_file, tmp_path, monkeypatch):
    """A run stopped after batch 2 of epoch 2 (partial.pt epoch 1, last.pt epoch 1)."""
    run = tmp_path / "run"
    _interrupt_after(monkeypatch, BATCHES - 1 + 2)
    with pytest.raises(_Stop):
        _fit(run, burgers_file, _config(checkpoint_minutes=EVERY_STEP))
    monkeypatch.undo()
    return run


def test_a_partial_older_than_last_pt_is_ignored_and_removed(interrupted, references,
                                                             burgers_file, tmp_path,
                                                             monkeypatch):
    stale = tmp_path / "stale.pt"
    shutil.copy(interrupted / "partial.pt", stale)
    with Trainer(interrupted, burgers_file, model_config=MODEL, config=_config(),
                 preset=PRESET) as trainer:
        trainer.fit(max_epochs_this_call=1)  # ends epoch 2: last.pt epoch 2, partial.pt removed
    assert not (interrupted / "partial.pt").exists()
    shutil.copy(stale, interrupted / "partial.pt")  # as if killed between the two writes
    with Trainer(interrupted, burgers_file, model_config=MODEL, config=_config(),
                 preset=PRESET) as trainer:
        assert trainer.epoch == 2
        assert trainer.within is None
        assert not (interrupted / "partial.pt").exists()
        trainer.fit()
    _assert_same_run(interrupted, references["onecycle"][0])


def _edit(path, edit):
    state = torch.load(path, weights_only=True)
    edit(state)
    torch.save(state, path)


def _cli(data, run, *extra) -> int:
    return main(["train", "--data", str(data), "--out", str(run), *ARGS, *extra])


@pytest.mark.parametrize(("damage", "expected"), [
    (lambda p: p.write_bytes(p.read_bytes()[:300]), "partial.pt"),
    (lambda p: p.write_bytes(b"not a checkpoint"), "partial.pt"),
    (lambda p: _edit(p, lambda s: s["within_epoch"].update(batches_done=BATCHES)),
     "field `within_epoch.batches_done` must be an integer in [1, 5]"),
    (lambda p: _edit(p, lambda s: s["within_epoch"].update(batches_done=True)),
     "field `within_epoch.batches_done`"),
    (lambda p: _edit(p, lambda s: s["within_epoch"].update(loss_sum=float("nan"))),
     "field `within_epoch.loss_sum` must be a finite number"),
    (lambda p: _edit(p, lambda s: s["within_epoch"].pop("epoch_rng")),
     "field `within_epoch.epoch_rng` must be an object with the states"),
    (lambda p: _edit(p, lambda s: s.pop("within_epoch")), "field `within_epoch` must be"),
    (lambda p: _edit(p, lambda s: s.update(format="neuralop_fem.training.last/1")),
     "field `format` must be 'neuralop_fem.training.partial/1'"),
    (lambda p: _edit(p, lambda s: s["model"].pop(next(iter(s["model"])))), "partial.pt"),
    (lambda p: _edit(p, lambda s: s["scheduler"].update(last_epoch=0)),
     "+ steps within the next epoch"),
], ids=["truncated", "garbage", "batches-done-range", "batches-done-bool", "loss-nan",
        "rng-missing", "within-missing", "last-format", "model-key", "scheduler-step"])
def test_a_damaged_partial_stops_the_command_with_one_line(interrupted, burgers_file, capsys,
                                                          damage, expected):
    damage(interrupted / "partial.pt")
    before = (interrupted / "last.pt").read_bytes()
    capsys.readouterr()
    assert _cli(burgers_file, interrupted) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert expected in err
    assert "Delete partial.pt to resume from last.pt (the end of the last completed epoch)" in err
    assert (interrupted / "last.pt").read_bytes() == before  # nothing trained or written


def test_a_partial_of_a_later_epoch_than_last_pt_is_refused(interrupted, burgers_file, capsys):
    (interrupted / "last.pt").unlink()
    capsys.readouterr()
    assert _cli(burgers_file, interrupted) == 2
    err = capsys.readouterr().err
    assert "holds the progress within epoch 2, but last.pt records 0 completed epochs" in err
    assert "delete partial.pt" in err
    assert err.count("\n") == 1


def test_overwrite_discards_a_partial(interrupted, burgers_file):
    assert _cli(burgers_file, interrupted, "--overwrite", "--max-epochs-this-call", "1",
                "--checkpoint-minutes", "0") == 0
    assert not (interrupted / "partial.pt").exists()
    assert torch.load(interrupted / "last.pt", weights_only=True)["epoch"] == 1


def test_no_partial_is_written_when_checkpoints_within_epochs_are_off(burgers_file, tmp_path,
                                                                     monkeypatch):
    written = _interrupt_after(monkeypatch, 1)
    _fit(tmp_path / "run", burgers_file, _config(checkpoint_minutes=0))
    assert written == []
    assert not (tmp_path / "run" / "partial.pt").exists()


@pytest.mark.parametrize("value", [-1, float("nan"), float("inf"), "ten"])
def test_checkpoint_minutes_must_be_a_finite_number_at_least_zero(value):
    with pytest.raises(ConfigError, match="`checkpoint_minutes` must be a finite number >= 0"):
        TrainConfig(checkpoint_minutes=value)
