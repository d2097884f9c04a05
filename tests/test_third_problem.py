"""A new problem is two entries: the heat equation of ``tests/heat_problem.py``, registered from
outside the packages, goes through generate -> train one epoch -> Surrogate -> compare with no
change to ``solvers`` or ``neuralop_fem``, in Python and on the command line (``--plugin``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from neuralop_fem import Surrogate, compare, generate, load_dataset
from neuralop_fem.problems import get_kit, kit_table, unregister_problem
from neuralop_fem.training import TrainConfig, training_preset
from neuralop_fem.training.trainer import Trainer
from solvers.problems import PROBLEMS, get_problem

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module", autouse=True)
def heat():
    """The problem is registered for this module's tests only (the other tests see the
    built-in problems alone)."""
    import importlib

    module = importlib.import_module("tests.heat_problem")
    module.register()
    yield module
    unregister_problem("heat1d")
    assert "heat1d" not in PROBLEMS


def _trig(modes: dict[int, complex], n: int, kappa: float, t: float) -> np.ndarray:
    """``u(x_i, t)`` for ``u0 = sum_k c_k e^{2 pi i k x} + c.c.`` (each mode decays alone)."""
    x = np.arange(n) / n
    u = np.zeros(n)
    for k, c in modes.items():
        decay = np.exp(-kappa * (2 * np.pi * k) ** 2 * t)
        u += 2.0 * np.real(c * np.exp(2j * np.pi * k * x)) * decay
    return u


def test_the_solver_is_the_exact_solution(heat):
    # Resolved modes (k < n/2) of a trigonometric polynomial: exact up to round-off, 1e-14
    # relative after the FFT round trip.
    modes = {1: 0.5 - 0.2j, 3: 0.1j, 7: 0.05}
    n, kappa, t = 32, 0.02, 0.3
    solver = heat.HeatSolver(kappa=kappa, final_time=t)
    u = solver.solve(_trig(modes, n, kappa, 0.0))
    want = _trig(modes, n, kappa, t)
    assert np.abs(u - want).max() < 1e-14 * np.abs(want).max() * 10


def test_the_solver_follows_the_contract(heat):
    solver = get_problem("heat1d").make_solver()
    u0 = xr.DataArray(np.ones((2, 8)), dims=("sample", "x"))
    out, report = solver.solve_with_report(u0)
    assert isinstance(out, xr.DataArray)
    assert out.dims == ("sample", "x")
    assert report.iterations.tolist() == [1, 1]
    with pytest.raises(ValueError, match="kappa"):
        heat.HeatSolver(kappa=-1.0)


def test_the_registry_knows_the_problem_everywhere(heat):
    assert get_problem("heat1d").solver_name(heat.HeatSolver()) == "fourier"
    assert get_kit("heat1d").config_class() is heat.HeatDataConfig
    assert dict(kit_table("chunk_size"))["heat1d"] == 8
    assert training_preset("heat1d-fno").batch_size == 4  # the kit's training defaults


def test_generate_train_surrogate_compare(tmp_path, heat):
    data = generate("heat1d", n_samples=12, resolution=32, seed=3, out=tmp_path / "heat.nc",
                    workers=0, progress=False)
    with load_dataset(data) as ds:
        assert ds.attrs["problem"] == "heat1d"
        assert ds["u0"].dims == ("sample", "x")
        u0, u = ds["u0"].values, ds["u"].values
        assert json.loads(ds.attrs["config_json"])["solver_class"] == "HeatSolver"
    np.testing.assert_allclose(u, heat.HeatSolver().solve(u0), rtol=0, atol=1e-12)

    from neuralop_fem.models.presets import model_preset

    config = TrainConfig(task="heat1d", epochs=1, batch_size=4, eval_batch_size=4, n_train=8,
                         n_val=2, n_test=2, device="cpu", resolution=32)
    run = tmp_path / "run"
    with Trainer(run, data, model_config=model_preset("heat1d-fno"), config=config,
                 preset="heat1d-fno") as trainer:
        trainer.fit()

    sur = Surrogate.load(run)
    assert sur.problem == "heat1d"
    pred = sur.solve(u0[:3])
    assert pred.shape == (3, 32)
    assert np.isfinite(pred).all()

    result = compare(heat.HeatSolver(), sur, u0[:3])
    assert result.attrs["problem"] == "heat1d"
    assert result["rel_l2"].shape == (3,)
    assert np.isfinite(result["rel_l2"]).all()
    oracle = compare(heat.HeatSolver(), heat.HeatSolver(), u0[:3])
    assert float(oracle["rel_l2"].max()) == 0.0  # the reference against itself


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get(
        "PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "neuralop_fem.cli", "--plugin",
                           "tests.heat_problem", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=300)


@pytest.mark.slow  # four CLI subprocesses (about 100 s on a busy 2-core machine)
def test_the_command_line_reaches_the_problem_through_a_plugin(tmp_path):
    help_text = _cli("generate", "heat1d", "--help", cwd=tmp_path)
    assert help_text.returncode == 0, help_text.stderr
    assert "--kappa" in help_text.stdout
    assert "diffusivity" in help_text.stdout
    out = tmp_path / "heat.nc"
    gen = _cli("generate", "heat1d", "--samples", "12", "--resolution", "16", "--kappa", "0.05",
               "--workers", "0", "--out", str(out), cwd=tmp_path)
    assert gen.returncode == 0, gen.stderr
    train = _cli("train", "--data", str(out), "--preset", "heat1d-fno", "--out",
                 str(tmp_path / "run"), "--epochs", "1", "--device", "cpu", cwd=tmp_path)
    assert train.returncode == 0, train.stderr
    report = _cli("compare", str(tmp_path / "run"), "--data", str(out), "--out",
                  str(tmp_path / "report"), cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert any((tmp_path / "report").iterdir())


def test_an_unknown_plugin_is_a_one_line_error(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "neuralop_fem.cli", "--plugin", "no_such_mod",
                           "info", "x.nc"], capture_output=True, text=True, cwd=tmp_path,
                          timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert "--plugin" in proc.stderr, proc.stderr
