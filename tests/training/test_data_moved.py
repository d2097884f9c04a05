"""Resuming a run after its data file moved (another folder, another machine): the same
dataset at a new path resumes; another dataset at the new path is refused."""

from __future__ import annotations

import logging
import shutil

import pytest

from neuralop_fem.data import generate
from neuralop_fem.data.io import load_dataset
from neuralop_fem.data.provenance import dataset_provenance
from neuralop_fem.errors import ConfigError
from neuralop_fem.models import PRESETS
from neuralop_fem.runs import DataRecord
from neuralop_fem.training import TrainConfig, Trainer, read_run_info
from neuralop_fem.training.data_identity import same_dataset

from .conftest import TINY_BURGERS

CONFIG = TrainConfig(task="burgers", epochs=2, batch_size=4, n_train=8, n_val=4, n_test=4,
                     resolution=32, gamma=0.1)


def _model():
    return PRESETS["burgers-galerkin"].replace(**TINY_BURGERS)


def _data(path, seed=1):
    path.parent.mkdir(parents=True, exist_ok=True)
    return generate("burgers", n_samples=16, resolution=64, seed=seed, out=path, workers=0,
                    progress=False)


@pytest.fixture
def one_epoch(tmp_path):
    """A run stopped after its first of two epochs, on data at ``tmp_path/a/data.nc``."""
    data = _data(tmp_path / "a" / "data.nc")
    run = tmp_path / "run"
    with Trainer(run, data, model_config=_model(), config=CONFIG) as trainer:
        trainer.fit(max_epochs_this_call=1)
    return run, data


def test_a_moved_data_file_resumes(one_epoch, tmp_path, caplog, monkeypatch):
    monkeypatch.setattr(logging.getLogger("neuralop_fem"), "propagate", True)
    run, data = one_epoch
    moved = tmp_path / "b" / "moved.nc"
    moved.parent.mkdir()
    shutil.move(data, moved)
    with caplog.at_level(logging.WARNING, logger="neuralop_fem"):
        with Trainer(run, moved, model_config=_model(), config=CONFIG) as trainer:
            assert trainer.epoch == 1
            result = trainer.fit()
    assert result["finished"]
    assert any("moved" in r.getMessage() and str(moved) in r.getMessage()
               for r in caplog.records)
    assert read_run_info(run)["data"]["path"] == str(moved)


def test_a_copy_regenerated_from_the_seed_resumes(one_epoch, tmp_path):
    """Regenerated elsewhere (same settings and seed): another ``created`` time, same data."""
    run, _ = one_epoch
    again = _data(tmp_path / "c" / "again.nc")
    with Trainer(run, again, model_config=_model(), config=CONFIG) as trainer:
        assert trainer.epoch == 1


def test_other_data_at_a_new_path_is_refused(one_epoch, tmp_path):
    run, data = one_epoch
    other = _data(tmp_path / "d" / "other.nc", seed=2)
    with pytest.raises(ConfigError, match=r"other settings: data_path: '.*data\.nc' \(run\) vs "
                                          r"'.*other\.nc' \(now\)"):
        Trainer(run, other, model_config=_model(), config=CONFIG)
    # the original file still resumes
    with Trainer(run, data, model_config=_model(), config=CONFIG) as trainer:
        assert trainer.epoch == 1


def _record(provenance):
    return DataRecord.from_dict(provenance)


def test_same_dataset_compares_settings_not_paths_or_times(tmp_path):
    first = dataset_provenance(load_dataset(_data(tmp_path / "1.nc")), tmp_path / "1.nc")
    again = dataset_provenance(load_dataset(_data(tmp_path / "2.nc")), tmp_path / "2.nc")
    seed2 = dataset_provenance(load_dataset(_data(tmp_path / "3.nc", seed=2)), tmp_path / "3.nc")
    assert first["path"] != again["path"]
    assert same_dataset(_record(first), _record(again))
    assert not same_dataset(_record(first), _record(seed2))
    assert not same_dataset(_record(first), _record({**again, "n_samples": 15}))
    # files not written by ``generate``: everything but the path and the creation time
    plain = {"path": "/x/a.nc", "problem": "burgers", "n_samples": 4, "grid": [8],
             "config_json": None, "attrs": {"created": "2026-01-01", "viscosity": 0.1}}
    moved = {**plain, "path": "/y/b.nc", "attrs": {"created": "2026-02-02", "viscosity": 0.1}}
    assert same_dataset(_record(plain), _record(moved))
    assert not same_dataset(_record(plain), _record({**moved, "attrs": {"viscosity": 0.2}}))
