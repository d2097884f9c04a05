"""One answer per grid question: a surrogate's prediction on another periodic grid and a solver
ladder's rung answer come to the comparison grid through the same (Fourier) interpolation, and
the models' on-device coordinates are the grid conventions of solvers.grids."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neuralop_fem.data import load_dataset
from neuralop_fem.data.grids import resample_input, resample_output
from neuralop_fem.models._grid import node_grid_2d, periodic_grid_1d
from neuralop_fem.surrogate import Surrogate
from solvers.grids import grid_coordinates, linear_periodic, spectral_periodic
from solvers.ladder import interpolate
from tests._surrogate_fixtures import burgers_run


@pytest.fixture(scope="module")
def burgers(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("burgers")
    run = burgers_run(tmp)  # model grid: 64 points
    return Surrogate.load(run, device="cpu"), load_dataset(tmp / "b.nc")


def test_surrogate_and_ladder_bring_a_periodic_field_to_another_grid_alike(burgers):
    """The inputs on 96 points (not nested with the model's 64): the surrogate resamples them
    to its grid (linear, as inputs are), predicts and brings the prediction back to 96 points;
    the ladder brings an answer on 64 points to a 96-point comparison grid. Both are the
    trigonometric interpolant, so they agree; the linear interpolation the surrogate used for
    its predictions before is visibly another answer."""
    sur, ds = burgers
    u0 = np.asarray(ds.u0.values[:3])
    x96 = spectral_periodic(u0, 96)
    through_surrogate = sur.solve(x96, resample=True)
    on_model_grid = sur.solve(resample_input(x96, 64, grid="periodic"))
    through_ladder = interpolate(on_model_grid, 96, grid="periodic")
    assert through_surrogate.shape == (3, 96)
    # Same float64 prediction, same interpolation: equal up to the FFT's round-off.
    np.testing.assert_allclose(through_surrogate, through_ladder, rtol=0, atol=1e-12)
    np.testing.assert_allclose(through_surrogate, resample_output(on_model_grid, 96,
                                                                  grid="periodic"),
                               rtol=0, atol=1e-12)
    scale = np.abs(through_ladder).max()
    assert np.abs(linear_periodic(on_model_grid, 96) - through_ladder).max() > 1e-4 * scale


@pytest.mark.parametrize("n", [2, 7, 64, 141, 421])
def test_model_coordinates_are_the_grid_conventions(n):
    """Built with torch on the device: the periodic ones exactly, the node ones to a unit in
    the last place (torch.linspace rounds i * (1/(n-1)), not i/(n-1))."""
    periodic = periodic_grid_1d(n, dtype=torch.float64, device=torch.device("cpu"))
    np.testing.assert_array_equal(periodic[:, 0].numpy(), grid_coordinates("periodic", n))
    nodes = node_grid_2d(n, dtype=torch.float64, device=torch.device("cpu")).numpy()
    want = grid_coordinates("nodes", n)
    np.testing.assert_allclose(nodes[:, 0, 0], want, rtol=0, atol=2.3e-16)
    np.testing.assert_allclose(nodes[0, :, 1], want, rtol=0, atol=2.3e-16)
