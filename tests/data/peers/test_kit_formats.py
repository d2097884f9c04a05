"""The peer formats are fields of the problem kits: recognition by layout, the problems
``import --problem`` offers, and a problem without a mapping (the heat problem of
``tests/heat_problem.py``) refused with a clear message."""

from __future__ import annotations

import dataclasses
import importlib
import os
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
import torch

from neuralop_fem.cli import main
from neuralop_fem.data.peers import (
    export_neuralop,
    export_pdebench,
    read_neuralop,
    read_pdebench,
)
from neuralop_fem.errors import DatasetError, InputError
from neuralop_fem.problems import (
    NeuralopFormat,
    PDEBenchFormat,
    PeerTrajectory,
    ProblemKit,
    get_kit,
    register_problem,
    unregister_problem,
)

from ..conftest import make_burgers
from .conftest import (
    write_neuralop_burgers,
    write_neuralop_darcy,
    write_pdebench_burgers,
    write_pdebench_darcy,
)

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def heat():
    """The heat problem as it is (no peer mapping), for this test only."""
    module = importlib.import_module("tests.heat_problem")
    unregister_problem(module.NAME)
    module.register()
    yield module
    unregister_problem(module.NAME)


@pytest.fixture
def heat_like_burgers():
    """The heat problem with a neuraloperator mapping that Burgers files also fit."""
    module = importlib.import_module("tests.heat_problem")
    unregister_problem(module.NAME)
    register_problem(module.PROBLEM,
                     dataclasses.replace(module.KIT, neuralop_format=NeuralopFormat()))
    yield module
    unregister_problem(module.NAME)


def test_the_built_in_problems_are_recognised_from_the_layout(tmp_path, rng):
    write_neuralop_burgers(tmp_path / "b.pt", rng)
    write_neuralop_darcy(tmp_path / "d.pt", rng)
    write_pdebench_burgers(tmp_path / "b.hdf5", rng)
    write_pdebench_darcy(tmp_path / "d.hdf5", rng)
    assert read_neuralop(tmp_path / "b.pt").attrs["problem"] == "burgers"
    assert read_neuralop(tmp_path / "d.pt").attrs["problem"] == "darcy"
    assert read_pdebench(tmp_path / "b.hdf5").attrs["problem"] == "burgers"
    assert read_pdebench(tmp_path / "d.hdf5").attrs["problem"] == "darcy"


def test_a_file_of_no_layout_names_the_layouts_and_the_shapes(tmp_path):
    torch.save({"x": torch.zeros(2, 4, 4, 4), "y": torch.zeros(2, 4, 4, 4)}, tmp_path / "a.pt")
    with pytest.raises(DatasetError) as err:
        read_neuralop(tmp_path / "a.pt")
    text = str(err.value)
    assert "1D Burgers (`x` (N, n), `y` (N, n) or (N, T, n))" in text
    assert "2D Darcy (`x` (N, n, n), `y` (N, n, n))" in text
    assert "`x` (2, 4, 4, 4) float32" in text
    with h5py.File(tmp_path / "a.hdf5", "w") as f:
        f.create_dataset("nu", data=np.ones((2, 4, 4)))
        f.create_dataset("tensor", data=np.ones((2, 4, 4)))  # no channel axis
        f.create_dataset("x-coordinate", data=np.arange(4) / 4)
        f.create_dataset("y-coordinate", data=np.arange(4) / 4)
    with pytest.raises(DatasetError, match=r"2D Darcy \(`nu` \(N, n, n\), `tensor` "
                                           r"\(N, 1, n, n\).*`tensor` \(2, 4, 4\)"):
        read_pdebench(tmp_path / "a.hdf5")


def test_a_problem_without_a_mapping_is_refused_and_not_offered(tmp_path, rng, heat, capsys):
    assert get_kit("heat1d").neuralop_format is None
    write_neuralop_burgers(tmp_path / "b.pt", rng)
    write_pdebench_burgers(tmp_path / "b.hdf5", rng)
    with pytest.raises(InputError, match=r"one of \('burgers', 'darcy'\) \(the problems with "
                                         r"a neuraloperator layout\); got 'heat1d'"):
        read_neuralop(tmp_path / "b.pt", problem="heat1d")
    with pytest.raises(InputError, match=r"PDEBench layout\); got 'heat1d'"):
        read_pdebench(tmp_path / "b.hdf5", problem="heat1d")
    # Recognition only asks the problems that have a mapping: Burgers as before.
    assert read_neuralop(tmp_path / "b.pt").attrs["problem"] == "burgers"
    ds = heat.KIT.builder()(np.zeros((2, 8)), np.zeros((2, 8)), seed=np.zeros(2, np.uint64),
                            iterations=np.ones(2), residual=np.zeros(2),
                            solve_time=np.zeros(2),
                            attrs={"kappa": 0.01, "final_time": 0.1, "dataset_seed": 1,
                                   "source": "test"})
    for write in (export_neuralop, export_pdebench):
        with pytest.raises(InputError, match=r"the dataset's problem must be one of .*'heat1d'"):
            write(ds, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    out = str(tmp_path / "o.nc")
    for tool, src in (("neuralop", "b.pt"), ("pdebench", "b.hdf5")):
        assert main(["import", tool, str(tmp_path / src), "--out", out,
                     "--problem", "heat1d"]) == 2
        err = capsys.readouterr().err
        assert "invalid choice: 'heat1d' (choose from 'burgers', 'darcy')" in err
        assert err.count("\n") == 1


def test_a_mapping_makes_the_problem_a_choice_and_ambiguity_an_error(tmp_path, rng,
                                                                     heat_like_burgers):
    x = rng.standard_normal((3, 8))
    torch.save({"x": torch.from_numpy(x), "y": torch.from_numpy(2 * x)}, tmp_path / "h.pt")
    with pytest.raises(DatasetError, match=r"fits the neuraloperator layouts of several "
                                           r"problems \('burgers', 'heat1d'\); pass `problem`"):
        read_neuralop(tmp_path / "h.pt")
    ds = read_neuralop(tmp_path / "h.pt", problem="heat1d")
    assert ds.attrs["problem"] == "heat1d"
    np.testing.assert_array_equal(ds["u"].values, 2 * x)
    assert ds.attrs["kappa"] == "unknown"
    export_neuralop(ds, tmp_path / "back.pt")
    back = torch.load(tmp_path / "back.pt")
    assert set(back) == {"x", "y"}
    np.testing.assert_array_equal(back["y"].numpy(), 2 * x)
    assert main(["import", "neuralop", str(tmp_path / "h.pt"), "--out",
                 str(tmp_path / "h.nc"), "--problem", "heat1d"]) == 0
    # A Burgers trajectory fits Burgers alone: recognised as before.
    write_neuralop_burgers(tmp_path / "b.pt", rng)
    assert read_neuralop(tmp_path / "b.pt").attrs["problem"] == "burgers"


def test_the_kit_checks_its_mappings(heat):
    trajectory = PeerTrajectory(field="u_t", final_time="final_time")
    with pytest.raises(InputError, match=r"`neuralop_format.trajectory.field` must be one of "
                                         r"the optional fields \[\]; got 'u_t'"):
        dataclasses.replace(heat.KIT, neuralop_format=NeuralopFormat(trajectory=trajectory))
    with pytest.raises(InputError, match="`pdebench_format` must be a PDEBenchFormat"):
        dataclasses.replace(heat.KIT, pdebench_format=NeuralopFormat())
    with pytest.raises(InputError, match="needs the problem's `fields`"):
        ProblemKit(name="darcy-inverse", neuralop_format=NeuralopFormat())
    with pytest.raises(InputError, match="exactly one of `input_key` and `trajectory`"):
        PDEBenchFormat(input_key="nu", trajectory=trajectory, parameter="p", name_tag="p")
    with pytest.raises(InputError, match="`phase_values` must be two finite numbers > 0"):
        NeuralopFormat(phase_values=(1.0, 0.0))
    with pytest.raises(InputError, match="`factor` must be a finite number > 0"):
        PDEBenchFormat(input_key="nu", parameter="p", name_tag="p", factor=-1.0)


def test_export_of_burgers_still_writes_the_kit_scalars(tmp_path, rng):
    burgers = make_burgers(rng)
    export_neuralop(burgers, tmp_path / "b.pt")
    got = torch.load(tmp_path / "b.pt")
    assert got["visc"].item() == burgers.attrs["viscosity"]  # the kit's scalars {"visc": ...}
    assert got["visc"].shape == (1, 1)


@pytest.mark.slow  # one CLI subprocess
def test_the_command_line_offers_the_problems_with_a_mapping(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get(
        "PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "neuralop_fem.cli", "--plugin",
                           "tests.heat_problem", "import", "pdebench", "--help"],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "{burgers,darcy}" in proc.stdout
    assert "heat1d" not in proc.stdout
