"""``generate --device``: the torch twins write the same files (check, info, round trip), resume
after an out-of-memory error with a smaller batch, and never mix solvers in one file."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
import xarray as xr

from neuralop_fem.cli import main
from neuralop_fem.data import generate
from neuralop_fem.data.generation import read_generation_settings
from neuralop_fem.data.generation.store import partial_dir
from neuralop_fem.data.io import load_dataset, save_dataset
from neuralop_fem.errors import ConfigError
from neuralop_fem.torch_solvers import TorchDarcyFDSolver

DARCY = ["--resolution", "17", "--seed", "5", "--chunk-size", "2"]
TOL = 1e-10


def _condition_bound(a: np.ndarray) -> float:
    """Upper bound of cond(h^2 A(a)) (tests/torch_solvers/test_darcy.py explains it)."""
    n = a.shape[-1]
    return 8 * float(a.max()) / (float(a.min()) * 2 * (2 - 2 * np.cos(np.pi / (n - 1))))


def test_device_cpu_file_passes_check_and_info_and_round_trips(tmp_path, capsys):
    twin, plain = tmp_path / "twin.nc", tmp_path / "numpy.nc"
    assert main(["generate", "darcy", "--samples", "5", "--out", str(twin), *DARCY,
                 "--workers", "0", "--device", "cpu"]) == 0
    assert main(["generate", "darcy", "--samples", "5", "--out", str(plain), *DARCY,
                 "--workers", "0"]) == 0
    assert main(["check", str(twin)]) == 0
    assert main(["info", str(twin)]) == 0
    text = capsys.readouterr().out
    assert "solver_class = TorchDarcyFDSolver" in text
    assert "solver_config_device = cpu" in text
    stored = read_generation_settings(twin)
    assert (stored["solver_class"], stored["device"]) == ("TorchDarcyFDSolver", "cpu")
    with load_dataset(twin) as a, load_dataset(plain) as b:
        assert a["u"].dims == b["u"].dims
        assert set(a.variables) == set(b.variables)
        np.testing.assert_array_equal(a["a"].values, b["a"].values)  # the same draws
        np.testing.assert_array_equal(a["seed"].values, b["seed"].values)
        assert (a["residual"].values <= TOL).all()
        for s in range(5):  # two solutions of the same system to relative residual TOL
            diff = np.linalg.norm(a["u"][s] - b["u"][s]) / np.linalg.norm(b["u"][s])
            assert diff <= 2 * _condition_bound(a["a"].values[s]) * TOL
        save_dataset(a, tmp_path / "again.nc")
    with load_dataset(twin) as a, load_dataset(tmp_path / "again.nc") as c:
        xr.testing.assert_identical(a, c)


def test_device_cpu_on_worker_processes_burgers(tmp_path):
    out = tmp_path / "b.nc"
    generate("burgers", n_samples=3, resolution=64, seed=2, out=out, chunk_size=2, workers=1,
             device="cpu", progress=False)
    ref = generate("burgers", n_samples=3, resolution=64, seed=2, out=tmp_path / "r.nc",
                   chunk_size=2, workers=0, progress=False)
    with load_dataset(out) as a, load_dataset(ref) as b:
        assert a.attrs["solver_class"] == "TorchBurgersSpectralSolver"
        u, v = a["u"].values, b["u"].values
        # the numpy solver's operations in the same order: round-off (1e-10 bound, see
        # test_burgers.py)
        assert (np.linalg.norm(u - v, axis=-1) / np.linalg.norm(v, axis=-1)).max() <= 1e-10


def _fail_second_batch(monkeypatch):
    """The twin's second batch of the process raises torch's out-of-memory error."""
    calls = {"n": 0}
    original = TorchDarcyFDSolver._solve_batch

    def flaky(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            msg = "CUDA out of memory. Tried to allocate 2.00 GiB"
            raise torch.OutOfMemoryError(msg)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(TorchDarcyFDSolver, "_solve_batch", flaky)


def test_out_of_memory_names_a_batch_size_and_keeps_the_chunks(tmp_path, monkeypatch):
    out = tmp_path / "d.nc"
    kwargs = {"n_samples": 6, "resolution": 17, "seed": 5, "chunk_size": 2, "workers": 0,
              "out": out, "device": "cpu", "progress": False}
    _fail_second_batch(monkeypatch)
    with pytest.raises(ConfigError, match=r"out of memory on cpu solving 2 samples at once; "
                       r"rerun the same call with batch_size=1 .*the 1 chunk\(s\) already done"):
        generate("darcy", **kwargs)
    assert len(list(partial_dir(out).glob("chunk-*.npz"))) == 1
    monkeypatch.undo()
    # the numpy solvers cannot take over the twin's unfinished run
    with pytest.raises(ConfigError, match="other settings: device"):
        generate("darcy", **{**kwargs, "device": None})
    generate("darcy", **{**kwargs, "batch_size": 1})  # resumes: batch_size is no setting
    whole = generate("darcy", **{**kwargs, "out": tmp_path / "whole.nc"})
    with load_dataset(out) as a, load_dataset(whole) as b:
        np.testing.assert_allclose(a["u"].values, b["u"].values, rtol=0, atol=1e-14)


def test_cli_out_of_memory_is_one_line(tmp_path, monkeypatch, capsys):
    _fail_second_batch(monkeypatch)
    code = main(["generate", "darcy", "--samples", "4", "--out", str(tmp_path / "d.nc"),
                 *DARCY, "--workers", "0", "--device", "cpu"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1
    assert "--batch-size 1" in err


def test_append_refuses_another_solver(tmp_path):
    out = tmp_path / "d.nc"
    generate("darcy", n_samples=2, resolution=17, out=out, workers=0, progress=False)
    with pytest.raises(ConfigError, match=r"solved by DarcyFDSolver, this call solves with "
                       r"TorchDarcyFDSolver on cpu; leave `device` out"):
        generate("darcy", n_samples=2, out=out, append=True, workers=0, device="cpu")
    generate("darcy", n_samples=2, resolution=17, out=tmp_path / "t.nc", workers=0,
             device="cpu", progress=False)
    with pytest.raises(ConfigError, match=r"pass device='cpu' to append"):
        generate("darcy", n_samples=2, out=tmp_path / "t.nc", append=True, workers=0)
    generate("darcy", n_samples=2, out=tmp_path / "t.nc", append=True, workers=0, device="cpu",
             progress=False)
    with load_dataset(tmp_path / "t.nc") as ds:
        assert ds.sizes["sample"] == 4


@pytest.mark.parametrize(("extra", "match"), [
    (["--batch-size", "4"], "batch.size applies to the torch solvers"),
    (["--device", "cpu", "--discretisation", "fem"], "DarcyFEMSolver .* has no torch twin"),
    (["--device", "tpu"], "device"),
])
def test_cli_refusals_are_one_line(tmp_path, capsys, extra, match):
    code = main(["generate", "darcy", "--samples", "2", "--out", str(tmp_path / "d.nc"),
                 *DARCY, "--workers", "0", *extra])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1
    assert re.search(match, err), err


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal without CUDA")
def test_cli_cuda_without_a_gpu_is_one_line(tmp_path, capsys):
    code = main(["generate", "burgers", "--samples", "2", "--out", str(tmp_path / "b.nc"),
                 "--resolution", "32", "--device", "cuda"])
    err = capsys.readouterr().err
    assert code == 2
    assert "sees 0 CUDA device" in err


def test_cuda_with_worker_processes_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="workers` must be 0 or None"):
        generate("darcy", n_samples=2, out=tmp_path / "d.nc", workers=2, device="cuda")
