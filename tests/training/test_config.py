"""TrainConfig validation and JSON round trip, presets, splits, the one-cycle schedule."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neuralop_fem.errors import ConfigError
from neuralop_fem.models import PRESETS
from neuralop_fem.training import TRAIN_PRESETS, TrainConfig, split_indices, training_preset
from neuralop_fem.training.trainer import make_optimizer, make_scheduler


def test_json_round_trip_with_explicit_indices():
    cfg = TrainConfig(task="darcy", gamma=0.5, train_indices=[0, 1, 2], val_indices=(3,),
                      test_indices=[5, 4], amp="bf16", resolution=141)
    back = TrainConfig.from_json(cfg.to_json())
    assert back == cfg
    assert back.train_indices == (0, 1, 2)


def test_unknown_key_rejected():
    with pytest.raises(ConfigError, match=r"Unknown TrainConfig key\(s\) \['learning_rate'\]"):
        TrainConfig.from_dict({"learning_rate": 1e-3})


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"task": "heat"}, "`task` must be one of"),
        ({"epochs": 0}, "`epochs` must be an integer >= 1; got 0"),
        # torch seeds and JSON/netCDF integers are 64-bit: refused here, not in the trainer
        ({"seed": 2**63}, "`seed` must be an integer >= 0 that fits in 64 bits"),
        ({"epochs": 2**64}, "`epochs` must be an integer >= 1 that fits in 64 bits"),
        ({"lr_max": -1.0}, "`lr_max` must be a finite number > 0; got -1.0"),
        ({"pct_start": 1.0}, r"`pct_start` must be a number in \(0, 1\); got 1.0"),
        ({"grad_clip": float("nan")}, "`grad_clip` must be a finite number >= 0"),
        ({"amp": "fp16"}, "`amp` must be one of 'auto', 'none', 'bf16'; got 'fp16'"),
        ({"threads": 0}, "`threads` must be an integer >= 1; got 0"),
        ({"resolution": 1}, "`resolution` must be an integer >= 2 or None; got 1"),
        ({"target_normalizer": "pointwise"},
         "`target_normalizer` must be one of 'reference', 'global'; got 'pointwise'"),
        ({"train_indices": [0, 1]}, "must be given together"),
        ({"train_indices": [0, 1], "val_indices": [1], "test_indices": [2]},
         "`val_indices` must not share samples with `train_indices`; got index 1"),
    ],
)
def test_bad_values(changes, match):
    with pytest.raises(ConfigError, match=match):
        TrainConfig(**changes)


def test_presets_follow_the_paper():
    assert set(TRAIN_PRESETS) == set(PRESETS)
    assert training_preset("burgers-galerkin").resolution == 512
    assert training_preset("burgers-galerkin").batch_size == 8
    assert training_preset("burgers-fourier").gamma == 0.1
    assert training_preset("darcy-galerkin").lr_max == 1e-3
    assert training_preset("darcy-fourier").lr_max == 5e-4
    assert training_preset("darcy-fno").gamma == 0.5
    inverse = training_preset("darcy-inverse-galerkin")
    assert (inverse.task, inverse.gamma, inverse.resolution, inverse.noise) == (
        "darcy-inverse", 0.0, 141, 0.01)


@pytest.mark.parametrize(("base", "epochs"), [("burgers-galerkin", 400), ("burgers-fourier", 300),
                                               ("burgers-fno", 200)])
def test_the_long_recipe_changes_only_its_training_settings(base, epochs):
    paper, long = training_preset(base), training_preset(f"{base}-long")
    assert PRESETS[f"{base}-long"] == PRESETS[base]  # same architecture
    changed = {k for k, v in long.to_dict().items() if paper.to_dict()[k] != v}
    assert changed == {"epochs", "lr_max", "gamma"}
    assert (long.epochs, long.lr_max, long.gamma) == (epochs, 5e-4, 0.5)
    assert (paper.epochs, paper.lr_max, paper.gamma) == (100, 1e-3, 0.1)  # the paper's, untouched


def test_unknown_preset_lists_names():
    match = "Unknown preset 'burgers-gt'. Available: 'burgers-galerkin'"
    with pytest.raises(ConfigError, match=match):
        training_preset("burgers-gt")


def test_default_split_is_paper_layout():
    cfg = TrainConfig(n_train=1024, n_val=100, n_test=100)
    s = split_indices(1224, cfg)
    np.testing.assert_array_equal(s["train"], np.arange(1024))
    np.testing.assert_array_equal(s["val"], np.arange(1024, 1124))
    np.testing.assert_array_equal(s["test"], np.arange(1124, 1224))
    # A larger file: test stays the last 100, validation the 100 before, train the first 1024.
    s = split_indices(2048, cfg)
    assert s["test"][0] == 1948
    assert s["val"][0] == 1848
    assert s["train"][-1] == 1023


def test_too_few_samples_names_the_numbers():
    with pytest.raises(ConfigError, match=r"1024 \+ 100 \+ 100 = 1224 samples; got 1000"):
        split_indices(1000, TrainConfig())


def test_explicit_indices_out_of_range():
    cfg = TrainConfig(train_indices=[0], val_indices=[1], test_indices=[9])
    with pytest.raises(ConfigError, match="must be < the dataset's 5 samples; got index 9"):
        split_indices(5, cfg)


def test_one_cycle_schedule_shape():
    # min_warmup_steps=0: the paper's schedule, whatever the warm-up length (60 steps here)
    cfg = TrainConfig(epochs=10, lr_max=1e-3, pct_start=0.3, div_factor=1e4, final_div_factor=1e4,
                      min_warmup_steps=0)
    opt = make_optimizer([torch.nn.Parameter(torch.zeros(1))], cfg)
    steps = 20
    sched = make_scheduler(opt, cfg, steps_per_epoch=steps)
    lrs, betas = [], []
    for _ in range(cfg.epochs * steps):
        lrs.append(opt.param_groups[0]["lr"])
        betas.append(opt.param_groups[0]["betas"][0])
        opt.step()
        sched.step()
    total = cfg.epochs * steps
    peak = int(np.argmax(lrs))
    # torch puts the peak at step pct_start * total - 1 (end of epoch 3 of 10 here).
    assert peak == round(0.3 * total) - 1
    assert lrs[peak] == pytest.approx(1e-3, rel=1e-12)
    assert lrs[0] == pytest.approx(1e-3 / 1e4, rel=1e-12)
    assert lrs[-1] == pytest.approx(1e-3 / 1e8, rel=1e-9)
    # Momentum cycling: beta1 0.95 at the ends, 0.85 at the peak.
    assert betas[0] == pytest.approx(0.95)
    assert betas[peak] == pytest.approx(0.85)
    assert betas[-1] == pytest.approx(0.95)
    assert opt.param_groups[0]["weight_decay"] == 0.0


@pytest.mark.parametrize(("steps", "peak"), [(20, 6e-4), (40, 1e-3), (200, 1e-3)])
def test_a_short_warm_up_lowers_the_peak_in_proportion(steps, peak):
    """10 epochs, pct_start 0.3: warm-ups of 60, 120 and 600 steps. Below min_warmup_steps
    (100) the lr rises by lr_max / 100 per step on average at most: it peaks at 60 / 100
    lr_max."""
    cfg = TrainConfig(epochs=10, lr_max=1e-3, pct_start=0.3, div_factor=1e4, final_div_factor=1e4)
    opt = make_optimizer([torch.nn.Parameter(torch.zeros(1))], cfg)
    sched = make_scheduler(opt, cfg, steps_per_epoch=steps)
    lrs = []
    for _ in range(cfg.epochs * steps):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert max(lrs) == pytest.approx(peak, rel=1e-12)
    assert int(np.argmax(lrs)) == round(0.3 * cfg.epochs * steps) - 1
    assert lrs[0] == pytest.approx(peak / 1e4, rel=1e-12)
    # on average over the warm-up the lr rises by at most lr_max / 100 per step
    assert max(lrs) / (0.3 * cfg.epochs * steps) <= 1e-3 / 100 * (1 + 1e-12)
