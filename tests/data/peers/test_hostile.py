"""Bad and hostile peer files: one clear line each, nothing from the file runs (CLI exit 2)."""

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
from neuralop_fem.data.peers import read_neuralop, read_pdebench
from neuralop_fem.errors import DatasetError

from .conftest import write_neuralop_darcy, write_pdebench_burgers, write_pdebench_darcy

ROOT = Path(__file__).resolve().parents[3]


def _touch(path):
    """What the hostile pickle calls when unpickled: creates ``path``."""
    Path(path).write_text("ran")


class Payload:
    """Pickles as a call of :func:`_touch`, which would run on an unsafe load."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (_touch, (self.marker,))


def hostile_file(tmp_path):
    marker = tmp_path / "code-ran"
    path = tmp_path / "evil.pt"
    torch.save({"x": torch.zeros(2, 4, 4, dtype=torch.bool), "y": Payload(marker)}, path)
    return path, marker


def test_the_hostile_file_would_run_code_on_an_unsafe_load(tmp_path):
    path, marker = hostile_file(tmp_path)
    torch.load(path, weights_only=False)  # what the refusal prevents
    assert marker.read_text() == "ran"


def test_pickled_code_is_refused_without_running(tmp_path):
    path, marker = hostile_file(tmp_path)
    refused = r"refused: .*test_hostile._touch.*would run code"
    with pytest.raises(DatasetError, match=refused) as err:
        read_neuralop(path)
    assert "\n" not in str(err.value)
    assert not marker.exists()


class SystemCall:
    """Pickles as ``os.system("true")``: a module torch's safe unpickler blocks by name."""

    def __reduce__(self):
        return (os.system, ("true",))


def test_a_blocked_module_is_named_in_the_refusal(tmp_path):
    """docs/data_from_other_tools.md: the refusal names the object (torch words a blocked
    module such as os/posix differently from an unknown global)."""
    torch.save({"x": SystemCall()}, tmp_path / "evil.pt")
    with pytest.raises(DatasetError, match=r"refused: .*\(it names (os|posix|nt)\.system\)"):
        read_neuralop(tmp_path / "evil.pt")


def test_a_file_of_another_format_is_not_called_pickled_code(tmp_path, rng):
    """A netCDF4 / HDF5 file given to the .pt reader is not a pickle: no 'refused'."""
    h5 = tmp_path / "d.nc"
    write_pdebench_darcy(h5, rng)
    with pytest.raises(DatasetError, match=r"cannot be read as a torch .pt file .*HDF5") as err:
        read_neuralop(h5)
    assert "refused" not in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(("content", "match"), [
    ({"a": torch.zeros(2, 4, 4), "b": torch.zeros(2, 4, 4)}, r"keys 'x' and 'y'.*\['a', 'b'\]"),
    ({"x": torch.zeros(2, 4, 4), "y": torch.zeros(2, 8, 8)},
     r"got `x` \(2, 4, 4\).*`y` \(2, 8, 8\)"),
    ({"x": torch.ones(2, 8), "y": torch.zeros(2, 3, 8)}, r"`y\[:, 0\]` must equal `x`"),
    ({"x": torch.full((2, 4, 4), float("nan")), "y": torch.zeros(2, 4, 4)},
     r"`x` must be finite"),
    ({"x": torch.zeros(2, 4, 4), "y": torch.zeros(2, 4, 4)}, r"`x` must be > 0"),
    (torch.zeros(3), r"must hold a dict of tensors"),
])
def test_wrong_keys_shapes_and_values(tmp_path, content, match):
    torch.save(content, tmp_path / "f.pt")
    with pytest.raises(DatasetError, match=match) as err:
        read_neuralop(tmp_path / "f.pt")
    assert "\n" not in str(err.value)


def test_truncated_pt(tmp_path, rng):
    write_neuralop_darcy(tmp_path / "d.pt", rng)
    data = (tmp_path / "d.pt").read_bytes()
    (tmp_path / "d.pt").write_bytes(data[: len(data) // 2])
    with pytest.raises(DatasetError, match="cannot be read as a torch .pt file"):
        read_neuralop(tmp_path / "d.pt")


def test_truncated_hdf5(tmp_path, rng):
    src = tmp_path / "1D_Burgers_Sols_Nu0.01.hdf5"
    write_pdebench_burgers(src, rng, n_samples=50, n=64)
    data = src.read_bytes()
    src.write_bytes(data[: len(data) // 2])
    with pytest.raises(DatasetError, match="cannot be read as an HDF5 file"):
        read_pdebench(src)


def test_hdf5_wrong_keys_and_shapes(tmp_path, rng):
    src = tmp_path / "x.hdf5"
    with h5py.File(src, "w") as f:
        f.create_dataset("density", data=np.zeros((2, 3, 4)))
    with pytest.raises(DatasetError, match=r"dataset `tensor`.*keys found: \['density'\]"):
        read_pdebench(src, problem="burgers")
    with pytest.raises(DatasetError, match=r"not a PDEBench 1D Burgers"):
        read_pdebench(src)
    write_pdebench_darcy(src, rng)
    with h5py.File(src, "r+") as f:
        del f["tensor"]
        f.create_dataset("tensor", data=np.zeros((4, 1, 6, 6), dtype=np.float32))
    with pytest.raises(DatasetError, match=r"must match; got \(4, 8, 8\) and \(4, 1, 6, 6\)"):
        read_pdebench(src)


def test_hdf5_unknown_grid(tmp_path, rng):
    src = tmp_path / "b.hdf5"
    write_pdebench_burgers(src, rng)
    with h5py.File(src, "r+") as f:
        f["x-coordinate"][...] = np.linspace(-1, 1, 16)
    with pytest.raises(DatasetError, match=r"`x-coordinate` must be the 16 cell centres"):
        read_pdebench(src)


def _cli(*args, cwd):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "neuralop_fem.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_main_refuses_a_hostile_file_in_one_line(tmp_path, capsys):
    evil, marker = hostile_file(tmp_path)
    assert main(["import", "neuralop", str(evil), "--out", str(tmp_path / "o.nc")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("neuralop-fem import neuralop: error: ")
    assert not marker.exists()


@pytest.mark.slow
def test_cli_refuses_bad_files_in_one_line(tmp_path, rng):
    evil, marker = hostile_file(tmp_path)
    truncated = tmp_path / "t.hdf5"
    write_pdebench_burgers(truncated, rng, n_samples=50, n=64)
    truncated.write_bytes(truncated.read_bytes()[:1000])
    for args, what in [(["neuralop", str(evil)], "refused"),
                       (["pdebench", str(truncated)], "cannot be read as an HDF5 file")]:
        proc = _cli("import", *args, "--out", str(tmp_path / "o.nc"), cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count("\n") == 1, proc.stderr
        assert what in proc.stderr
        assert proc.stderr.startswith(f"neuralop-fem import {args[0]}: error: ")
    assert not marker.exists()
    assert not (tmp_path / "o.nc").exists()
