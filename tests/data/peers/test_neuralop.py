"""neuraloperator .pt dicts: import, export, round trips (read back with torch.load)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neuralop_fem.data import generate, load_dataset, schema
from neuralop_fem.data.generation import DarcyDataConfig
from neuralop_fem.data.peers import export_neuralop, import_neuralop, read_neuralop
from neuralop_fem.errors import InputError

from ..conftest import make_burgers, make_darcy
from .conftest import write_neuralop_burgers, write_neuralop_darcy


def test_darcy_booleans_round_trip_exactly(tmp_path, rng):
    x, y = write_neuralop_darcy(tmp_path / "darcy_train_8.pt", rng)
    out = import_neuralop(tmp_path / "darcy_train_8.pt", tmp_path / "d.nc", forcing=1.0,
                          phase_values=(2.0, 0.5))
    ds = load_dataset(out)
    # Exact: the import copies values (the phases become the two given numbers).
    np.testing.assert_array_equal(ds["a"].values, np.where(x, 2.0, 0.5))
    np.testing.assert_array_equal(ds["u"].values, y)
    assert ds.attrs["storage_dtype"] == "float32"
    assert ds.attrs["forcing"] == 1.0
    assert ds.attrs["physics_known"] == 1
    assert "i/n" in ds.attrs["source_grid"]
    assert "grid_relabelled" in ds.attrs
    export_neuralop(ds, tmp_path / "back.pt")
    # The peer's way: torch.load of a plain dict (their PTDataset calls torch.load).
    back = torch.load(tmp_path / "back.pt")
    assert back["x"].dtype == torch.bool
    np.testing.assert_array_equal(back["x"].numpy(), x)
    np.testing.assert_array_equal(back["y"].numpy(), y)


@pytest.mark.parametrize("keys", [("x", "y"), ("input", "output")])
def test_burgers_trajectory_round_trips(tmp_path, rng, keys):
    x, y = write_neuralop_burgers(tmp_path / "b.pt", rng, keys=keys)
    ds = read_neuralop(tmp_path / "b.pt", final_time=1.0)
    np.testing.assert_array_equal(ds["u0"].values, x)
    np.testing.assert_array_equal(ds["u"].values, y[:, -1])
    np.testing.assert_array_equal(ds["u_t"].values, y)
    np.testing.assert_array_equal(ds["time"].values, np.linspace(0, 1, y.shape[1]))
    assert ds.attrs["viscosity"] == 0.01
    assert ds.attrs["final_time"] == 1.0
    export_neuralop(ds, tmp_path / "back.pt")
    back = torch.load(tmp_path / "back.pt")
    np.testing.assert_array_equal(back["x"].numpy(), x)
    np.testing.assert_array_equal(back["y"].numpy(), y)
    assert back["visc"].item() == 0.01
    again = read_neuralop(tmp_path / "back.pt")  # times come back from `t`
    np.testing.assert_array_equal(again["time"].values, ds["time"].values)
    assert again.attrs["viscosity"] == 0.01
    assert again.attrs["final_time"] == 1.0  # the last of them (the physics come back)
    assert again.attrs["physics_known"] == 1
    with pytest.raises(InputError, match=r"`final_time` 2\.0 contradicts the file's `t`"):
        read_neuralop(tmp_path / "back.pt", final_time=2.0)


def test_unknown_final_time_is_recorded_as_such(tmp_path, rng):
    write_neuralop_burgers(tmp_path / "b.pt", rng)
    ds = read_neuralop(tmp_path / "b.pt")
    assert ds.attrs["final_time"] == "unknown"
    assert ds.attrs["physics_known"] == 0
    assert "fraction of the final time" in ds.attrs["time_coordinate"]
    # Exported again, the fractions are not written as times: still unknown, not 1.
    export_neuralop(ds, tmp_path / "back.pt")
    assert "t" not in torch.load(tmp_path / "back.pt")
    assert read_neuralop(tmp_path / "back.pt").attrs["final_time"] == "unknown"


def consistent_burgers(rng):
    """A Burgers dataset whose trajectory starts at u0 and ends at u, as generate writes it."""
    ds = make_burgers(rng, times=3)
    ds["u_t"].values[:, 0] = ds["u0"].values
    ds["u_t"].values[:, -1] = ds["u"].values
    return ds


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_our_datasets_export_to_their_layout(tmp_path, rng, dtype):
    darcy = make_darcy(rng)
    export_neuralop(darcy, tmp_path / "d.pt", dtype=dtype)
    got = torch.load(tmp_path / "d.pt")
    assert set(got) == {"x", "y"}
    np.testing.assert_array_equal(got["x"].numpy(), darcy["a"].values.astype(dtype))
    np.testing.assert_array_equal(got["y"].numpy(), darcy["u"].values.astype(dtype))
    burgers = consistent_burgers(rng)
    export_neuralop(burgers, tmp_path / "b.pt", dtype=dtype)
    got = torch.load(tmp_path / "b.pt")
    # time = linspace(0, 1, 3) holds 0 and the final time: the trajectory is u_t itself.
    np.testing.assert_array_equal(got["x"].numpy(), burgers["u0"].values.astype(dtype))
    np.testing.assert_array_equal(got["y"].numpy(), burgers["u_t"].values.astype(dtype))
    back = read_neuralop(tmp_path / "b.pt")
    for name in ("u0", "u_t"):
        np.testing.assert_array_equal(back[name].values, burgers[name].values.astype(dtype))
    np.testing.assert_array_equal(back["time"].values, burgers["time"].values)


def test_what_their_darcy_layout_cannot_carry_back(tmp_path):
    """docs/data_from_other_tools.md, Round trips: our Darcy data through their .pt come back
    exactly, on our node grid of the same size, with the forcing unknown until given."""
    ours = load_dataset(generate("darcy", n_samples=2, resolution=8, seed=0, workers=0,
                                 out=tmp_path / "d.nc", progress=False,
                                 config=DarcyDataConfig(grid="half-open")))
    export_neuralop(ours, tmp_path / "d.pt")
    back = read_neuralop(tmp_path / "d.pt")
    for name in ("a", "u"):
        np.testing.assert_array_equal(back[name].values, ours[name].values)
    assert "grid" not in back.attrs
    assert "grid_relabelled" in back.attrs
    np.testing.assert_array_equal(back["x"].values, np.arange(8) / 7)
    assert back.attrs["forcing"] == "unknown"
    assert read_neuralop(tmp_path / "d.pt", forcing=1.0).attrs["forcing"] == 1.0


def test_burgers_without_trajectory_exports_initial_and_final(tmp_path, rng):
    burgers = make_burgers(rng)
    export_neuralop(burgers, tmp_path / "b.pt")
    got = torch.load(tmp_path / "b.pt")
    np.testing.assert_array_equal(got["y"].numpy()[:, 0], burgers["u0"].values)
    np.testing.assert_array_equal(got["y"].numpy()[:, -1], burgers["u"].values)
    np.testing.assert_array_equal(got["t"].numpy(), [0.0, 1.0])
    back = read_neuralop(tmp_path / "b.pt")
    np.testing.assert_array_equal(back["u"].values, burgers["u"].values)
    assert back.attrs["final_time"] == 1.0


def test_imported_diagnostics_are_unknown(tmp_path, rng):
    write_neuralop_darcy(tmp_path / "d.pt", rng)
    ds = read_neuralop(tmp_path / "d.pt")
    assert (ds["seed"].values == schema.SEED_UNKNOWN).all()
    assert (ds["iterations"].values == -1).all()
    assert "unknown" in ds["residual"].attrs["comment"]
    assert ds.attrs["forcing"] == "unknown"
