"""generate --like: a peer's kind of data from our solvers, exported to its layout, imported
back and checked against our solver on its own grid (no resampling: agreement to tolerance)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
import torch

from neuralop_fem.cli import main
from neuralop_fem.data import load_dataset
from neuralop_fem.data.generation import like_config
from neuralop_fem.data.peers.neuralop import DEFAULT_PHASE_VALUES
from neuralop_fem.errors import ConfigError
from neuralop_fem.problems.peer_presets import PEER_PRESETS, get_preset
from neuralop_fem.training import training_preset

ROOT = Path(__file__).resolve().parents[3]


def _cli(tmp_path: Path, *args: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "neuralop_fem.cli", *args], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_pdebench_like_round_trip_and_check(tmp_path):
    _cli(tmp_path, "generate", "darcy", "--like", "pdebench-darcy", "--resolution", "12",
         "--forcing", "0.1", "--samples", "3", "--out", "p.nc", "--workers", "0")
    ours = load_dataset(tmp_path / "p.nc")
    assert ours.attrs["grid"] == "cell-centred"
    assert ours.attrs["forcing"] == 0.1
    assert set(np.unique(ours["a"].values)) <= {1.0, 0.1}
    hdf = "2D_DarcyFlow_beta0.1_Train.hdf5"
    _cli(tmp_path, "export", "p.nc", "--format", "pdebench", "--out", hdf)
    with h5py.File(tmp_path / hdf, "r") as f:  # read back the peer's way
        centres = (np.arange(12) + 0.5) / 12
        np.testing.assert_allclose(f["x-coordinate"][()], centres, rtol=0, atol=1e-15)
        np.testing.assert_allclose(f["y-coordinate"][()], centres, rtol=0, atol=1e-15)
        assert f["nu"].shape == (3, 12, 12)
        assert f["tensor"].shape == (3, 1, 12, 12)
        np.testing.assert_array_equal(f["nu"][()], ours["a"].transpose("sample", "x", "y"))
        np.testing.assert_array_equal(f["tensor"][:, 0], ours["u"].transpose("sample", "x", "y"))
        assert f.attrs["beta"] == 0.1
    _cli(tmp_path, "import", "pdebench", hdf, "--out", "back.nc")
    # Check both our file and the imported one: at r = 1 the cell-centred solver reproduces
    # the labels (the generator's own discretisation; direct solve, round-off 1e-14); finer
    # cells give another answer.
    for name in ("p.nc", "back.nc"):
        out = _cli(tmp_path, "check", name, "--refine", "1,3", "--out", f"{name}.json")
        result = json.loads((tmp_path / f"{name}.json").read_text())
        assert result["solver"] == "DarcyCellFDSolver"
        assert result["grid"] == "cells"
        assert result["rows"][0]["rel_l2"]["max"] < 1e-12
        assert result["rows"][1]["rel_l2"]["mean"] > 1e-3
        assert result["agree_at"]["grid"] == 12
        assert "agree to round-off from grid 12 (cells per side)" in out
    # docs/data_from_other_tools.md shows this output for pb128.nc: the same lines, but for
    # the numbers, the file name and the number of refinements.
    text = (ROOT / "docs" / "data_from_other_tools.md").read_text()
    shown = re.search(r"\$ neuralop-fem check pb128\.nc .*?\n(.*?)```", text, re.S).group(1)

    def form(lines: str, name: str) -> list[str]:
        lines = [" ".join(re.sub(r"\d+(\.\d+)?(e[+-]\d+)?", "#", x.replace(name, "FILE")).split())
                 for x in lines.splitlines()]
        return [*lines[:3], lines[-1]]

    assert form(shown, "pb128.nc") == form(out, "back.nc")
    info = _cli(tmp_path, "info", "p.nc")
    assert "grid:        12 x 12 cells, cell centres x_i = (i + 1/2)/12" in info


def test_neuralop_like_round_trip_and_check(tmp_path, capsys):
    out = tmp_path / "n.nc"
    assert main(["generate", "darcy", "--like", "neuralop-darcy", "--samples", "3",
                 "--out", str(out), "--workers", "0", "--no-progress"]) == 0
    ours = load_dataset(out)
    assert ours.sizes["x"] == 16
    assert ours.attrs["grid"] == "half-open"
    assert (ours.attrs["contrast_high"], ours.attrs["contrast_low"]) == DEFAULT_PHASE_VALUES
    assert main(["export", str(out), "--format", "neuralop", "--out", str(tmp_path / "n.pt")]) == 0
    back = torch.load(tmp_path / "n.pt", weights_only=True)  # their loader's view
    assert back["x"].dtype == torch.bool
    assert tuple(back["x"].shape) == (3, 16, 16)
    a = ours["a"].transpose("sample", "x", "y").values
    np.testing.assert_array_equal(back["x"].numpy(), a == DEFAULT_PHASE_VALUES[0])
    u = ours["u"].transpose("sample", "x", "y").values
    np.testing.assert_array_equal(back["y"].numpy(), u)
    assert not u[:, 0].any()
    assert u[:, -1].any()
    imported = tmp_path / "back.nc"
    assert main(["import", "neuralop", str(tmp_path / "n.pt"), "--out", str(imported),
                 "--forcing", "2.5"]) == 0
    np.testing.assert_array_equal(load_dataset(imported)["a"].transpose("sample", "x", "y"), a)
    capsys.readouterr()
    for path in (out, imported):
        assert main(["check", str(path), "--refine", "1", "--out",
                     str(path.with_suffix(".json"))]) == 0
        result = json.loads(path.with_suffix(".json").read_text())
        # The points i/n are nodes of the 17-node grid: the labels' own solver (GMG-CG to
        # 1e-10 relative residual) at r = 1.
        assert result["rows"][0]["grid"] == 17
        assert result["rows"][0]["rel_l2"]["max"] < 1e-8


def test_presets_and_their_errors(tmp_path, capsys):
    config, n = like_config("pdebench-darcy", {"forcing": 10.0})
    assert (config.grid, config.forcing, config.linear_solver, n) == (
        "cell-centred", 10.0, "direct", 128)
    assert {p.export_format for p in PEER_PRESETS.values()} == {"neuralop", "pdebench"}
    with pytest.raises(ConfigError, match="`like` must be one of 'neuralop-darcy', "
                                          "'pdebench-darcy'; got 'fno-darcy'"):
        get_preset("fno-darcy")
    with pytest.raises(ConfigError, match="Unknown DarcyDataConfig key"):
        like_config("neuralop-darcy", {"beta": 1.0})
    assert main(["generate", "darcy", "--like", "fno-darcy", "--samples", "1",
                 "--out", str(tmp_path / "x.nc")]) == 2
    assert "argument --like: invalid choice: 'fno-darcy'" in capsys.readouterr().err
    assert main(["generate", "darcy", "--grid", "cell-centred", "--discretisation", "fem",
                 "--samples", "1", "--resolution", "4", "--out", str(tmp_path / "y.nc")]) == 2
    assert "finite differences only" in capsys.readouterr().err


@pytest.mark.slow
def test_cell_centred_file_trains_evaluates_and_compares(tmp_path):
    _cli(tmp_path, "generate", "darcy", "--grid", "cell-centred", "--resolution", "12",
         "--samples", "12", "--out", "c.nc", "--workers", "0")
    _cli(tmp_path, "train", "--data", "c.nc", "--preset", "darcy-fno", "--out", "run",
         "--epochs", "1", "--n-train", "8", "--n-val", "2", "--n-test", "2", "--set", "modes=4")
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["normalizers"]["dirichlet"] is False  # no zero projection on cell centres
    assert "rel. L2" in _cli(tmp_path, "evaluate", "run", "--data", "c.nc")
    _cli(tmp_path, "compare", "run", "--data", "c.nc", "--out", "report")
    assert "DarcyCellFDSolver" in (tmp_path / "report" / "summary.md").read_text()


def test_generate_help_lists_the_presets_without_importing_xarray(tmp_path):
    code = ("import sys\nfrom neuralop_fem.cli import main\n"
            "try:\n    main(['generate', 'darcy', '--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('torch', 'dask', 'xarray') if m in sys.modules))\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"
    flat = "".join(proc.stdout.split())  # argparse wraps lines at hyphens
    for name in PEER_PRESETS:
        assert f"{name}:" in flat


def test_a_peer_presets_training_family_trains_on_data_of_its_size():
    preset = get_preset("neuralop-darcy")
    assert preset.train_presets == ("darcy-fno-neuralop", "darcy-galerkin-neuralop")
    for name in preset.train_presets:
        config = training_preset(name)
        assert config.task == preset.problem
        assert config.resolution is None  # the file's grid: 16 here, 32 for their test grid
        # their training file holds 1000 samples
        assert config.n_train + config.n_val + config.n_test <= 1000
    assert get_preset("pdebench-darcy").train_presets == ()
