"""`neuralop-fem info`: the summary names every parameter and the diagnostics."""

from __future__ import annotations

import argparse

import numpy as np

from neuralop_fem.cli import main
from neuralop_fem.commands import info
from neuralop_fem.data import save_dataset


def test_info_via_cli(tmp_path, burgers_ds, capsys):
    path = save_dataset(burgers_ds, tmp_path / "b.nc")
    assert main(["info", str(path)]) == 0
    text = capsys.readouterr().out
    assert "problem:     burgers" in text
    assert "samples:     6 (indices 0..5)" in text
    assert "grid:        32 points, periodic x_i = i/32" in text
    assert "times:       3 output times" in text
    for key in ("viscosity", "final_time", "grf_sigma", "grf_tau", "grf_alpha", "solver"):
        assert f"  {key} = " in text, key
    res = burgers_ds["residual"].values
    assert f"min {res.min():.3g}  mean {res.mean():.3g}  max {res.max():.3g}" in text
    assert "seeds:      6 of 6 known" in text
    assert burgers_ds.attrs["created"] in text


def test_info_run_directly(tmp_path, darcy_ds, capsys):
    path = save_dataset(darcy_ds, tmp_path / "d.nc")
    assert info.run(argparse.Namespace(file=path)) == 0
    text = capsys.readouterr().out
    assert "17 x 17 nodes" in text
    assert "  forcing = 1.0" in text
    its = darcy_ds["iterations"].values.astype(np.float64)
    assert f"iterations: min {its.min():.4g}" in text


def test_info_of_an_import_says_the_solve_times_are_unknown(tmp_path, rng, capsys):
    """Imported data record no solve times: no 'unknown s; total 0 s'."""
    import scipy.io

    from neuralop_fem.data.matlab import import_mat

    src = tmp_path / "b.mat"
    scipy.io.savemat(src, {"a": rng.standard_normal((3, 8)), "u": rng.standard_normal((3, 8))})
    assert main(["info", str(import_mat(src, tmp_path / "b.nc", problem="burgers"))]) == 0
    text = capsys.readouterr().out
    assert "  solve_time: unknown\n" in text
    assert "total" not in text


def test_info_bad_file_is_one_line_error(tmp_path, capsys):
    bad = tmp_path / "bad.nc"
    bad.write_text("nope")
    assert main(["info", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "bad.nc: cannot be read as a netCDF4 file" in err


def test_info_reads_every_chunk_unless_told_not_to(tmp_path, darcy_ds, capsys):
    from ..helpers import corrupt_chunk

    path = save_dataset(darcy_ds, tmp_path / "d.nc")
    assert main(["info", str(path)]) == 0
    assert "checksums:   verified (6 chunks read)" in capsys.readouterr().out
    corrupt_chunk(path, tmp_path / "bad.nc", "u")  # a field chunk: the summary never reads it
    assert main(["info", str(tmp_path / "bad.nc")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "bad.nc: variable `u` (sample 0..3) cannot be read" in err
    assert main(["info", str(tmp_path / "bad.nc"), "--no-check"]) == 0
    assert "checksums:   not checked (--no-check)" in capsys.readouterr().out
