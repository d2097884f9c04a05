"""Messages about what a file holds: they name the file, the key and the value, as the user
meets them on the command line (exit status 2, one line, never an internal error), and never
blame a value read from the file on an option that was not given."""

from __future__ import annotations

import os
import shutil
import stat

import h5py
import netCDF4
import numpy as np
import pytest
import torch

from neuralop_fem.cli import main
from neuralop_fem.data import load_dataset

from .conftest import write_neuralop_burgers, write_pdebench_burgers, write_pdebench_darcy


def _one_line(capsys, args: list[str]) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "internal error" not in err
    assert "Traceback" not in err
    return err


def _burgers_pt(path, rng, **extra):
    x, y = write_neuralop_burgers(path, rng)
    torch.save({"x": torch.from_numpy(x), "y": torch.from_numpy(y), **extra}, path)
    return path


@pytest.mark.parametrize(("visc", "shown"), [
    ({"nu": 0.01}, "key `visc` must be one number; got {'nu': 0.01}."),
    ("0.01x", "key `visc` must be one number; got '0.01x'."),
    (torch.full((2, 2), 0.01, dtype=torch.float64),
     "key `visc` must be one number; got 4 numbers [0.01, 0.01, 0.01, 0.01]."),
    (torch.tensor([[float("nan")]]), "key `visc` must be a finite number; got nan."),
])
def test_an_odd_parameter_of_a_pt_file_is_named_with_its_key(tmp_path, rng, capsys, visc,
                                                             shown):
    src = _burgers_pt(tmp_path / "burgers.pt", rng, visc=visc)
    err = _one_line(capsys, ["import", "neuralop", str(src), "--out", str(tmp_path / "o.nc")])
    assert f"error: {src}: {shown}" in err
    assert not (tmp_path / "o.nc").exists()


def test_a_bad_value_of_the_file_is_not_blamed_on_an_option(tmp_path, rng, capsys):
    src = _burgers_pt(tmp_path / "burgers.pt", rng,
                      visc=torch.tensor([[-0.02]], dtype=torch.float64))
    err = _one_line(capsys, ["import", "neuralop", str(src), "--out", str(tmp_path / "o.nc")])
    assert f"{src}: key `visc` gives the viscosity -0.02; it must be a finite number > 0." in err
    assert "--viscosity" not in err
    # Given on the command line, the same kind of value is the option's.
    assert main(["import", "neuralop", str(src), "--out", str(tmp_path / "o.nc"),
                 "--viscosity", "0"]) == 2
    assert "argument --viscosity" in capsys.readouterr().err


@pytest.mark.parametrize(("attr", "value", "shown"), [
    ("beta", np.array([1.0, 2.0, 3.0]),
     "attribute `beta` must be one number; got 3 numbers [1.0, 2.0, 3.0]."),
    ("beta", "strong", "attribute `beta` must be one number; got 'strong'."),
    ("neuralop_fem_forcing", np.inf, "attribute `neuralop_fem_forcing` must be a finite number"),
])
def test_an_odd_attribute_of_a_pdebench_file_is_named(tmp_path, rng, capsys, attr, value, shown):
    src = tmp_path / "2D_DarcyFlow_Train.hdf5"
    write_pdebench_darcy(src, rng)
    with h5py.File(src, "r+") as f:
        f.attrs[attr] = value
    err = _one_line(capsys, ["import", "pdebench", str(src), "--out", str(tmp_path / "o.nc")])
    assert f"{src}: {shown}" in err


def test_a_negative_viscosity_attribute_is_the_files(tmp_path, rng, capsys):
    src = tmp_path / "1D_Burgers_Sols_Nu0.01.hdf5"
    write_pdebench_burgers(src, rng)
    with h5py.File(src, "r+") as f:
        f.attrs["neuralop_fem_viscosity"] = -0.0099
    err = _one_line(capsys, ["import", "pdebench", str(src), "--out", str(tmp_path / "o.nc")])
    assert ("attribute `neuralop_fem_viscosity` gives the viscosity -0.0099; it must be a "
            "finite number > 0.") in err
    assert "--viscosity" not in err


def test_a_nan_is_reported_as_a_nan(tmp_path, rng, capsys):
    """A NaN in the trajectory used to fail the check y[:, 0] == x first."""
    x, y = write_neuralop_burgers(tmp_path / "b.pt", rng)
    x[2, 5] = np.nan
    y[2, 0, 5] = np.nan
    torch.save({"x": torch.from_numpy(x), "y": torch.from_numpy(y)}, tmp_path / "b.pt")
    err = _one_line(capsys, ["import", "neuralop", str(tmp_path / "b.pt"), "--out",
                             str(tmp_path / "o.nc")])
    assert "key `x` must be finite (no NaN or infinity); got nan at index (2, 5)" in err
    assert "must equal" not in err


def test_float16_is_read_as_float32_in_every_importer(tmp_path, rng, capsys):
    src = tmp_path / "1D_Burgers_Sols_Nu0.01.hdf5"
    tensor, _, _ = write_pdebench_burgers(src, rng)
    with h5py.File(src, "r+") as f:
        del f["tensor"]
        f.create_dataset("tensor", data=tensor.astype(np.float16))
    out = tmp_path / "o.nc"
    assert main(["import", "pdebench", str(src), "--out", str(out)]) == 0
    capsys.readouterr()
    with load_dataset(out) as ds:
        assert ds.attrs["storage_dtype"] == "float32"
        np.testing.assert_array_equal(ds["u0"].values, tensor[:, 0].astype(np.float16))


@pytest.mark.parametrize("kind", ["/dev/null", "fifo"])
def test_a_device_or_fifo_is_not_called_a_directory(tmp_path, capsys, kind):
    path = kind
    if kind == "fifo":
        path = str(tmp_path / "pipe")
        os.mkfifo(path)
    what = "a device" if kind == "/dev/null" else "a FIFO"
    for args in (["info", path], ["import", "neuralop", path, "--out", str(tmp_path / "o.nc")],
                 ["train", "--config", path, "--print-config"]):
        err = _one_line(capsys, args)
        assert f"must be a regular file; got {path!r}, which is {what}" in err
        assert "directory" not in err


@pytest.mark.parametrize(("value", "shown"), [
    ("abc", "attribute `viscosity` = 'abc' disagrees with the provenance record"),
    (-0.5, "attribute `viscosity` = -0.5 disagrees with the provenance record"),
    (np.array([0.5, 1.0]), "attribute `viscosity` = [0.5, 1.0] disagrees"),
])
def test_an_edited_parameter_of_an_imported_file_is_refused(tmp_path, rng, capsys, value, shown):
    src = _burgers_pt(tmp_path / "b.pt", rng, visc=torch.tensor([[0.25]], dtype=torch.float64))
    good = tmp_path / "good.nc"
    assert main(["import", "neuralop", str(src), "--out", str(good), "--final-time", "1"]) == 0
    edited = tmp_path / "edited.nc"
    shutil.copyfile(good, edited)
    with netCDF4.Dataset(edited, "a") as ds:
        ds.setncattr("viscosity", value)
    capsys.readouterr()
    for command in (["info"], ["check", "--samples", "1", "--refine", "1"]):
        err = _one_line(capsys, [*command, str(edited)])
        assert f"{edited}: {shown}" in err
        assert "(0.25): the file was altered" in err


def test_a_device_or_fifo_is_never_an_output(tmp_path, rng, capsys):
    """``--out PIPE --overwrite`` would replace the FIFO (or a device) by a regular file.
    (/dev/null is tried without --overwrite only: a regression must not replace it.)"""
    src = _burgers_pt(tmp_path / "b.pt", rng)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for out, what, extra in (("/dev/null", "a device", []), (str(fifo), "a FIFO", ["--overwrite"])):
        err = _one_line(capsys, ["import", "neuralop", str(src), "--out", out, *extra])
        assert f"argument --out: must be a file name; got {out!r}, which is {what}" in err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
