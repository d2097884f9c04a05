"""netCDF save/load: round trips, laziness, chunked reads and every kind of bad file."""

from __future__ import annotations

import os
from pathlib import Path

import dask.array as da
import netCDF4
import numpy as np
import pytest
import xarray as xr

from neuralop_fem.data import io, load_dataset, save_dataset
from neuralop_fem.errors import DatasetError, InputError

from ..helpers import corrupt_chunk
from .conftest import make_burgers, make_darcy


@pytest.mark.parametrize("problem", ["burgers", "darcy"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_round_trip_is_identical(tmp_path, rng, problem, dtype):
    ds = make_burgers(rng, times=3) if problem == "burgers" else make_darcy(rng)
    path = save_dataset(ds, tmp_path / "d.nc", dtype=dtype)
    loaded = load_dataset(path)
    expected = io.as_storage_dtype(ds, dtype)
    xr.testing.assert_identical(loaded.load(), expected)
    assert loaded.attrs["storage_dtype"] == dtype
    assert loaded["u"].dtype == np.dtype(dtype)
    # Coordinates and diagnostics keep their schema types whatever the storage dtype.
    assert loaded["x"].dtype == np.float64
    assert loaded["residual"].dtype == np.float64
    assert loaded["seed"].dtype == np.uint64
    loaded.close()


def test_float32_values_are_the_rounded_float64(tmp_path, darcy_ds):
    loaded = load_dataset(save_dataset(darcy_ds, tmp_path / "d.nc", dtype="float32"))
    np.testing.assert_array_equal(loaded["u"].values, darcy_ds["u"].values.astype(np.float32))


def test_file_is_plain_cf_netcdf(tmp_path, burgers_ds):
    path = save_dataset(burgers_ds, tmp_path / "b.nc")
    with xr.open_dataset(path) as plain:
        assert plain.attrs["Conventions"] == "CF-1.8"
        assert plain.attrs["problem"] == "burgers"
        assert plain["u"].attrs["units"] == "1"
        assert plain["x"].attrs["long_name"].startswith("position")
    with netCDF4.Dataset(path) as nc:
        assert nc.data_model == "NETCDF4"
        assert nc["u"].filters()["zlib"]
        assert nc["u"].chunking()[1:] == [32]
        assert not hasattr(nc["x"], "_FillValue")


def test_load_is_lazy(tmp_path, darcy_ds):
    loaded = load_dataset(save_dataset(darcy_ds, tmp_path / "d.nc"))
    for name in ("a", "u", "residual", "seed"):
        assert isinstance(loaded[name].data, da.Array), name
        assert not loaded[name].variable._in_memory, name


def test_file_larger_than_a_chunk_reads_in_pieces(tmp_path, rng, monkeypatch):
    ds = make_darcy(rng, n_samples=10, n=9)
    per_sample = 9 * 9 * 8
    monkeypatch.setattr(io, "CHUNK_BYTES", 3 * per_sample)  # 3 samples per on-disk chunk
    path = save_dataset(ds, tmp_path / "d.nc")
    with netCDF4.Dataset(path) as nc:
        assert nc["a"].chunking() == [3, 9, 9]
    loaded = load_dataset(path)
    assert loaded["a"].data.chunks[0] == (3, 3, 3, 1)
    for sl in (slice(0, 2), slice(2, 7), slice(9, 10)):
        np.testing.assert_array_equal(loaded["a"].isel(sample=sl).values, ds["a"].values[sl])
    np.testing.assert_array_equal(loaded["u"].isel(sample=[8, 1, 4]).values,
                                  ds["u"].values[[8, 1, 4]])
    six = load_dataset(path, chunks=6)  # a multiple of the on-disk chunk
    assert six["u"].data.chunks[0] == (6, 4)


def test_save_refuses_to_overwrite(tmp_path, burgers_ds):
    path = save_dataset(burgers_ds, tmp_path / "b.nc")
    with pytest.raises(InputError, match="overwrite=True"):
        save_dataset(burgers_ds, path)
    save_dataset(burgers_ds.isel(sample=slice(0, 2)), path, overwrite=True)
    assert load_dataset(path).sizes["sample"] == 2


def test_saved_file_has_umask_mode(tmp_path, burgers_ds):
    # The temporary file comes from mkstemp (mode 0600); the dataset must get the usual mode.
    import os

    old = os.umask(0o022)
    try:
        path = save_dataset(burgers_ds, tmp_path / "m.nc")
    finally:
        os.umask(old)
    assert (path.stat().st_mode & 0o777) == 0o644


def test_save_is_atomic_on_failure(tmp_path, burgers_ds, monkeypatch):
    def boom(*args, **kwargs):
        msg = "disk full"
        raise RuntimeError(msg)

    monkeypatch.setattr(xr.Dataset, "to_netcdf", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        save_dataset(burgers_ds, tmp_path / "b.nc")
    assert list(tmp_path.iterdir()) == []


def test_resave_of_lazy_dataset(tmp_path, burgers_ds):
    first = load_dataset(save_dataset(burgers_ds, tmp_path / "a.nc", dtype="float32"))
    second = load_dataset(save_dataset(first, tmp_path / "b.nc", dtype="float64"))
    xr.testing.assert_identical(second.load(), io.as_storage_dtype(first.load(), "float64"))


def test_save_rejects_bad_dtype(tmp_path, burgers_ds):
    with pytest.raises(InputError, match="`dtype` must be one of"):
        save_dataset(burgers_ds, tmp_path / "b.nc", dtype="float16")


# --- bad files: one test per kind --------------------------------------------------------


def test_missing_file(tmp_path):
    with pytest.raises(DatasetError, match=r"nope\.nc: no such file"):
        load_dataset(tmp_path / "nope.nc")


def test_not_netcdf(tmp_path):
    path = tmp_path / "text.nc"
    path.write_text("this is not a netCDF file\n" * 20)
    with pytest.raises(DatasetError, match=r"text\.nc: cannot be read as a netCDF4 file"):
        load_dataset(path)


def test_netcdf_that_is_not_a_neuralop_fem_dataset(tmp_path):
    path = tmp_path / "other.nc"
    xr.Dataset({"temperature": ("t", np.arange(3.0))}).to_netcdf(path)
    match = r"other\.nc: is not a neuralop_fem dataset.*temperature"
    with pytest.raises(DatasetError, match=match):
        load_dataset(path)


def test_missing_variables(tmp_path, darcy_ds):
    path = tmp_path / "missing.nc"
    darcy_ds.drop_vars(["residual", "u"]).to_netcdf(path)
    match = r"missing\.nc: misses variable\(s\) \['u', 'residual'\]"
    with pytest.raises(DatasetError, match=match):
        load_dataset(path)


def test_wrong_dims(tmp_path, darcy_ds):
    path = tmp_path / "dims.nc"
    darcy_ds.transpose("x", "sample", "y").to_netcdf(path)
    match = (r"dims\.nc: variable `a` must have dims \('sample', 'x', 'y'\) or "
             r"\('sample', 'y', 'x'\); got \('x', 'sample', 'y'\)")
    with pytest.raises(DatasetError, match=match):
        load_dataset(path)


@pytest.mark.parametrize("problem", ["burgers", "darcy"])
def test_files_store_cf_order_and_read_back_in_api_order(tmp_path, rng, problem):
    """Files hold the fields (sample, [time,] y, x) (CF's order, x last for xarray's plots);
    load_dataset returns (sample, [time,] x, y) by name, and a file of earlier releases in
    (sample, x, y) reads to the same dataset."""
    ds = make_burgers(rng, times=3) if problem == "burgers" else make_darcy(rng)
    path = save_dataset(ds, tmp_path / "new.nc")
    want = {"burgers": {"u0": ("sample", "x"), "u": ("sample", "x"),
                        "u_t": ("sample", "time", "x")},
            "darcy": {"a": ("sample", "y", "x"), "u": ("sample", "y", "x")}}[problem]
    with netCDF4.Dataset(path) as nc:
        for name, dims in want.items():
            assert nc[name].dimensions == dims, name
            assert nc[name].chunking()[1:] == [nc.dimensions[d].size for d in dims[1:]], name
    old = tmp_path / "old.nc"
    ds.to_netcdf(old, engine="netcdf4")  # the API's order, as earlier releases wrote
    with xr.open_dataset(old) as plain:
        assert plain["u"].dims == ds["u"].dims
    for file in (path, old):
        loaded = load_dataset(file)
        xr.testing.assert_identical(loaded.load(), ds)
        loaded.close()
    with xr.open_dataset(path) as plain:  # a file read with plain xarray saves as it is
        resaved = save_dataset(plain, tmp_path / "again.nc")
    xr.testing.assert_identical(load_dataset(resaved).load(), ds)


def test_truncated_file(tmp_path, darcy_ds):
    path = save_dataset(darcy_ds, tmp_path / "cut.nc")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(DatasetError, match=r"cut\.nc: cannot be read as a netCDF4 file"):
        load_dataset(path)


def test_corrupt_header(tmp_path, darcy_ds):
    path = save_dataset(darcy_ds, tmp_path / "bad.nc")
    data = bytearray(path.read_bytes())
    data[0:8] = b"\x00" * 8  # destroy the HDF5 signature
    path.write_bytes(bytes(data))
    with pytest.raises(DatasetError, match=r"bad\.nc: cannot be read as a netCDF4 file"):
        load_dataset(path)


def test_corrupt_chunk_never_reads_silently(tmp_path, rng):
    ds = make_darcy(rng, n_samples=4, n=33)
    path = save_dataset(ds, tmp_path / "chunk.nc")
    data = bytearray(path.read_bytes())
    mid = len(data) // 2
    data[mid : mid + 64] = bytes(255 - b for b in data[mid : mid + 64])
    path.write_bytes(bytes(data))
    # Fletcher-32 checksums: damage either fails the open or the read, never passes unnoticed.
    with pytest.raises(DatasetError, match=r"chunk\.nc: "):
        io.verify_dataset(load_dataset(path))


def test_unknown_schema_version(tmp_path, burgers_ds):
    path = tmp_path / "future.nc"
    burgers_ds.assign_attrs(neuralop_fem_schema_version=99).to_netcdf(path)
    with pytest.raises(DatasetError, match=r"future\.nc: has unknown schema version 99"):
        load_dataset(path)


def test_wrong_grid(tmp_path, burgers_ds):
    path = tmp_path / "grid.nc"
    burgers_ds.assign_coords(x=burgers_ds["x"] * 0.5).to_netcdf(path)
    match = (r"grid\.nc: coordinate `x` must be the uniform grid of 32 points, "
             r"periodic x_i = i/32")
    with pytest.raises(DatasetError, match=match):
        load_dataset(path)


def test_save_rejects_invalid_dataset(tmp_path, burgers_ds):
    with pytest.raises(DatasetError, match="dataset to save: misses variable"):
        save_dataset(burgers_ds.drop_vars("seed"), tmp_path / "b.nc")


def test_missing_global_attribute(tmp_path, burgers_ds):
    path = tmp_path / "attrs.nc"
    ds = burgers_ds.copy()
    del ds.attrs["dataset_seed"]
    ds.to_netcdf(path)
    match = r"attrs\.nc: misses global attribute\(s\) \['dataset_seed'\]"
    with pytest.raises(DatasetError, match=match):
        load_dataset(path)


def test_netcdf_layer_does_not_import_torch():
    import subprocess
    import sys

    code = "import sys, neuralop_fem.data; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("variable", ["a", "u", "residual"])
def test_corrupted_chunk_names_the_file_and_the_variable(tmp_path, darcy_ds, variable):
    path = save_dataset(darcy_ds, tmp_path / "d.nc")
    corrupt_chunk(path, tmp_path / "bad.nc", variable)
    ds = load_dataset(tmp_path / "bad.nc")  # only data is damaged: the file opens
    match = rf"bad\.nc: variable `{variable}` \(sample 0\) cannot be read: the file is corrupt"
    with pytest.raises(DatasetError, match=match):
        io.read_values(ds, variable, sample=0)
    with pytest.raises(DatasetError, match=rf"bad\.nc: variable `{variable}` \(sample 0\.\.3\)"):
        io.verify_dataset(ds)
    other = "seed" if variable != "seed" else "u"
    assert io.read_values(ds, other).shape[0] == 4  # the rest of the file still reads
    assert io.verify_dataset(load_dataset(path)) == 6  # a sound file: one chunk per variable


@pytest.mark.parametrize("how", ["values", "load", "mean", "numpy", "resave", "compute"])
def test_any_read_of_a_damaged_chunk_is_a_dataset_error(tmp_path, rng, how):
    """Bytes flipped in the data region of a written file: whatever reads the damaged values
    through the lazily loaded dataset gets one DatasetError naming the file and the variable
    (not netCDF's bare ``RuntimeError: NetCDF: HDF error``)."""
    path = save_dataset(make_burgers(rng, n_samples=12, n=64), tmp_path / "b.nc")
    corrupt_chunk(path, tmp_path / "bad.nc", "u")
    ds = load_dataset(tmp_path / "bad.nc")
    read = {
        "values": lambda: ds["u"].values,
        "load": ds.load,
        "mean": lambda: float(ds["u"].mean()),
        "numpy": lambda: np.asarray(ds["u"]),
        "resave": lambda: save_dataset(ds, tmp_path / "copy.nc"),
        "compute": lambda: ds["u"].isel(sample=slice(2, 5)).compute(),
    }[how]
    with pytest.raises(DatasetError, match=r"bad\.nc: variable `u` \(sample [0-9.]+\) cannot be "
                                            r"read: the file is corrupt or truncated"):
        read()
    assert not (tmp_path / "copy.nc").exists()
    np.testing.assert_array_equal(ds["u0"].values, load_dataset(path)["u0"].values)
    ds.close()


@pytest.mark.parametrize("fraction", [0.2, 0.5, 0.9, 0.99])
def test_a_truncated_file_is_one_dataset_error(tmp_path, rng, fraction):
    path = save_dataset(make_burgers(rng, n_samples=12, n=64), tmp_path / "b.nc")
    data = path.read_bytes()
    cut = tmp_path / "cut.nc"
    cut.write_bytes(data[: int(len(data) * fraction)])
    with pytest.raises(DatasetError, match=r"cut\.nc: .*(truncated|corrupt)"):
        load_dataset(cut).load()


def _open_handles(path) -> int:
    fds = Path("/proc/self/fd")
    return sum(1 for fd in fds.iterdir() if os.path.realpath(fd) == str(path.resolve()))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc (Linux)")
def test_closing_a_loaded_dataset_closes_the_file(tmp_path, burgers_ds):
    path = save_dataset(burgers_ds, tmp_path / "b.nc")
    with load_dataset(path) as ds:
        assert ds["u"].values.shape == burgers_ds["u"].shape
        assert _open_handles(path) >= 1
    assert _open_handles(path) == 0
