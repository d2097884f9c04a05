"""neuralop_fem.reproduce.inverse: the inverse benchmark's observations, as the paper makes them."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from neuralop_fem.errors import InputError
from neuralop_fem.reproduce.inverse import grid_data, paper_observations


def _dataset(n: int = 9, samples: int = 40) -> xr.Dataset:
    rng = np.random.default_rng(3)
    dims = ("sample", "x", "y")
    return xr.Dataset({"a": (dims, rng.uniform(3, 12, (samples, n, n))),
                       "u": (dims, rng.standard_normal((samples, n, n)))})


def test_the_observation_grid_is_strided_from_the_data() -> None:
    ds = _dataset()
    grid = grid_data(ds, np.arange(30), np.array([30, 31]), 5)
    assert grid["u"].shape == grid["a"].shape == (2, 5, 5)
    np.testing.assert_array_equal(grid["a"], ds["a"].values[30:32, ::2, ::2])
    assert grid["u_train"].shape == (30, 5, 5)
    with pytest.raises(InputError):
        grid_data(ds, np.arange(30), np.array([30]), 4)  # 8 is not a multiple of 3
    stored = grid_data(ds.transpose("sample", "y", "x"), np.arange(30), np.array([30, 31]), 5)
    for name in grid:  # a file's (sample, y, x) order is read by dim name
        np.testing.assert_array_equal(stored[name], grid[name])


def test_the_noise_is_epsilon_times_the_training_spread() -> None:
    ds = _dataset(samples=2000)
    grid = grid_data(ds, np.arange(256), np.arange(256, 2000), 9)
    obs = paper_observations(grid, 0.1, seed=0)
    sigma = grid["u_train"].std(axis=0) + 1e-5
    scaled = (obs["noisy"] - obs["clean"]) / (0.1 * sigma)
    assert abs(scaled[:, 1:-1, 1:-1].std() - 1.0) < 0.01  # 1744 x 49 draws of N(0, 1)
    assert not scaled[:, [0, -1], :].any()  # the boundary values u = 0 are known exactly
    assert not scaled[:, :, [0, -1]].any()
    assert obs["levels"].shape == (1744,)
    assert (obs["levels"] > 0).all()
    again = paper_observations(grid, 0.1, seed=0)
    np.testing.assert_array_equal(again["noisy"], obs["noisy"])
