"""Grid conventions in the data layer: the `grid` attribute, coordinates, strides, training."""

from __future__ import annotations

import numpy as np
import pytest

from neuralop_fem.data import DarcyDataConfig, darcy_dataset, generate, load_dataset
from neuralop_fem.data.grids import dataset_grid, grid_stride, reachable, zero_boundary
from neuralop_fem.errors import ConfigError, DatasetError, InputError
from solvers.darcy_grid_variants import DarcyCellFDSolver, DarcyHalfOpenFDSolver
from solvers.grids import grid_coordinates


def _build(grid: str | None, n: int = 6, x=None):
    attrs = {"dataset_seed": 0, "source": "test", "forcing": 1.0}
    if grid is not None:
        attrs["grid"] = grid
    a = np.ones((2, n, n))
    return darcy_dataset(a, a, x=x, y=x, seed=[0, 1], iterations=[1, 1], residual=[0.0, 0.0],
                         solve_time=[0.0, 0.0], attrs=attrs)


def test_a_file_without_the_attribute_is_on_the_node_grid():
    ds = _build(None)
    assert dataset_grid(ds.attrs) == "nodes"
    np.testing.assert_allclose(ds["x"].values, np.linspace(0, 1, 6), rtol=0, atol=1e-15)


@pytest.mark.parametrize("grid", ["cell-centred", "half-open"])
def test_the_builder_takes_the_coordinates_of_the_grid(grid):
    ds = _build(grid)
    assert dataset_grid(ds.attrs) == grid
    np.testing.assert_array_equal(ds["x"].values, grid_coordinates(grid, 6))
    assert grid in ds["x"].attrs["comment"]


def test_coordinates_must_match_the_stated_grid():
    with pytest.raises(DatasetError, match=r"coordinate `x` must be the uniform grid of 6 x 6 "
                                           r"cells, cell centres x_i = \(i \+ 1/2\)/6"):
        _build("cell-centred", x=np.linspace(0, 1, 6))
    with pytest.raises(DatasetError, match="attribute `grid` of a darcy dataset must be one of "
                                           "'nodes', 'cell-centred', 'half-open'; got 'staggered'"):
        _build("staggered")


def test_strides_follow_the_grid():
    assert reachable("nodes", 9) == [2, 3, 5, 9]
    assert reachable("half-open", 32) == [1, 2, 4, 8, 16, 32]
    assert reachable("cell-centred", 32) == [32]
    assert grid_stride("half-open", 32, 16) == 2
    with pytest.raises(InputError, match="on the cell-centred grid: one of \\[32\\]; got 16"):
        grid_stride("cell-centred", 32, 16)
    assert zero_boundary("darcy", "nodes")
    assert not zero_boundary("darcy", "cell-centred")
    assert not zero_boundary("darcy", "half-open")


def test_config_grid_chooses_solver_and_default_linear_solver():
    cells = DarcyDataConfig(grid="cell-centred")
    assert cells.linear_solver == "direct"
    assert isinstance(cells.make_solver(), DarcyCellFDSolver)
    assert DarcyDataConfig().replace(grid="cell-centred").linear_solver == "direct"
    assert DarcyDataConfig(grid="cell-centred").replace(grid="nodes").linear_solver == "gmg"
    half = DarcyDataConfig(grid="half-open", forcing=2.0).make_solver()
    assert isinstance(half, DarcyHalfOpenFDSolver)
    assert half.forcing == 2.0
    with pytest.raises(ConfigError, match="finite differences only"):
        DarcyDataConfig(grid="cell-centred", discretisation="fem")
    with pytest.raises(ConfigError, match="`grid` must be one of 'nodes', 'cell-centred'"):
        DarcyDataConfig(grid="cells")


def test_generated_cell_centred_file_trains_without_the_dirichlet_projection(tmp_path):
    from neuralop_fem.models import build_model
    from neuralop_fem.training.config import TrainConfig
    from neuralop_fem.training.setup import build_training_data

    path = generate("darcy", n_samples=6, resolution=8, seed=3, out=tmp_path / "c.nc",
                    config=DarcyDataConfig(grid="cell-centred"), workers=0)
    ds = load_dataset(path)
    assert ds.attrs["grid"] == "cell-centred"
    assert ds.attrs["solver_class"] == "DarcyCellFDSolver"
    # The labels are the cell solver's answer on these cells.
    np.testing.assert_allclose(DarcyCellFDSolver().solve(ds["a"].values), ds["u"].values,
                               rtol=0, atol=1e-15)
    config = TrainConfig(task="darcy", n_train=4, n_val=1, n_test=1)
    model = build_model("darcy-fno", modes=2, width=4)
    data = build_training_data(ds, config, model=model)
    assert data.dirichlet == (False, False)
    with pytest.raises(InputError, match="cell-centred grid: one of \\[8\\]; got 4"):
        build_training_data(ds, config.replace(resolution=4), model=model)
