"""Burgers solvers: accuracy against Cole-Hopf, orders, conservation, contract, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from solvers.burgers import BurgersFDSolver, BurgersSpectralSolver
from solvers.errors import ConvergenceError, InputError, ShapeError
from solvers.exact import burgers_closed_form, burgers_exact
from solvers.grf import PeriodicGRF
from tests.helpers import assert_order

NU_BENCH = 0.1 / (2 * np.pi)


def _rel_l2(a, b):
    return np.linalg.norm(a - b, axis=-1) / np.linalg.norm(b, axis=-1)


@pytest.mark.parametrize("nu", [NU_BENCH, 0.1])
def test_spectral_matches_exact_on_benchmark_data_n1024(nu):
    u0 = PeriodicGRF(1024).sample(2, rng=np.random.default_rng(10))
    u, report = BurgersSpectralSolver(viscosity=nu).solve_with_report(u0)
    err = _rel_l2(u, burgers_exact(u0, viscosity=nu, times=1.0))
    assert err.max() <= 1e-8, err  # the accuracy target of the generator
    assert (report.iterations == report.iterations[0]).all()
    assert report.iterations[0] > 100


@pytest.mark.slow
@pytest.mark.parametrize("nu", [NU_BENCH, 0.1])
def test_spectral_matches_exact_on_benchmark_data_n8192(nu):
    u0 = PeriodicGRF(8192).sample(2, rng=np.random.default_rng(11))
    u = BurgersSpectralSolver(viscosity=nu).solve(u0)
    err = _rel_l2(u, burgers_exact(u0, viscosity=nu, times=1.0))
    assert err.max() <= 1e-8, err  # the accuracy target at the benchmark resolution


def test_spectral_temporal_order_4():
    # smooth closed-form solution, fixed fine grid (spectrally exact in space), uniform steps
    nu, n, t_end = 0.05, 64, 0.5
    x = np.arange(n) / n
    u0 = burgers_closed_form(x, 0.0, viscosity=nu, c=1.2, wavenumber=1)
    ref = burgers_closed_form(x, t_end, viscosity=nu, c=1.2, wavenumber=1)
    dts = [t_end / 4, t_end / 8, t_end / 16, t_end / 32]
    errs = []
    for dt in dts:
        solver = BurgersSpectralSolver(viscosity=nu, final_time=t_end, dt=dt, first_dt=dt)
        errs.append(float(_rel_l2(solver.solve(u0), ref)))
    assert errs[-1] > 1e-13  # still above round-off, so the slope is meaningful
    assert_order(dts, errs, 4.0, 0.3)  # ETDRK4; pre-asymptotic at the coarsest step


def test_spectral_graded_start_beats_uniform_on_rough_data():
    u0 = PeriodicGRF(256).sample(1, rng=np.random.default_rng(12))
    ref = burgers_exact(u0, viscosity=0.1, times=0.2)
    dt = 0.01
    uniform = BurgersSpectralSolver(viscosity=0.1, final_time=0.2, dt=dt, first_dt=dt).solve(u0)
    graded = BurgersSpectralSolver(viscosity=0.1, final_time=0.2, dt=dt).solve(u0)
    # the graded start removes the transient error that dominates a uniform step
    assert _rel_l2(graded, ref).max() < 0.1 * _rel_l2(uniform, ref).max()


def test_fd_second_order_in_space():
    nu, t_end = 0.05, 0.25
    ns = [32, 64, 128, 256]
    errs = []
    for n in ns:
        x = np.arange(n) / n
        u0 = burgers_closed_form(x, 0.0, viscosity=nu, c=1.5, wavenumber=1)
        ref = burgers_closed_form(x, t_end, viscosity=nu, c=1.5, wavenumber=1)
        errs.append(float(_rel_l2(BurgersFDSolver(viscosity=nu, final_time=t_end).solve(u0), ref)))
    assert_order([1 / n for n in ns], errs, 2.0, 0.2)  # design order 2 (RK4 error ~dt^4 << h^2)


def test_fd_conserves_mass_and_agrees_with_spectral():
    u0 = PeriodicGRF(128).sample(3, rng=np.random.default_rng(13)) + 0.3
    fd = BurgersFDSolver(viscosity=0.1, final_time=0.3).solve(u0)
    # flux form: the sum telescopes; round-off of ~1e4 steps on values O(1)
    np.testing.assert_allclose(fd.mean(-1), u0.mean(-1), rtol=0, atol=1e-12)
    sp = BurgersSpectralSolver(viscosity=0.1, final_time=0.3).solve(u0)
    # FD error O(h^2) at h = 1/128 on these smooth-ish solutions: ~1e-4 relative
    assert _rel_l2(fd, sp).max() < 1e-3


def test_spectral_nonzero_mean_and_output_times():
    u0 = PeriodicGRF(256).sample(2, rng=np.random.default_rng(14)) + 0.5
    times = [0.0, 0.1, 0.5]
    out = BurgersSpectralSolver(viscosity=0.1, final_time=0.5, output_times=times).solve(u0)
    assert out.shape == (2, 3, 256)
    np.testing.assert_array_equal(out[:, 0], u0)
    ref = burgers_exact(u0, viscosity=0.1, times=times[1:])
    assert _rel_l2(out[:, 1:], ref).max() < 1e-8  # same target as the benchmark


def test_single_sample_and_xarray_round_trip():
    n = 64
    u0 = PeriodicGRF(n).sample(2, rng=np.random.default_rng(15))
    solver = BurgersSpectralSolver(viscosity=0.1, final_time=0.1)
    batch = solver.solve(u0)
    np.testing.assert_allclose(solver.solve(u0[1]), batch[1], rtol=0, atol=1e-15)
    x = np.arange(n) / n
    da = xr.DataArray(u0, dims=("sample", "x"), coords={"sample": [5, 6], "x": x})
    out = solver.solve(da)
    assert isinstance(out, xr.DataArray)
    assert out.dims == ("sample", "x")
    np.testing.assert_array_equal(out.x, x)
    np.testing.assert_array_equal(out.sample, [5, 6])
    np.testing.assert_allclose(out.values, batch, rtol=0, atol=1e-15)
    traj = BurgersFDSolver(viscosity=0.1, final_time=0.1, output_times=[0.05, 0.1]).solve(da[0])
    assert traj.dims == ("time", "x")
    np.testing.assert_array_equal(traj.time, [0.05, 0.1])


@pytest.mark.parametrize("cls", [BurgersSpectralSolver, BurgersFDSolver])
def test_config_round_trip(cls):
    solver = cls(viscosity=0.2, final_time=0.5, output_times=[0.25, 0.5])
    import json

    cfg = json.loads(json.dumps(solver.config))
    assert cls(**cfg) == solver


def test_blow_up_names_sample_and_time():
    u0 = np.zeros((3, 32))
    u0[1] = 1e150 * np.sin(2 * np.pi * np.arange(32) / 32)
    solver = BurgersSpectralSolver(viscosity=0.1, dt=0.1, first_dt=0.1)
    with pytest.raises(ConvergenceError, match=r"non-finite values at t=0\.1 in sample 1"):
        solver.solve(u0)


@pytest.mark.parametrize("cls", [BurgersSpectralSolver, BurgersFDSolver])
def test_bad_input_wrong_dims(cls):
    with pytest.raises(ShapeError, match=r"`inputs` must have shape \(n_samples, x\)"):
        cls().solve(np.zeros((2, 4, 4)))
    da = xr.DataArray(np.zeros((2, 8)), dims=("sample", "y"))
    with pytest.raises(ShapeError, match="`inputs` must have dims"):
        cls().solve(da)


@pytest.mark.parametrize("cls", [BurgersSpectralSolver, BurgersFDSolver])
def test_bad_input_nonfinite(cls):
    u0 = np.zeros(16)
    u0[3] = np.inf
    with pytest.raises(InputError, match="`inputs` must be finite"):
        cls().solve(u0)


@pytest.mark.parametrize("cls", [BurgersSpectralSolver, BurgersFDSolver])
@pytest.mark.parametrize("name", ["viscosity", "final_time"])
def test_bad_physics_parameters(cls, name):
    with pytest.raises(InputError, match=f"`{name}` must be a finite number > 0; got -1.0"):
        cls(**{name: -1.0})


@pytest.mark.parametrize(
    ("times", "match"),
    [
        ([0.5, 0.2], "strictly increasing"),
        ([-0.1, 0.5], r"must lie in \[0, final_time=1.0\]"),
        ([0.5, 1.5], r"must lie in \[0, final_time=1.0\]"),
    ],
)
def test_bad_output_times(times, match):
    with pytest.raises(InputError, match=match):
        BurgersSpectralSolver(output_times=times)


@pytest.mark.parametrize("cls", [BurgersSpectralSolver, BurgersFDSolver])
def test_initial_guess_rejected(cls):
    with pytest.raises(InputError, match="`initial_guess` must be None"):
        cls().solve(np.zeros(16), initial_guess=np.zeros(16))


@pytest.mark.parametrize("cls", [BurgersSpectralSolver, BurgersFDSolver])
def test_unknown_option_name(cls):
    with pytest.raises(TypeError, match="unexpected keyword argument 'visocity'"):
        cls(visocity=0.1)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"dt": 0.0}, "`dt` must be a finite number > 0"),
        ({"first_dt": -1.0}, "`first_dt` must be a finite number > 0"),
        ({"growth": 1.0}, "`growth` must be a finite number > 1"),
        ({"n_contour": 2}, "`n_contour` must be an integer >= 4"),
        ({"mode_tol": 0.1}, r"`mode_tol` must be a finite number in \[0, 1e-06\)"),
    ],
)
def test_bad_spectral_numerics(kwargs, match):
    with pytest.raises(InputError, match=match):
        BurgersSpectralSolver(**kwargs)


def test_bad_fd_cfl():
    with pytest.raises(InputError, match=r"`cfl` must be a finite number in \(0, 1\]"):
        BurgersFDSolver(cfl=1.5)
