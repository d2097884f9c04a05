"""The divergence guard (:mod:`neuralop_fem.training.divergence`) on real runs.

The tiny Burgers transformer, one-cycle schedule at peak lr 0.1 reached in 2.4 epochs (no
warm-up cap), float32, one thread: epoch 3's mean training loss is 17 times epoch 2's (measured,
guard off: 2.17, 1.65, 28.2, 50.6, ...), so the guard undoes epoch 3 once and the run goes on at
half the learning rate. A run stopped anywhere in this, or stopped by the guard and resumed with
a larger ``max_rollbacks``, ends bitwise equal to a run never stopped.
"""

from __future__ import annotations

import dataclasses
import json
import math
import shutil

import pytest
import torch

from neuralop_fem.cli import main
from neuralop_fem.errors import RunDirectoryError
from neuralop_fem.models import PRESETS
from neuralop_fem.training import TrainConfig, Trainer
from neuralop_fem.training import divergence as dv
from neuralop_fem.training import trainer as trainer_module
from neuralop_fem.training.optim import make_optimizer, make_scheduler, step_epoch

from .conftest import TINY_BURGERS, set_args

PRESET = "burgers-galerkin"
MODEL = dataclasses.replace(PRESETS[PRESET], **TINY_BURGERS)
EPOCHS_COMPARED = 4
UNSTABLE = {"lr_max": 0.1, "min_warmup_steps": 0}


def _config(**changes) -> TrainConfig:
    base = {"task": "burgers", "epochs": 8, "batch_size": 2, "n_train": 12, "n_val": 4,
            "n_test": 4, "resolution": 64, "threads": 1, "amp": "none", "checkpoint_minutes": 0,
            **UNSTABLE}
    return TrainConfig(**{**base, **changes})


def _fit(run, data, config: TrainConfig, epochs: int | None = EPOCHS_COMPARED) -> Trainer:
    with Trainer(run, data, model_config=MODEL, config=config, preset=PRESET) as trainer:
        trainer.fit(max_epochs_this_call=None if epochs is None else epochs - trainer.epoch)
    return trainer


def _state(run) -> dict:
    return torch.load(run / "last.pt", weights_only=True)


def _assert_same_run(run, reference) -> None:
    got, want = _state(run), _state(reference)
    assert got["epoch"] == want["epoch"] == EPOCHS_COMPARED
    for key, value in want["model"].items():
        assert torch.equal(got["model"][key], value), key
    assert got["history"]["train_loss"] == want["history"]["train_loss"]
    assert got["history"]["val_rel_l2"] == want["history"]["val_rel_l2"]
    strip = [{k: v for k, v in r.items() if k != "val_rel_l2"} for r in got["rollbacks"]]
    assert strip == [{k: v for k, v in r.items() if k != "val_rel_l2"}
                     for r in want["rollbacks"]]


@pytest.fixture(scope="module")
def reference(tmp_path_factory, burgers_file):
    """The unstable run, never stopped: four epochs, epoch 3 undone once."""
    run = tmp_path_factory.mktemp("divergence") / "reference"
    _fit(run, burgers_file, _config())
    return run


def test_a_diverged_epoch_is_undone_and_trained_again_at_half_the_rate(reference):
    state, info = _state(reference), json.loads((reference / "run.json").read_text())
    assert [r["epoch"] for r in state["rollbacks"]] == [3]
    (rollback,) = info["rollbacks"]
    assert rollback["lr_scale"] == 0.5
    assert "17 times the lowest before it" in rollback["reason"]
    history = state["history"]["train_loss"]
    assert len(history) == EPOCHS_COMPARED
    assert history[2] < 10 * min(history[:2])  # the epoch trained again did not diverge
    assert rollback["train_loss"] > 10 * min(history[:2])  # the undone one did
    # the rest of the one-cycle schedule runs at half the rate: the recorded lr of epoch 4 is
    # half the schedule's
    fresh = _fresh_schedule(_config(), steps_per_epoch=6)
    for _ in range(4 * 6 - 1):
        fresh[0].step()
        fresh[1].step()
    assert math.isclose(state["history"]["lr"][3], 0.5 * fresh[0].param_groups[0]["lr"],
                        rel_tol=1e-12)
    assert info["status"] == "interrupted"


@pytest.mark.parametrize("minutes", [0, 1e-9])  # 1e-9: a partial.pt after every step
def test_a_run_stopped_right_after_a_rollback_resumes_to_the_same_weights(
        reference, burgers_file, tmp_path, monkeypatch, minutes):
    run = tmp_path / "run"
    save = trainer_module.Trainer.save_last

    class _Stop(Exception):
        pass

    def save_and_stop(self, within=None):
        save(self, within)
        if self.rollbacks and within is None and self.epoch == 2:
            raise _Stop  # killed once last.pt holds the rollback
    monkeypatch.setattr(trainer_module.Trainer, "save_last", save_and_stop)
    with pytest.raises(_Stop):
        _fit(run, burgers_file, _config(checkpoint_minutes=minutes))
    assert len(_state(run)["rollbacks"]) == 1
    monkeypatch.setattr(trainer_module.Trainer, "save_last", save)
    _fit(run, burgers_file, _config(checkpoint_minutes=minutes))
    _assert_same_run(run, reference)


def test_a_run_the_guard_stopped_goes_on_with_more_rollbacks(reference, burgers_file, tmp_path):
    run = tmp_path / "run"
    with pytest.raises(dv.TrainingDivergedError,
                       match=r"epoch 3 again after 0 rollbacks \(max_rollbacks 0\)") as err:
        _fit(run, burgers_file, _config(max_rollbacks=0))
    assert "best.pt (epoch 2" in str(err.value)
    assert "max_rollbacks=K (K > 0) trains epoch 3 again" in str(err.value)
    info = json.loads((run / "run.json").read_text())
    assert info["status"] == "diverged"
    assert info["epochs_completed"] == 2
    assert [r["lr_scale"] for r in info["rollbacks"]] == [0.5]  # undone before stopping
    _fit(run, burgers_file, _config(max_rollbacks=1))  # a resume-free setting
    _assert_same_run(run, reference)


def test_divergence_in_the_first_epoch_stops_the_run(burgers_file, tmp_path):
    run = tmp_path / "run"
    with pytest.raises(dv.TrainingDivergedError,
                       match=r"epoch 1 in its first epoch .*not finite.*lower --lr"):
        _fit(run, burgers_file, _config(lr_max=10.0, scheduler="constant"), epochs=1)
    assert json.loads((run / "run.json").read_text())["status"] == "diverged"


def test_the_guard_off_keeps_the_diverged_epoch(burgers_file, tmp_path):
    run = tmp_path / "run"
    trainer = _fit(run, burgers_file, _config(divergence_factor=0), epochs=3)
    losses = trainer.history["train_loss"]
    assert trainer.rollbacks == []
    assert losses[2] > 10 * min(losses[:2])


def test_the_command_line_reports_the_guard_giving_up_in_one_line(burgers_file, tmp_path,
                                                                  capsys):
    args = ["train", "--data", str(burgers_file), "--out", str(tmp_path / "run"),
            "--preset", PRESET, "--resolution", "64", "--batch-size", "2", "--epochs", "8",
            "--n-train", "12", "--n-val", "4", "--n-test", "4", "--amp", "none",
            "--threads", "1", "--lr", "0.1", "--checkpoint-minutes", "0",
            "--set", "min_warmup_steps=0", "--set", "max_rollbacks=0",
            *set_args(TINY_BURGERS)]
    assert main(args) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert "Traceback" not in "\n".join(err)
    assert err[-1].startswith("neuralop-fem train: error: ")
    assert "training diverged in epoch 3 again after 0 rollbacks" in err[-1]


def _fresh_schedule(config: TrainConfig, *, steps_per_epoch: int):
    model = torch.nn.Linear(2, 1)
    optimizer = make_optimizer(model.parameters(), config)
    return optimizer, make_scheduler(optimizer, config, steps_per_epoch=steps_per_epoch)


@pytest.mark.parametrize("scheduler", ["onecycle", "cosine", "step", "plateau", "constant"])
def test_scale_lr_halves_the_rest_of_every_schedule(scheduler):
    config = TrainConfig(scheduler=scheduler, epochs=10, step_epochs=2, plateau_patience=0,
                         warmup_epochs=1, lr_decay=0.5)
    steps = 3
    plain, scaled = (_fresh_schedule(config, steps_per_epoch=steps) for _ in range(2))
    per_epoch = scheduler in ("step", "plateau")
    vals = [1.0, 0.9, 0.95, 0.97, 0.99, 0.5, 0.6, 0.7, 0.8, 0.9]
    for epoch in range(10):
        if epoch == 4:
            dv.scale_lr(*scaled, 0.5)
        for _ in range(steps):
            ratio = scaled[0].param_groups[0]["lr"] / plain[0].param_groups[0]["lr"]
            assert math.isclose(ratio, 0.5 if epoch >= 4 else 1.0, rel_tol=1e-12), (epoch, ratio)
            for opt, sched in (plain, scaled):
                opt.step()
                if not per_epoch:
                    sched.step()
        for _opt, sched in (plain, scaled):
            if per_epoch:
                step_epoch(sched, config, vals[epoch])


def test_a_tampered_rollback_record_is_refused(reference, burgers_file, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(reference, run)
    state = _state(run)
    state["rollbacks"][0]["lr_scale"] = 1.0  # the optimizer's rates are still halved
    torch.save(state, run / "last.pt")
    with pytest.raises(RunDirectoryError, match=r"last.pt: field `rollbacks`"):
        _fit(run, burgers_file, _config(), epochs=5)
    state["rollbacks"] = []  # the rates no longer match the run's settings
    torch.save(state, run / "last.pt")
    with pytest.raises(RunDirectoryError, match=r"optimizer.param_groups\[0\]\.initial_lr"):
        _fit(run, burgers_file, _config(), epochs=5)


def test_a_non_finite_loss_is_recorded_as_null_in_strict_json(burgers_file, tmp_path):
    """Constant lr 1: epoch 1's mean loss is about 1e17, epoch 2's infinite (measured)."""
    run = tmp_path / "run"
    try:
        _fit(run, burgers_file, _config(lr_max=1.0, scheduler="constant"), epochs=2)
    except dv.TrainingDivergedError:
        pass  # the halved rates may diverge as well; the records are the point here

    def refuse(token):
        raise AssertionError(token)
    info = json.loads((run / "run.json").read_text(), parse_constant=refuse)
    first = info["rollbacks"][0]
    assert first["epoch"] == 2
    assert first["train_loss"] is None
    assert "not finite" in first["reason"]
