"""A trained surrogate on a CUDA device: ``Surrogate``, ``compare`` and the CLI.

Marked ``cuda``: skipped without a GPU (see tests/gpu/conftest.py for the CPU rehearsal).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import xarray as xr

from neuralop_fem import Surrogate, compare, load_dataset
from neuralop_fem.models import PRESETS
from neuralop_fem.training import TrainConfig, Trainer
from solvers import BurgersSpectralSolver

from .conftest import TINY_BURGERS

pytestmark = pytest.mark.cuda

#: float32 on two devices: rounding-level differences (~1e-6 relative), far under 1e-4.
RTOL = 1e-4


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, burgers_file, device):
    """A Burgers run trained for 2 epochs on the device (64 grid points)."""
    out = tmp_path_factory.mktemp("runs") / "burgers"
    config = TrainConfig(task="burgers", epochs=2, batch_size=4, n_train=12, n_val=4, n_test=4,
                         resolution=64, gamma=0.1, device=str(device))
    model = PRESETS["burgers-galerkin"].replace(**TINY_BURGERS)
    with Trainer(out, burgers_file, model_config=model, config=config,
                 preset="burgers-galerkin") as trainer:
        trainer.fit()
    return out


def _inputs(burgers_file):
    """u0 and u(1) of the 4 test samples, strided from the file's 128 points to the model's 64."""
    ds = load_dataset(burgers_file).isel(sample=slice(20, 24), x=slice(None, None, 2))
    return ds["u0"], ds["u"]


def test_surrogate_on_the_device_matches_the_cpu(run_dir, burgers_file, device):
    u0, _ = _inputs(burgers_file)
    on_dev = Surrogate.load(run_dir, device=device)
    on_cpu = Surrogate.load(run_dir, device="cpu")
    assert on_dev.device.type == device.type
    assert next(on_dev.operator.parameters()).device.type == device.type
    got = on_dev.solve(u0.values)
    assert isinstance(got, np.ndarray)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, on_cpu.solve(u0.values), rtol=RTOL, atol=1e-6)
    out = on_dev.solve(u0)  # xarray in, xarray out
    assert isinstance(out, xr.DataArray)
    assert out.dims == u0.dims
    np.testing.assert_array_equal(out.values, got)


def test_compare_with_a_device_surrogate(run_dir, burgers_file, device):
    u0, u = _inputs(burgers_file)
    solver = BurgersSpectralSolver()
    on_dev = compare(solver, Surrogate.load(run_dir, device=device), u0, reference_solution=u)
    on_cpu = compare(solver, Surrogate.load(run_dir, device="cpu"), u0, reference_solution=u)
    assert np.isfinite(on_dev["rel_l2"].values).all()
    np.testing.assert_allclose(on_dev["rel_l2"].values, on_cpu["rel_l2"].values, rtol=RTOL)


def test_compare_command_on_the_device(run_dir, burgers_file, device, tmp_path):
    out = tmp_path / "report"
    cmd = [sys.executable, "-m", "neuralop_fem.cli", "compare", str(run_dir), "--data",
           str(burgers_file), "--out", str(out), "--device", device.type, "--max-samples", "4"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = "\n".join(p.read_text() for p in out.glob("*.md"))
    assert f"{device.type}" in text, text[:2000]
    assert "(surrogate)" in text, text[:2000]
