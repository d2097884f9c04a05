"""Optimisers, schedules, early stopping and gradient accumulation; bitwise resume with each."""

from __future__ import annotations

import math

import pytest
import torch

from neuralop_fem.errors import ConfigError
from neuralop_fem.models import PRESETS
from neuralop_fem.training import TrainConfig, Trainer
from neuralop_fem.training.optim import make_optimizer, make_scheduler

from ..test_cli_errors import run_cli
from .conftest import TINY_BURGERS

#: 12 training samples in batches of 4: 3 batches per epoch; a 4-epoch run stopped after 2.
BASE = TrainConfig(task="burgers", epochs=4, batch_size=4, n_train=12, n_val=4, n_test=4,
                   resolution=32, gamma=0.1)
MODEL = PRESETS["burgers-galerkin"].replace(**{**TINY_BURGERS, "num_layers": 1})

SCHEDULES = {
    "onecycle": {},
    "cosine-warmup-adamw": {"scheduler": "cosine", "warmup_epochs": 1, "optimizer": "adamw",
                            "weight_decay": 1e-2},
    "step": {"scheduler": "step", "step_epochs": 1, "lr_decay": 0.5, "weight_decay": 1e-3},
    "plateau": {"scheduler": "plateau", "plateau_patience": 0, "lr_decay": 0.5},
    "constant-accumulate": {"scheduler": "constant", "grad_accumulation": 2},
}


def _lrs(config: TrainConfig, steps_per_epoch: int) -> list[float]:
    """The lr of every optimizer step of a run (no training: a zero-size parameter)."""
    opt = make_optimizer([torch.nn.Parameter(torch.zeros(1))], config)
    sched = make_scheduler(opt, config, steps_per_epoch=steps_per_epoch)
    out = []
    for _ in range(config.epochs * steps_per_epoch):
        out.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return out


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_resume_is_bitwise_with_every_schedule(name, tmp_path, burgers_file):
    cfg = BASE.replace(**SCHEDULES[name])
    full = Trainer(tmp_path / "full", burgers_file, model_config=MODEL, config=cfg)
    full.fit()
    Trainer(tmp_path / "cut", burgers_file, model_config=MODEL,
            config=cfg).fit(max_epochs_this_call=2)
    resumed = Trainer(tmp_path / "cut", burgers_file, model_config=MODEL, config=cfg)
    assert resumed.epoch == 2
    resumed.fit()
    a = torch.load(tmp_path / "full" / "last.pt", weights_only=True)
    b = torch.load(tmp_path / "cut" / "last.pt", weights_only=True)
    assert a["epoch"] == b["epoch"] == 4
    for key, value in a["model"].items():
        assert torch.equal(value, b["model"][key]), key
    assert a["history"]["lr"] == b["history"]["lr"]
    assert a["history"]["train_loss"] == b["history"]["train_loss"]
    assert a["scheduler"] == b["scheduler"]
    lrs = a["history"]["lr"]  # the lr of each epoch's last step
    if name == "step":
        assert lrs == [1e-3 * 0.5**k for k in range(4)]
    if name.startswith("constant"):
        assert lrs == [1e-3] * 4
        assert full.steps_per_epoch == 2  # 3 batches: a group of 2, then 1


def test_cosine_schedule_warms_up_then_decays_to_the_final_lr():
    cfg = BASE.replace(scheduler="cosine", warmup_epochs=1, epochs=5)
    lrs = _lrs(cfg, steps_per_epoch=4)
    lr_max, start = cfg.lr_max, cfg.lr_max / cfg.div_factor
    assert lrs[0] == pytest.approx(start)
    assert lrs[2] == pytest.approx(start + (lr_max - start) * 2 / 4)  # linear warm-up
    assert lrs[4] == pytest.approx(lr_max)  # the peak right after the warm-up
    assert lrs[-1] == pytest.approx(lr_max / (cfg.div_factor * cfg.final_div_factor))
    middle = 4 + (19 - 4) // 2  # halfway through the decay: the mean of the ends
    assert lrs[middle] == pytest.approx(0.5 * (lr_max + lrs[-1]), rel=0.2)
    assert all(x >= y for x, y in zip(lrs[4:], lrs[5:], strict=False))


def test_onecycle_default_is_the_paper_schedule():
    # 30 warm-up steps are fewer than min_warmup_steps, which would lower the peak
    # (tests/training/test_config.py): 0 gives the paper's schedule on any run length.
    lrs = _lrs(BASE.replace(epochs=10, min_warmup_steps=0), steps_per_epoch=10)
    assert max(lrs) == pytest.approx(1e-3)
    assert lrs.index(max(lrs)) == 29  # pct_start 0.3 of 100 steps: peak at step 30 - 1
    assert lrs[0] == pytest.approx(1e-3 / 1e4)


def test_adam_and_adamw_weight_decay_differ_as_documented():
    # One step from w = 1 with zero gradient: Adam's L2 term becomes a gradient of size
    # weight_decay, so the normalised step is lr; AdamW shrinks w by lr * weight_decay.
    out = {}
    for name in ("adam", "adamw"):
        w = torch.nn.Parameter(torch.ones(1))
        opt = make_optimizer([w], BASE.replace(optimizer=name, weight_decay=0.1))
        w.grad = torch.zeros(1)
        opt.step()
        out[name] = float(w.detach())
    assert out["adam"] == pytest.approx(1 - 1e-3, rel=1e-6)
    assert out["adamw"] == pytest.approx(1 - 1e-3 * 0.1, rel=1e-6)


def test_gradient_accumulation_equals_the_larger_batch(tmp_path, burgers_file):
    # 2 batches of 4 accumulated = 1 batch of 8 (same samples, same order: the loss is a
    # mean over samples, so the gradients agree up to float32 rounding).
    cfg = BASE.replace(n_train=8, epochs=1, scheduler="constant", grad_clip=0.0)
    big = Trainer(tmp_path / "big", burgers_file, model_config=MODEL,
                  config=cfg.replace(batch_size=8))
    acc = Trainer(tmp_path / "acc", burgers_file, model_config=MODEL,
                  config=cfg.replace(batch_size=4, grad_accumulation=2))
    assert acc.steps_per_epoch == big.steps_per_epoch == 1
    big.fit()
    acc.fit()
    for (name, p), q in zip(big.operator.named_parameters(), acc.operator.parameters(),
                            strict=True):
        torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-6, msg=name)


def test_early_stopping_ends_the_run_and_resume_agrees(tmp_path, burgers_file):
    # lr so large that validation stops improving after the first epochs: with patience 1
    # the run ends before its 8 epochs, as finished, with the test errors computed.
    cfg = BASE.replace(epochs=8, scheduler="constant", lr_max=0.5, early_stopping=1)
    trainer = Trainer(tmp_path / "run", burgers_file, model_config=MODEL, config=cfg)
    result = trainer.fit()
    assert result["finished"]
    assert result["epochs_completed"] < 8
    assert result["epochs_completed"] == trainer.best_epoch + 1
    assert math.isfinite(result["test_rel_l2_best"])
    with pytest.raises(ConfigError, match="holds a finished run"):
        Trainer(tmp_path / "run", burgers_file, model_config=MODEL, config=cfg)


@pytest.mark.parametrize(("field", "value", "match"), [
    ("scheduler", "cyclic", r"`scheduler` must be one of 'onecycle', 'cosine', 'step', "
                            r"'plateau', 'constant'; got 'cyclic'"),
    ("optimizer", "sgd", r"`optimizer` must be one of 'adam', 'adamw'; got 'sgd'"),
    ("lr_decay", 1.0, r"`lr_decay` must be a number in \(0, 1\); got 1.0"),
    ("grad_accumulation", 0, r"`grad_accumulation` must be an integer >= 1; got 0"),
    ("weight_decay", -1e-3, r"`weight_decay` must be a finite number >= 0; got -0.001"),
    ("early_stopping", -1, r"`early_stopping` must be an integer >= 0; got -1"),
])
def test_bad_settings_are_refused(field, value, match):
    with pytest.raises(ConfigError, match=match):
        BASE.replace(**{field: value})


def test_a_cosine_warm_up_as_long_as_the_run_is_refused_before_any_work(tmp_path, burgers_file):
    """``--set warmup_epochs`` >= ``--epochs`` with the cosine schedule: the warm-up would take
    the whole run and the rate never decay. One line naming both, exit 2, no run directory."""
    run = tmp_path / "run"
    proc = run_cli(["train", "--data", str(burgers_file), "--preset", "burgers-galerkin",
                    "--out", str(run), "--epochs", "3", "--set", "scheduler=cosine",
                    "--set", "warmup_epochs=3"])
    assert proc.returncode == 2
    assert proc.stderr == ("neuralop-fem train: error: argument --set: key `warmup_epochs` must "
                           "be fewer than --epochs with the cosine scheduler (the warm-up would "
                           "take the whole run, which would then never decay); got "
                           "warmup_epochs=3 and --epochs 3.\n")
    assert not run.exists()
    with pytest.raises(ConfigError, match="`warmup_epochs` must be fewer than `epochs`"):
        TrainConfig(task="burgers", epochs=5, scheduler="cosine", warmup_epochs=5)
    assert TrainConfig(task="burgers", epochs=5, scheduler="cosine", warmup_epochs=4)
    assert TrainConfig(task="burgers", epochs=5, scheduler="onecycle", warmup_epochs=5)
