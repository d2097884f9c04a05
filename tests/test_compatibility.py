"""Files written by an earlier release keep loading (tests/resources/compat_3ded0bf).

The fixture was written by the release before the layout change (see its README.md): two
small datasets and a trained run directory. A change that breaks any of these is a format
change, which needs a decision and a migration, not an accident.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from neuralop_fem import Surrogate, generate, load_dataset
from neuralop_fem.data.fingerprint import sketch_difference, values_difference, values_sketch
from neuralop_fem.data.generation import read_generation_settings
from neuralop_fem.data.provenance import variables_checksum
from neuralop_fem.evaluation import evaluate_run
from neuralop_fem.training import load_trained, read_run_info

FIXTURE = Path(__file__).parent / "resources" / "compat_3ded0bf"


@pytest.mark.parametrize(("name", "problem", "shape"), [
    ("burgers_n64.nc", "burgers", {"sample": 6, "x": 64}),
    ("darcy_n17.nc", "darcy", {"sample": 10, "x": 17, "y": 17}),
])
def test_datasets_load_and_validate(name, problem, shape):
    with load_dataset(FIXTURE / name) as ds:
        assert ds.attrs["problem"] == problem
        assert dict(ds.sizes) == shape
        assert np.isfinite(ds["u"].values).all()


def test_generation_settings_of_the_earlier_release_are_understood():
    burgers = read_generation_settings(FIXTURE / "burgers_n64.nc")
    assert burgers["config"].solver == "spectral"
    assert burgers["config"].cfl is None
    darcy = read_generation_settings(FIXTURE / "darcy_n17.nc")
    assert darcy["config"].averaging == "harmonic"
    assert darcy["config"].element is None
    assert darcy["dataset_seed"] == 7
    assert darcy["n_samples"] == 10


def test_an_earlier_file_regenerates_and_extends(tmp_path):
    """The fixture was written on another machine, so its values come back to rounding only
    (numpy picks its exp/sin/cos loops by the CPU: neuralop_fem.data.fingerprint); what this
    machine computes on both sides comes back bit for bit."""
    old = FIXTURE / "darcy_n17.nc"
    fresh = generate("darcy", n_samples=10, resolution=17, seed=7, out=tmp_path / "new.nc",
                     workers=0, progress=False)
    again = generate("darcy", n_samples=10, resolution=17, seed=7, out=tmp_path / "again.nc",
                     workers=0, progress=False)
    with load_dataset(old) as a, load_dataset(fresh) as b, load_dataset(again) as c:
        assert values_difference(a, b) <= 1e-13
        assert sketch_difference(values_sketch(a), values_sketch(b)) <= 1e-13
        assert variables_checksum(b) == variables_checksum(c)
    copy = tmp_path / "old.nc"
    shutil.copy(old, copy)
    generate("darcy", n_samples=2, out=copy, append=True, workers=0, progress=False)
    whole = generate("darcy", n_samples=12, resolution=17, seed=7, out=tmp_path / "12.nc",
                     workers=0, progress=False)
    with load_dataset(copy) as a, load_dataset(whole) as b:
        assert values_difference(a, b) <= 1e-13
        appended = slice(10, None)
        assert variables_checksum(a.isel(sample=appended)) == variables_checksum(
            b.isel(sample=appended))


def test_the_run_directory_loads_and_predicts_as_it_did(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURE / "run_darcy_fno", run)  # a copied run: its data path is stale
    info = read_run_info(run)
    assert info["preset"] == "darcy-fno"
    assert info["status"] == "finished"
    operator, _ = load_trained(run)
    assert operator is not None
    surrogate = Surrogate.load(run, device="cpu")
    a = load_dataset(FIXTURE / "darcy_n17.nc")["a"].values[:3]
    np.testing.assert_allclose(surrogate.solve(a), np.load(FIXTURE / "expected_prediction.npy"),
                               rtol=1e-6, atol=1e-9)
    result = evaluate_run(run, FIXTURE / "darcy_n17.nc")
    assert np.isfinite(result["rel_l2"]).all()
    assert len(result["rel_l2"]) == 2
