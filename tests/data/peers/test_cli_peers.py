"""``neuralop-fem import`` / ``export``: the commands, and imported files through train."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
import torch

from neuralop_fem.cli import main
from neuralop_fem.data import load_dataset

from .conftest import (
    write_neuralop_burgers,
    write_neuralop_darcy,
    write_pdebench_burgers,
    write_pdebench_darcy,
)

ROOT = Path(__file__).resolve().parents[3]


def test_import_then_export_both_formats(tmp_path, rng, capsys):
    src = tmp_path / "darcy_train_8.pt"
    x, y = write_neuralop_darcy(src, rng)
    nc = tmp_path / "d.nc"
    assert main(["import", "neuralop", str(src), "--out", str(nc), "--forcing", "1",
                 "--phase-values", "3,0.5"]) == 0
    assert capsys.readouterr().out == f"wrote {nc} (netCDF, from the neuralop file {src})\n"
    ds = load_dataset(nc)
    np.testing.assert_array_equal(ds["a"].values, np.where(x, 3.0, 0.5))
    assert main(["export", str(nc), "--format", "neuralop", "--out", str(tmp_path / "b.pt")]) == 0
    assert capsys.readouterr().out == \
        f"wrote {tmp_path / 'b.pt'} (neuraloperator .pt dict of {nc})\n"
    back = torch.load(tmp_path / "b.pt")
    np.testing.assert_array_equal(back["x"].numpy(), x)
    np.testing.assert_array_equal(back["y"].numpy(), y)
    hdf = tmp_path / "2D_DarcyFlow_beta1.0_Train.hdf5"
    assert main(["export", str(nc), "--format", "pdebench", "--out", str(hdf)]) == 0
    assert capsys.readouterr().out == f"wrote {hdf} (PDEBench HDF5 of {nc})\n"
    with h5py.File(hdf, "r") as f:
        np.testing.assert_array_equal(f["tensor"][:, 0], y)
    # An existing --out is refused before any work (one line, exit 2).
    assert main(["export", str(nc), "--format", "pdebench", "--out", str(hdf)]) == 2
    assert "pass --overwrite" in capsys.readouterr().err
    assert main(["import", "neuralop", str(src), "--out", str(nc), "--phase-values", "1,0"]) == 2
    assert "HIGH,LOW" in capsys.readouterr().err


@pytest.mark.parametrize(("fmt", "writer", "option", "problem"), [
    ("neuralop", write_neuralop_darcy, ["--viscosity", "0.1"], "darcy"),
    ("neuralop", write_neuralop_darcy, ["--final-time", "1"], "darcy"),
    ("neuralop", write_neuralop_burgers, ["--forcing", "1"], "burgers"),
    ("neuralop", write_neuralop_burgers, ["--phase-values", "1,2"], "burgers"),
    ("pdebench", write_pdebench_darcy, ["--viscosity", "0.1"], "darcy"),
    ("pdebench", write_pdebench_burgers, ["--forcing", "1"], "burgers"),
])
def test_an_option_of_the_other_problem_is_refused(tmp_path, rng, capsys, fmt, writer, option,
                                                   problem):
    """The file's problem is recognised from its arrays; a parameter given for the other
    problem is an error (one line naming it), not dropped unread."""
    src = tmp_path / ("f.pt" if fmt == "neuralop" else "f.hdf5")
    writer(src, rng)
    out = tmp_path / "o.nc"
    assert main(["import", fmt, str(src), "--out", str(out), *option]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"neuralop-fem import {fmt}: error: {option[0]} applies to "), err
    assert f"for a {problem} file" in err
    assert not out.exists()


@pytest.mark.slow
def test_imported_pdebench_burgers_goes_through_info_train_evaluate(tmp_path, rng):
    src = tmp_path / "1D_Burgers_Sols_Nu0.01.hdf5"
    write_pdebench_burgers(src, rng, n_samples=24, n=32, n_times=4)
    env = dict(os.environ, PYTHONPATH=str(ROOT))

    def cli(*args):
        proc = subprocess.run([sys.executable, "-m", "neuralop_fem.cli", *args], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    cli("import", "pdebench", str(src), "--out", "b.nc")
    info = cli("info", "b.nc")
    assert "checksums:   verified" in info
    assert "cell centres" in info
    cli("train", "--data", "b.nc", "--preset", "burgers-fno", "--out", "run", "--epochs", "1",
        "--resolution", "32", "--n-train", "16", "--n-val", "4", "--n-test", "4",
        "--set", "modes=8")
    assert "rel. L2" in cli("evaluate", "run", "--data", "b.nc")


def test_the_page_example_runs_as_written():
    """docs/data_from_other_tools.md: its Python example runs as written."""
    import re

    text = (ROOT / "docs" / "data_from_other_tools.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    assert blocks
    for code in blocks:
        exec(compile(code, "data_from_other_tools.md", "exec"), {"__name__": "__doc__"})
