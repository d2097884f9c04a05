"""The torch ETDRK4 Burgers solver against its numpy twin, Cole-Hopf and its order; contract."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import xarray as xr

from neuralop_fem.problems.twins import twin_of
from neuralop_fem.torch_solvers import DeviceMemoryError, TorchBurgersSpectralSolver
from neuralop_fem.torch_solvers._device import out_of_memory
from solvers.burgers import BurgersFDSolver, BurgersSpectralSolver
from solvers.errors import ConvergenceError, InputError, ShapeError
from solvers.exact import burgers_closed_form, burgers_exact
from solvers.grf import PeriodicGRF
from tests.helpers import assert_order

NU_BENCH = 0.1 / (2 * np.pi)


def _rel_l2(a, b):
    return np.linalg.norm(a - b, axis=-1) / np.linalg.norm(b, axis=-1)


@pytest.mark.parametrize("nu", [NU_BENCH, 0.1])
def test_agrees_with_the_numpy_solver_in_float64(device, nu):
    u0 = PeriodicGRF(256).sample(3, rng=np.random.default_rng(1))
    times = (0.0, 0.25, 1.0)
    ref, ref_report = BurgersSpectralSolver(viscosity=nu, output_times=times
                                            ).solve_with_report(u0)
    got, report = TorchBurgersSpectralSolver(viscosity=nu, output_times=times, device=device
                                             ).solve_with_report(u0)
    assert got.shape == ref.shape == (3, 3, 256)
    # the same operations in the same order; only the FFT libraries' rounding differs
    assert _rel_l2(got[:, 1:], ref[:, 1:]).max() <= 1e-10
    np.testing.assert_array_equal(got[:, 0], u0)
    np.testing.assert_array_equal(report.iterations, ref_report.iterations)
    np.testing.assert_allclose(report.residual, ref_report.residual, rtol=1e-6, atol=1e-15)


def test_lagged_band_of_the_gpu_path_agrees_too(monkeypatch):
    """On a GPU each step's FFT length is read from the previous state (no sync per step);
    the same code on the CPU must still agree with the numpy solver to round-off."""
    monkeypatch.setattr(TorchBurgersSpectralSolver, "_lagged_band", lambda self: True)
    u0 = PeriodicGRF(1024).sample(3, rng=np.random.default_rng(5))
    ref = BurgersSpectralSolver().solve(u0)
    got = TorchBurgersSpectralSolver().solve(u0)
    assert _rel_l2(got, ref).max() <= 1e-10


def test_matches_cole_hopf_like_the_numpy_solver(device):
    u0 = PeriodicGRF(1024).sample(2, rng=np.random.default_rng(10))
    u = TorchBurgersSpectralSolver(device=device).solve(u0)
    err = _rel_l2(u, burgers_exact(u0, viscosity=NU_BENCH, times=1.0))
    assert err.max() <= 1e-8, err  # the accuracy target of the generator (and the numpy test's)


def test_temporal_order_4(device):
    # smooth closed-form solution, spectrally exact in space, uniform steps
    nu, n, t_end = 0.05, 64, 0.5
    x = np.arange(n) / n
    u0 = burgers_closed_form(x, 0.0, viscosity=nu, c=1.2, wavenumber=1)
    ref = burgers_closed_form(x, t_end, viscosity=nu, c=1.2, wavenumber=1)
    dts = [t_end / 4, t_end / 8, t_end / 16, t_end / 32]
    errs = []
    for dt in dts:
        solver = TorchBurgersSpectralSolver(viscosity=nu, final_time=t_end, dt=dt, first_dt=dt,
                                            device=device)
        errs.append(float(_rel_l2(solver.solve(u0), ref)))
    assert errs[-1] > 1e-13  # above round-off, so the slope is meaningful
    assert_order(dts, errs, 4.0, 0.3)  # ETDRK4; pre-asymptotic at the coarsest step


def test_float32_agrees_to_single_precision(device):
    u0 = PeriodicGRF(512).sample(2, rng=np.random.default_rng(2))
    ref = BurgersSpectralSolver().solve(u0)
    got = TorchBurgersSpectralSolver(dtype="float32", device=device).solve(u0)
    err = _rel_l2(got, ref)
    # float32 rounding (6e-8) accumulated over ~450 steps through the steep fronts: 6e-6
    # measured at n = 512 and 1024
    assert 1e-8 < err.max() <= 3e-5, err


def test_batches_agree_with_one_call(device):
    u0 = PeriodicGRF(128).sample(5, rng=np.random.default_rng(3))
    whole, r1 = TorchBurgersSpectralSolver(device=device).solve_with_report(u0)
    split, r2 = TorchBurgersSpectralSolver(device=device, batch_size=2).solve_with_report(u0)
    # the reduced FFT length of a step depends on the batch's largest modes: round-off only
    assert _rel_l2(split, whole).max() <= 1e-13
    assert r2.solve_time.shape == (5,)
    assert (r2.solve_time > 0).all()


def test_contract_single_sample_and_xarray():
    u0 = PeriodicGRF(64).sample(2, rng=np.random.default_rng(4))
    solver = TorchBurgersSpectralSolver(viscosity=0.1, output_times=(0.5, 1.0))
    batch = solver.solve(u0)
    one = solver.solve(u0[1])
    assert one.shape == (2, 64)
    np.testing.assert_allclose(one, batch[1], rtol=0, atol=1e-14)
    da = xr.DataArray(u0, dims=("sample", "x"), coords={"x": np.arange(64) / 64})
    out = solver.solve(da)
    assert out.dims == ("sample", "time", "x")
    np.testing.assert_array_equal(out["time"].values, [0.5, 1.0])
    np.testing.assert_allclose(out.values, batch, rtol=0, atol=1e-14)


def test_config_rebuilds_and_twin_of_takes_the_settings():
    numpy_solver = BurgersSpectralSolver(viscosity=0.1, final_time=0.5, dt=1e-3,
                                         output_times=(0.25, 0.5))
    twin = twin_of(numpy_solver, device="cpu", batch_size=8)
    assert isinstance(twin, TorchBurgersSpectralSolver)
    assert twin.reference() == numpy_solver
    assert TorchBurgersSpectralSolver(**twin.config) == twin
    assert twin.config["device"] == "cpu"
    assert twin.config["batch_size"] == 8
    with pytest.raises(InputError, match="no torch twin"):
        twin_of(BurgersFDSolver(), device="cpu")


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"viscosity": 0.0}, "viscosity"), ({"viscosity": -1.0}, "viscosity"),
    ({"final_time": float("nan")}, "final_time"), ({"device": "gpu"}, "device"),
    ({"dtype": "float16"}, "dtype"), ({"batch_size": 0}, "batch_size"),
    ({"output_times": (0.5, 0.2)}, "output_times"),
])
def test_bad_settings(kwargs, match):
    with pytest.raises(InputError, match=match):
        TorchBurgersSpectralSolver(**kwargs)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal without CUDA")
def test_cuda_refused_without_a_gpu():
    with pytest.raises(InputError, match="sees 0 CUDA device"):
        TorchBurgersSpectralSolver(device="cuda")


def test_bad_inputs():
    solver = TorchBurgersSpectralSolver()
    with pytest.raises(ShapeError, match="shape"):
        solver.solve(np.zeros((2, 3, 16)))
    bad = np.zeros((2, 16))
    bad[1, 3] = np.nan
    with pytest.raises(InputError, match=r"finite.*index \(1, 3\)"):
        solver.solve(bad)
    with pytest.raises(InputError, match="at least 4 points"):
        solver.solve(np.zeros((2, 3)))
    with pytest.raises(InputError, match="initial_guess"):
        solver.solve(np.zeros(16), initial_guess=np.zeros(16))


def test_blow_up_names_sample_and_time():
    u0 = np.zeros((3, 32))
    u0[1] = 1e150 * np.sin(2 * np.pi * np.arange(32) / 32)
    solver = TorchBurgersSpectralSolver(viscosity=0.1, dt=0.1, first_dt=0.1)
    with pytest.raises(ConvergenceError, match=r"non-finite values by t=0\.\d+ in sample 1"):
        solver.solve(u0)


def _run_out_of_memory() -> None:
    with out_of_memory(owner="X", device="cpu", batch=96, what="n = 8"):
        msg = "CUDA out of memory"
        raise torch.OutOfMemoryError(msg)


def test_out_of_device_memory_names_a_batch_size():
    with pytest.raises(DeviceMemoryError, match="batch of 96 samples.*at most 48") as info:
        _run_out_of_memory()
    assert (info.value.batch_size, info.value.suggested) == (96, 48)
    assert isinstance(info.value, MemoryError)
