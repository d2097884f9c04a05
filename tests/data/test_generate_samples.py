"""generate_samples: a few samples of a seeded dataset, by index, equal to the file's."""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr

from neuralop_fem.data.generation import config_class, generate_samples
from neuralop_fem.errors import ConfigError


def test_generate_samples_equals_the_generated_file(burgers_file, darcy_file):
    for path, problem in ((burgers_file, "burgers"), (darcy_file, "darcy")):
        with xr.open_dataset(path) as full:
            settings = json.loads(full.attrs["config_json"])["settings"]
            fixed = {k: settings.pop(k) for k in ("problem", "resolution", "dataset_seed",
                                                  "dtype")}
            part = generate_samples(problem, [5, 2], resolution=fixed["resolution"],
                                    seed=fixed["dataset_seed"],
                                    config=config_class(problem).from_stored(settings))
            assert part["sample"].values.tolist() == [5, 2]
            for var in part.data_vars:
                if var in ("solve_time", "iterations", "residual"):
                    continue
                want = full[var].isel(sample=[5, 2]).transpose(*part[var].dims).values  # by name
                # batched solves agree with other batchings to round-off
                np.testing.assert_allclose(part[var].values, want, rtol=1e-12, atol=1e-14,
                                           err_msg=f"{problem} {var}")
            assert part.attrs["dataset_seed"] == full.attrs["dataset_seed"]
    with pytest.raises(ConfigError, match="distinct sample indices >= 0; got \\[1, 1\\]"):
        generate_samples("burgers", [1, 1], resolution=64)
    with pytest.raises(ConfigError, match="must be a BurgersDataConfig"):
        generate_samples("burgers", [0], config=config_class("darcy")())


def test_generate_samples_stores_the_requested_dtype(tmp_path):
    from neuralop_fem.data import generate

    path = generate("burgers", n_samples=3, resolution=64, seed=4, out=tmp_path / "f.nc",
                    workers=0, progress=False, dtype="float32")
    part = generate_samples("burgers", [2], resolution=64, seed=4, dtype="float32")
    assert part["u"].dtype == np.float32
    with xr.open_dataset(path) as full:
        # float32 storage: the same rounding of values equal to round-off
        np.testing.assert_allclose(part["u"].values, full["u"].isel(sample=[2]).values,
                                   rtol=1e-6)
    with pytest.raises(ConfigError, match="`dtype` must be 'float64' or 'float32'; got 'f16'"):
        generate_samples("burgers", [0], resolution=64, dtype="f16")
