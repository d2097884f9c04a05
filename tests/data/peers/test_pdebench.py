"""PDEBench HDF5 files: import (streamed), export, round trips (read back with h5py)."""

from __future__ import annotations

import h5py
import numpy as np
import pytest

from neuralop_fem.data import load_dataset
from neuralop_fem.data.peers import _common, export_pdebench, import_pdebench, read_pdebench
from neuralop_fem.errors import DatasetError

from ..conftest import make_burgers, make_darcy
from .conftest import write_pdebench_burgers, write_pdebench_darcy


@pytest.fixture
def small_chunks(monkeypatch):
    """Read peer files a few samples at a time, so the tests cross chunk boundaries."""
    monkeypatch.setattr(_common, "CHUNK_BYTES", 200)


def test_burgers_import_streams_and_keeps_the_trajectory(tmp_path, rng, small_chunks):
    src = tmp_path / "1D_Burgers_Sols_Nu0.01.hdf5"
    tensor, xc, tc = write_pdebench_burgers(src, rng)
    ds = load_dataset(import_pdebench(src, tmp_path / "b.nc"))
    np.testing.assert_array_equal(ds["u0"].values, tensor[:, 0])
    np.testing.assert_array_equal(ds["u"].values, tensor[:, -1])
    np.testing.assert_array_equal(ds["u_t"].values, tensor)
    np.testing.assert_array_equal(ds["time"].values, tc[:-1].astype(np.float64))
    # PDEBench's equation has (nu/pi) u_xx; ours nu u_xx.
    assert ds.attrs["viscosity"] == pytest.approx(0.01 / np.pi, rel=1e-15)
    assert ds.attrs["final_time"] == float(tc[-2])
    assert "file name" in ds.attrs["viscosity_from"]
    assert ds.attrs["storage_dtype"] == "float32"
    np.testing.assert_array_equal(ds.attrs["source_x_coordinate"], xc.astype(np.float64))
    assert ds.attrs["source_grid"].startswith("cell centres")


def test_their_burgers_file_round_trips_through_import_and_export(tmp_path, rng):
    """docs/data_from_other_tools.md, Round trips: their file -> import -> export gives their
    arrays back, the extra last time of `t-coordinate` included (their loader casts the
    float64 coordinates we write to float32)."""
    src = tmp_path / "1D_Burgers_Sols_Nu0.001.hdf5"
    tensor, xc, tc = write_pdebench_burgers(src, rng, n_times=6)
    back = export_pdebench(load_dataset(import_pdebench(src, tmp_path / "b.nc")),
                           tmp_path / "back_Nu0.001.hdf5")
    with h5py.File(back, "r") as f:
        np.testing.assert_array_equal(f["tensor"][()], tensor)
        np.testing.assert_array_equal(f["x-coordinate"][()].astype(np.float32), xc)
        np.testing.assert_array_equal(f["t-coordinate"][()].astype(np.float32), tc)


def test_burgers_without_trajectory(tmp_path, rng):
    src = tmp_path / "1D_Burgers_Sols_Nu1.0.hdf5"
    write_pdebench_burgers(src, rng)
    ds = read_pdebench(src, trajectory=False, viscosity=0.5)
    assert "u_t" not in ds
    assert ds.attrs["viscosity"] == 0.5
    assert ds.attrs["viscosity_from"] == "given"


def test_darcy_import_and_round_trip(tmp_path, rng, small_chunks):
    src = tmp_path / "2D_DarcyFlow_beta1.0_Train.hdf5"
    nu, tensor, xc = write_pdebench_darcy(src, rng, beta=1.0)
    ds = load_dataset(import_pdebench(src, tmp_path / "d.nc"))
    np.testing.assert_array_equal(ds["a"].values, nu)
    np.testing.assert_array_equal(ds["u"].values, tensor[:, 0])
    assert ds.attrs["forcing"] == 1.0
    assert ds.attrs["forcing_from"] == "attribute beta"
    assert ds.attrs["grid"] == "cell-centred"  # their cell centres, not relabelled as nodes
    assert "grid_relabelled" not in ds.attrs
    np.testing.assert_allclose(ds["x"].values, xc, rtol=0, atol=1e-6)
    export_pdebench(ds, tmp_path / "back.hdf5")
    with h5py.File(tmp_path / "back.hdf5", "r") as f:  # the peer's way
        np.testing.assert_array_equal(f["nu"][()], nu)
        np.testing.assert_array_equal(f["tensor"][()], tensor)
        np.testing.assert_array_equal(f["x-coordinate"][()], xc)
        np.testing.assert_array_equal(f["y-coordinate"][()], xc)
        assert f.attrs["beta"] == 1.0


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_our_burgers_round_trips_through_their_layout(tmp_path, rng, dtype):
    ours = make_burgers(rng, times=3)
    ours["u_t"].values[:, 0] = ours["u0"].values
    ours["u_t"].values[:, -1] = ours["u"].values
    path = export_pdebench(ours, tmp_path / "1D_Burgers_Sols_Nu0.05.hdf5", dtype=dtype,
                          chunk=4)
    with h5py.File(path, "r") as f:
        assert f["tensor"].shape == (6, 3, 32)
        np.testing.assert_array_equal(f["tensor"][()], ours["u_t"].values.astype(dtype))
        assert f["t-coordinate"].shape == (4,)  # T + 1, as PDEBench writes it
        np.testing.assert_array_equal(f["x-coordinate"][()], ours["x"].values)
    back = read_pdebench(path)
    for name in ("u0", "u", "u_t"):
        np.testing.assert_array_equal(back[name].values, ours[name].values.astype(dtype))
    np.testing.assert_array_equal(back["time"].values, ours["time"].values)
    # The exact viscosity comes from the attribute, not from the (rounded) file name.
    assert back.attrs["viscosity"] == ours.attrs["viscosity"]
    assert back.attrs["final_time"] == ours.attrs["final_time"]
    assert "grid_relabelled" not in back.attrs


def test_our_darcy_round_trips_through_their_layout(tmp_path, rng):
    ours = make_darcy(rng)
    path = export_pdebench(ours, tmp_path / "2D_DarcyFlow_beta1.0_Train.hdf5", chunk=3)
    with h5py.File(path, "r") as f:
        assert f["tensor"].shape == (4, 1, 17, 17)
    back = read_pdebench(path)
    np.testing.assert_array_equal(back["a"].values, ours["a"].values)
    np.testing.assert_array_equal(back["u"].values, ours["u"].values)
    np.testing.assert_array_equal(back["x"].values, ours["x"].values)
    assert back.attrs["forcing"] == 1.0


def test_bad_value_in_a_late_chunk_leaves_no_output(tmp_path, rng, small_chunks):
    src = tmp_path / "2D_DarcyFlow_beta1.0_Train.hdf5"
    write_pdebench_darcy(src, rng)
    with h5py.File(src, "r+") as f:
        f["nu"][3, 2, 5] = -1.0
    with pytest.raises(DatasetError, match=r"`nu` must be > 0 .* index \(3, 2, 5\)"):
        import_pdebench(src, tmp_path / "d.nc")
    assert list(tmp_path.iterdir()) == [src]
