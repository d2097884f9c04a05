"""Trainer: loss decreases, bitwise resume, checkpoints, splits and normalisers, bf16, refusals."""

from __future__ import annotations

import csv

import numpy as np
import pytest
import torch

from neuralop_fem.data import load_dataset
from neuralop_fem.errors import ConfigError
from neuralop_fem.models import PRESETS
from neuralop_fem.training import TrainConfig, Trainer, load_trained, read_run_info

from .conftest import TINY_BURGERS, TINY_DARCY, TINY_INVERSE

BURGERS = TrainConfig(task="burgers", epochs=3, batch_size=4, n_train=12, n_val=4, n_test=4,
                      resolution=64, gamma=0.1)
DARCY = TrainConfig(task="darcy", epochs=2, batch_size=2, n_train=8, n_val=3, n_test=3,
                    gamma=0.5)


def _burgers_model(**extra):
    return PRESETS["burgers-galerkin"].replace(**TINY_BURGERS, **extra)


def _darcy_model():
    return PRESETS["darcy-galerkin"].replace(**TINY_DARCY)


def test_training_reduces_the_loss(tmp_path, burgers_file):
    # the paper's schedule (min_warmup_steps=0): lr_max after 4.5 of the 15 steps
    cfg = BURGERS.replace(epochs=5, min_warmup_steps=0)
    trainer = Trainer(tmp_path / "run", burgers_file, model_config=_burgers_model(), config=cfg)
    result = trainer.fit()
    loss = trainer.history["train_loss"]
    # 5 epochs x 3 steps from the ~1.3 of a near-zero initial prediction: at least 20 % lower.
    assert loss[-1] < 0.8 * loss[0], loss
    assert result["finished"]
    assert result["epochs_completed"] == 5
    assert np.isfinite(result["test_rel_l2_best"])
    assert np.isfinite(result["test_rel_l2_final"])
    with (tmp_path / "run" / "metrics.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert [int(r["epoch"]) for r in rows] == [1, 2, 3, 4, 5]
    assert float(rows[0]["train_loss"]) == loss[0]
    assert (tmp_path / "run" / "loss_curve.png").stat().st_size > 0


def test_global_target_normaliser_makes_training_scale_free(tmp_path, burgers_file):
    # With targets scaled by 1/50 (like u(1) at viscosity 0.1), the global target normaliser
    # absorbs the scale: relative errors and the trained network are the same as unscaled.
    data = load_dataset(burgers_file).load()
    small = data.copy(deep=True)
    small["u"] = small["u"] / 50.0
    cfg = BURGERS.replace(target_normalizer="global")
    runs = {}
    for name, ds in (("unit", data), ("small", small)):
        trainer = Trainer(tmp_path / name, ds, model_config=_burgers_model(), config=cfg)
        trainer.fit()
        runs[name] = trainer
    unit, scaled = runs["unit"], runs["small"]
    # Without the normaliser, such small targets draw a warning that names the fix.
    with pytest.warns(UserWarning, match="target_normalizer='global'"):
        Trainer(tmp_path / "warned", small, model_config=_burgers_model(), config=BURGERS)
    norm = scaled.data.output_normalizer
    assert norm.mean.shape == (1, 1)
    np.testing.assert_allclose(float(norm.std), float(unit.data.output_normalizer.std) / 50,
                               rtol=1e-5)
    np.testing.assert_allclose(unit.history["val_rel_l2"], scaled.history["val_rel_l2"], rtol=2e-3)
    # The normaliser is saved and applies at another resolution.
    model, _ = load_trained(tmp_path / "small")
    with torch.no_grad():
        out = model(torch.zeros(1, 128, 1))
    assert out.shape == (1, 128, 1)
    assert torch.isfinite(out).all()


def test_run_json_carries_the_ood_reference(tmp_path, darcy_file):
    import shutil
    import warnings

    from neuralop_fem.surrogate import OODWarning, Surrogate

    data = tmp_path / "copy.nc"
    shutil.copy(darcy_file, data)
    cfg = DARCY.replace(epochs=1)
    Trainer(tmp_path / "run", data, model_config=_darcy_model(), config=cfg).fit()
    ref = read_run_info(tmp_path / "run")["ood_reference"]
    assert ref["problem"] == "darcy"
    assert ref["n_train"] == cfg.n_train
    assert len(ref["value_set"]) == 2
    data.unlink()  # the surrogate no longer needs the training file for its OOD check
    surrogate = Surrogate.load(tmp_path / "run")
    assert surrogate.ood_reference is not None
    a = np.asarray(load_dataset(darcy_file)["a"].values[:2])
    with warnings.catch_warnings():
        warnings.simplefilter("error", OODWarning)
        surrogate.solve(a)  # training-like inputs: no warning
    with pytest.warns(OODWarning, match="outside the training set"):
        surrogate.solve(a * 1.7)


def _state(run_dir):
    last = torch.load(run_dir / "last.pt", weights_only=True)
    best = torch.load(run_dir / "best.pt", weights_only=True)
    return last, best


def test_interrupted_run_resumes_bitwise(tmp_path, burgers_file):
    # Dropout on so that the torch RNG state matters; it must be restored exactly.
    model = _burgers_model(encoder_dropout=0.1, ffn_dropout=0.1)
    Trainer(tmp_path / "full", burgers_file, model_config=model, config=BURGERS).fit()
    first = Trainer(tmp_path / "cut", burgers_file, model_config=model, config=BURGERS)
    out = first.fit(max_epochs_this_call=1)
    assert not out["finished"]
    assert out["epochs_completed"] == 1
    resumed = Trainer(tmp_path / "cut", burgers_file, model_config=model, config=BURGERS)
    assert resumed.epoch == 1
    resumed.fit()
    (last_a, best_a), (last_b, best_b) = _state(tmp_path / "full"), _state(tmp_path / "cut")
    for key, value in last_a["model"].items():
        assert torch.equal(value, last_b["model"][key]), key
    for key, value in best_a["state_dict"].items():
        assert torch.equal(value, best_b["state_dict"][key]), key
    for group_a, group_b in zip(last_a["optimizer"]["state"].values(),
                                last_b["optimizer"]["state"].values(), strict=True):
        assert torch.equal(group_a["exp_avg_sq"], group_b["exp_avg_sq"])
    for key in ("train_loss", "val_rel_l2", "lr"):
        assert last_a["history"][key] == last_b["history"][key], key
    assert last_a["scheduler"]["last_epoch"] == last_b["scheduler"]["last_epoch"]


def test_checkpoint_round_trip(tmp_path, burgers_file):
    trainer = Trainer(tmp_path / "run", burgers_file, model_config=_burgers_model(), config=BURGERS)
    trainer.fit()
    model, info = load_trained(tmp_path / "run")
    assert info["status"] == "finished"
    assert info["best_epoch"] == trainer.best_epoch
    # The reloaded model reproduces the validation error recorded at the best epoch exactly.
    val = trainer.errors(model, trainer.data.val).mean()
    assert val == trainer.history["val_rel_l2"][trainer.best_epoch - 1]
    x = trainer.data.test[0]["input"][None]
    with torch.no_grad():
        assert torch.equal(model(x), load_trained(tmp_path / "run")[0](x))
    # Every checkpoint loads without unpickling code.
    for name in ("best.pt", "last.pt"):
        torch.load(tmp_path / "run" / name, weights_only=True)


def test_selection_and_normalisers_never_see_test_samples(tmp_path, darcy_file):
    clean = load_dataset(darcy_file).load()
    spoiled = clean.copy(deep=True)
    spoiled["u"][-DARCY.n_test:] = spoiled["u"][-DARCY.n_test:] * 7.0 + 1.0
    spoiled["a"][-DARCY.n_test:] = 3.0
    runs = []
    for name, data in (("clean", clean), ("spoiled", spoiled)):
        trainer = Trainer(tmp_path / name, data, model_config=_darcy_model(), config=DARCY)
        trainer.fit()
        runs.append(trainer)
    a, b = runs
    assert set(a.data.splits["val"]).isdisjoint(a.data.splits["test"])
    assert a.history["val_rel_l2"] == b.history["val_rel_l2"]
    assert a.best_epoch == b.best_epoch
    best_a, best_b = _state(tmp_path / "clean")[1], _state(tmp_path / "spoiled")[1]
    for key, value in best_a["state_dict"].items():
        assert torch.equal(value, best_b["state_dict"][key]), key


def test_normalisers_fitted_on_training_split_only(tmp_path, darcy_file):
    trainer = Trainer(tmp_path / "run", darcy_file, model_config=_darcy_model(), config=DARCY)
    ds = load_dataset(darcy_file)
    a_train = ds["a"].values[: DARCY.n_train][..., None]
    u_train = ds["u"].values[: DARCY.n_train][..., None]
    # float32 storage of statistics accumulated in float64: agreement to float32 rounding.
    torch.testing.assert_close(trainer.operator.input_normalizer.mean,
                               torch.tensor(a_train.mean(0), dtype=torch.float32))
    torch.testing.assert_close(trainer.operator.output_normalizer.std,
                               torch.tensor(u_train.std(0), dtype=torch.float32))
    assert trainer.operator.dirichlet


def test_inverse_problem_and_bf16(tmp_path, darcy_file):
    cfg = TrainConfig(task="darcy-inverse", epochs=1, batch_size=2, n_train=8, n_val=3,
                      n_test=3, gamma=0.0, noise=0.01, amp="bf16")
    model = PRESETS["darcy-inverse-galerkin"].replace(**TINY_INVERSE)
    trainer = Trainer(tmp_path / "run", darcy_file, model_config=model, config=cfg)
    result = trainer.fit()
    assert trainer.data.coarse_resolution == 8  # round(0.25 * 28) + 1
    assert trainer.data.train[0]["target"].shape == (8, 8, 1)
    assert np.isfinite(result["test_rel_l2_best"])
    assert not trainer.operator.dirichlet


def test_existing_runs_are_protected(tmp_path, burgers_file):
    cfg = BURGERS.replace(epochs=1)
    Trainer(tmp_path / "run", burgers_file, model_config=_burgers_model(), config=cfg).fit()
    with pytest.raises(ConfigError, match="holds a finished run"):
        Trainer(tmp_path / "run", burgers_file, model_config=_burgers_model(), config=cfg)
    with pytest.raises(ConfigError, match=r"other settings: gamma: 0.1 \(run\) vs 0.2 \(now\)"):
        Trainer(tmp_path / "run", burgers_file, model_config=_burgers_model(),
                config=cfg.replace(gamma=0.2))
    with pytest.raises(ConfigError, match=r"model.num_layers: 2 \(run\) vs 1 \(now\)"):
        Trainer(tmp_path / "run", burgers_file, model_config=_burgers_model().replace(num_layers=1),
                config=cfg)
    fresh = Trainer(tmp_path / "run", burgers_file, model_config=_burgers_model(), config=cfg,
                    overwrite=True)
    assert fresh.epoch == 0


def test_batch_larger_than_training_split(tmp_path, burgers_file):
    with pytest.raises(ConfigError, match="at least `batch_size`=16 samples"):
        Trainer(tmp_path / "run", burgers_file, model_config=_burgers_model(),
                config=BURGERS.replace(batch_size=16))


def test_a_second_trainer_in_the_same_run_directory_is_refused(burgers_file, tmp_path):
    from neuralop_fem.errors import RunDirectoryError

    model = _burgers_model()
    first = Trainer(tmp_path / "run", burgers_file, model_config=model, config=BURGERS)
    with pytest.raises(RunDirectoryError, match="another trainer is using this run directory"):
        Trainer(tmp_path / "run", burgers_file, model_config=model, config=BURGERS)
    first.close()  # released: the run can be taken up again (and no lock file is left)
    with Trainer(tmp_path / "run", burgers_file, model_config=model, config=BURGERS) as again:
        again.fit(max_epochs_this_call=1)
    assert not (tmp_path / "run" / ".lock").exists()
