"""Legacy .mat import: MATLAB v5 and v7.3 (HDF5) layouts, the CLI command, bad files."""

from __future__ import annotations

import h5py
import numpy as np
import pytest
import scipy.io
import xarray as xr

from neuralop_fem.cli import build_parser
from neuralop_fem.commands import import_mat as import_mat_command
from neuralop_fem.data import load_dataset, schema
from neuralop_fem.data.matlab import import_mat, read_mat
from neuralop_fem.errors import DatasetError, InputError


def write_v73(path, arrays):
    """Write ``arrays`` the way MATLAB -v7.3 does: HDF5, column-major (axes reversed)."""
    with h5py.File(path, "w", userblock_size=512) as f:
        for key, value in arrays.items():
            dset = f.create_dataset(key, data=np.ascontiguousarray(np.transpose(value)))
            matlab_class = "double" if value.dtype == np.float64 else "single"
            dset.attrs["MATLAB_class"] = np.bytes_(matlab_class)
    with open(path, "r+b") as f:  # MATLAB's 128-byte text header in the user block
        f.write(b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: test HDF5 schema 1.00 .")


def legacy_arrays(rng, problem):
    if problem == "burgers":
        return {"a": rng.standard_normal((3, 16)), "u": rng.standard_normal((3, 16))}
    return {"coeff": rng.random((2, 9, 9)) + 3.0, "sol": rng.random((2, 9, 9)),
            "Kcoeff": rng.random((9, 9))}


@pytest.mark.parametrize("problem", ["burgers", "darcy"])
@pytest.mark.parametrize("layout", ["v5", "v7.3"])
def test_import_both_layouts(tmp_path, rng, problem, layout):
    arrays = legacy_arrays(rng, problem)
    src = tmp_path / "legacy.mat"
    if layout == "v5":
        scipy.io.savemat(src, arrays)
    else:
        write_v73(src, arrays)
    out = import_mat(src, tmp_path / "out.nc", problem=problem)
    ds = load_dataset(out)
    first, second = ("a", "u") if problem == "burgers" else ("coeff", "sol")
    fields = ("u0", "u") if problem == "burgers" else ("a", "u")
    # Exact equality: import only copies values (same float type), no arithmetic.
    np.testing.assert_array_equal(ds[fields[0]].values, arrays[first])
    np.testing.assert_array_equal(ds[fields[1]].values, arrays[second])
    assert ds.attrs["source"] == "imported from legacy.mat"
    assert ds.attrs["legacy_format"].startswith("MATLAB v7.3" if layout == "v7.3" else "MATLAB v5")
    assert ds.attrs["dataset_seed"] == -1
    assert (ds["seed"].values == schema.SEED_UNKNOWN).all()
    assert (ds["iterations"].values == -1).all()
    assert np.isnan(ds["residual"].values).all()
    assert "unknown" in ds["solve_time"].attrs["comment"]
    n = arrays[first].shape[1]
    expected_x = np.arange(n) / (n if problem == "burgers" else n - 1)
    np.testing.assert_array_equal(ds["x"].values, expected_x)


def test_v73_transposed_storage_is_undone(tmp_path):
    # A non-symmetric pattern: sample k, node (i, j) holds 100k + 10i + j + 1 (> 0).
    k, i, j = np.meshgrid(np.arange(2), np.arange(5), np.arange(5), indexing="ij")
    coeff = (100.0 * k + 10 * i + j + 1).astype(np.float64)
    src = tmp_path / "d.mat"
    write_v73(src, {"coeff": coeff, "sol": coeff + 0.5})
    with h5py.File(src) as f:
        assert f["coeff"].shape == (5, 5, 2)  # stored column-major
    ds = read_mat(src, problem="darcy")
    assert ds["a"].sel(sample=1).isel(x=2, y=3).item() == 124.0


def test_float32_file_stays_float32(tmp_path, rng):
    arrays = {k: v.astype(np.float32) for k, v in legacy_arrays(rng, "burgers").items()}
    src = tmp_path / "b.mat"
    scipy.io.savemat(src, arrays)
    ds = load_dataset(import_mat(src, tmp_path / "b.nc", problem="burgers"))
    assert ds["u"].dtype == np.float32
    assert ds.attrs["storage_dtype"] == "float32"


def cli(argv):
    """Parse ``argv`` with the real `neuralop-fem` parser and run the import-mat command."""
    args = build_parser(only="import-mat").parse_args(argv)
    return import_mat_command.run(args)


def test_cli_import(tmp_path, rng, capsys):
    src = tmp_path / "piececonst.mat"
    scipy.io.savemat(src, legacy_arrays(rng, "darcy"))
    out = tmp_path / "d.nc"
    assert cli(["import-mat", str(src), "--problem", "darcy", "--out", str(out)]) == 0
    assert capsys.readouterr().out == f"wrote {out} (netCDF, from the MATLAB file {src})\n"
    with pytest.raises(InputError, match="argument --out: must not be an existing file "
                       r"\(pass --overwrite to replace it\)"):
        cli(["import-mat", str(src), "--problem", "darcy", "--out", str(out)])
    args = ["import-mat", str(src), "--problem", "darcy", "--out", str(out), "--overwrite"]
    assert cli([*args, "--dtype", "float32"]) == 0
    with xr.open_dataset(out) as plain:
        assert plain["a"].dtype == np.float32


def test_missing_keys(tmp_path, rng):
    src = tmp_path / "wrong.mat"
    scipy.io.savemat(src, {"x": rng.random((2, 4)), "y": rng.random((2, 4))})
    match = (r"wrong\.mat: a burgers file must hold the keys \['a', 'u'\]; "
             r"keys found: \['x', 'y'\]")
    with pytest.raises(DatasetError, match=match):
        read_mat(src, problem="burgers")


def test_missing_keys_v73(tmp_path, rng):
    src = tmp_path / "wrong73.mat"
    write_v73(src, {"coeff": rng.random((2, 5, 5))})
    match = r"wrong73\.mat: a darcy file must hold the keys.*found: \['coeff'\]"
    with pytest.raises(DatasetError, match=match):
        read_mat(src, problem="darcy")


def test_wrong_shapes(tmp_path, rng):
    src = tmp_path / "shape.mat"
    scipy.io.savemat(src, {"coeff": rng.random((2, 5, 5)), "sol": rng.random((2, 5, 4))})
    match = (r"shape\.mat: keys \['coeff', 'sol'\] of a darcy file must be arrays of one "
             r"shape \(N, n, n\); got shapes")
    with pytest.raises(DatasetError, match=match):
        read_mat(src, problem="darcy")


def test_not_a_mat_file(tmp_path):
    src = tmp_path / "junk.mat"
    src.write_bytes(b"\x01\x02 not matlab" * 50)
    with pytest.raises(DatasetError, match=r"junk\.mat: cannot be read as a MATLAB \.mat file"):
        read_mat(src, problem="burgers")


@pytest.mark.parametrize("fraction", [0.1, 0.3, 0.6, 0.9])
def test_truncated_v5_file_is_not_said_to_lack_keys(tmp_path, rng, fraction):
    """A v5 file cut off anywhere (also inside the first array, where scipy's whosmat still
    lists it) is unreadable, not a file that holds other keys."""
    src = tmp_path / "cut.mat"
    scipy.io.savemat(src, {"coeff": rng.random((3, 9, 9)) + 3, "sol": rng.random((3, 9, 9))})
    data = src.read_bytes()
    src.write_bytes(data[: int(fraction * len(data))])
    with pytest.raises(DatasetError, match=r"cut\.mat: cannot be read .*truncated") as err:
        read_mat(src, problem="darcy")
    assert "must hold the keys" not in str(err.value)


def test_missing_mat_file(tmp_path):
    with pytest.raises(DatasetError, match=r"none\.mat: no such file"):
        read_mat(tmp_path / "none.mat", problem="burgers")


def test_unknown_problem(tmp_path):
    with pytest.raises(InputError, match="`problem` must be one of"):
        read_mat(tmp_path / "x.mat", problem="heat")
