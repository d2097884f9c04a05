"""check_labels / neuralop-fem check: labels our solver produced agree at the data's grid."""

from __future__ import annotations

import numpy as np
import pytest

from neuralop_fem.cli import main
from neuralop_fem.data import generate, load_dataset, save_dataset
from neuralop_fem.data.peers import read_neuralop, read_pdebench
from neuralop_fem.data.peers.check import check_labels
from neuralop_fem.data.provenance import solver_from_record
from neuralop_fem.errors import DatasetError
from solvers.darcy import DarcyFDSolver

from .conftest import write_neuralop_darcy, write_pdebench_burgers


def test_our_own_darcy_labels_agree_on_their_grid(tmp_path):
    path = generate("darcy", n_samples=3, resolution=9, seed=1, out=tmp_path / "d.nc",
                    workers=0)
    result = check_labels(load_dataset(path), refinements=(1, 2))
    # The labels are this solver's answer on this grid (tolerance 1e-10): error ~1e-10.
    assert result["rows"][0]["rel_l2"]["max"] < 1e-8
    assert result["rows"][1]["rel_l2"]["mean"] > 1e-4  # a finer grid gives another answer
    assert result["agree_at"]["grid"] == 9


def test_neuraloperator_points_are_read_at_i_over_n(tmp_path, rng):
    """Labels made on their points x_i = i/n (a 17-node grid less its last row and column)."""
    write_neuralop_darcy(tmp_path / "d.pt", rng, n_samples=3, n=16)
    import torch

    d = torch.load(tmp_path / "d.pt")
    a = np.where(d["x"].numpy(), 1.0, 0.05)
    a17 = np.pad(a, ((0, 0), (0, 1), (0, 1)), mode="edge")
    u = DarcyFDSolver(forcing=2.0).solve(a17)[:, :16, :16].astype(np.float32)
    torch.save({"x": d["x"], "y": torch.from_numpy(u)}, tmp_path / "d.pt")
    result = check_labels(read_neuralop(tmp_path / "d.pt", forcing=2.0), refinements=(1,))
    # float32 labels: 1e-6 relative.
    assert result["rows"][0]["rel_l2"]["max"] < 1e-6
    assert result["rows"][0]["grid"] == 17


def test_unknown_forcing_is_refused(tmp_path, rng):
    write_neuralop_darcy(tmp_path / "d.pt", rng)
    # The remedy is the command that imported the file (not import-mat, which reads no .pt).
    remedy = r"without forcing.*`neuralop-fem import neuralop d\.pt --problem darcy --forcing VALUE"
    with pytest.raises(DatasetError, match=remedy):
        check_labels(read_neuralop(tmp_path / "d.pt"))
    write_pdebench_burgers(tmp_path / "b.hdf5", rng)  # no Nu... in the name: viscosity unknown
    remedy = r"without viscosity.*`neuralop-fem import pdebench b\.hdf5 --problem burgers --visc"
    with pytest.raises(DatasetError, match=remedy):
        check_labels(read_pdebench(tmp_path / "b.hdf5"))


def test_burgers_labels_agree(tmp_path, capsys):
    path = generate("burgers", n_samples=2, resolution=64, seed=1, out=tmp_path / "b.nc",
                    workers=0)
    assert main(["check", str(path), "--samples", "2", "--refine", "1,2"]) == 0
    out = capsys.readouterr().out
    assert "\nagree to round-off from grid 64 (points) on (mean " in out
    result = check_labels(load_dataset(path), refinements=(1,))
    # Our spectral solver at the data's resolution reproduces its labels (the generator
    # solves at this n too, with the same settings): round-off only.
    assert result["rows"][0]["rel_l2"]["max"] < 1e-8


def test_1d_labels_at_round_off_on_every_grid_agree_from_the_coarsest(tmp_path, capsys):
    """Labels our solver reproduces to round-off on every grid (two smooth modes, solved at
    the data's grid): the line names the data's own grid, in points (not "per side"), not the
    finer grid whose round-off happened to be smallest."""
    path = generate("burgers", n_samples=2, resolution=64, seed=1, out=tmp_path / "b.nc",
                    workers=0)
    ds = load_dataset(path).load()
    x = ds["x"].values
    u0 = 1e-2 * np.stack([np.sin(2 * np.pi * x), np.cos(4 * np.pi * x)])
    ds["u0"].values[:] = u0
    ds["u"].values[:] = solver_from_record(ds.attrs, "burgers").solve(u0)
    save_dataset(ds, tmp_path / "smooth.nc")
    assert main(["check", str(tmp_path / "smooth.nc"), "--refine", "1,2,4,8"]) == 0
    lines = capsys.readouterr().out.splitlines()
    means = [float(line.split()[1]) for line in lines[2:6]]
    assert max(means) < 1e-15  # round-off on every grid ...
    assert min(means) < means[0]  # ... the smallest on a finer grid than the data's
    assert lines[-1] == (f"agree to round-off from grid 64 (points) on (mean {means[0]:.4e}, "
                         "at most 1e-12)")
