"""The Cole-Hopf exact Burgers solution against a closed form, the PDE, and small viscosity."""

from __future__ import annotations

import numpy as np
import pytest

from solvers.errors import InputError, ShapeError
from solvers.exact import burgers_closed_form, burgers_exact
from solvers.grf import PeriodicGRF

NU_BENCH = 0.1 / (2 * np.pi)


@pytest.mark.parametrize("nu", [NU_BENCH, 0.1, 0.01])
@pytest.mark.parametrize("mean", [0.0, 0.7])
def test_matches_closed_form(nu, mean):
    n = 256  # the closed form's interpolant is exact to ~1e-16 at n = 256 (c = 1.5, m = 2)
    x = np.arange(n) / n
    u0 = burgers_closed_form(x, 0.0, viscosity=nu, c=1.5, wavenumber=2, mean=mean)
    times = np.array([0.0, 0.05, 0.5, 1.0])
    mirror = (-np.arange(n)) % n  # x_i -> -x_i (mod 1)
    got = burgers_exact(np.stack([u0, -u0[mirror]]), viscosity=nu, times=times)
    assert got.shape == (2, 4, n)
    ref = np.stack([burgers_closed_form(x, t, viscosity=nu, c=1.5, wavenumber=2, mean=mean)
                    for t in times])
    # spectrally accurate quadrature + round-off in sums of ~2000 terms: 1e-12 relative
    scale = np.abs(ref).max()
    np.testing.assert_allclose(got[0], ref, rtol=0, atol=1e-12 * scale)
    # Burgers is invariant under u(x, t) -> -u(-x, t)
    np.testing.assert_allclose(got[1], -ref[:, mirror], rtol=0, atol=1e-12 * scale)


def test_scalar_time_and_single_sample_shapes():
    u0 = np.sin(2 * np.pi * np.arange(32) / 32)
    assert burgers_exact(u0, viscosity=0.1, times=0.3).shape == (32,)
    assert burgers_exact(u0, viscosity=0.1, times=[0.3]).shape == (1, 32)
    assert burgers_exact(u0[None], viscosity=0.1, times=0.3).shape == (1, 32)
    np.testing.assert_array_equal(burgers_exact(u0, viscosity=0.1, times=0.0), u0)


def _spectral_derivative(u, order):
    n = u.shape[-1]
    k = 2j * np.pi * np.fft.rfftfreq(n, 1.0 / n)
    if n % 2 == 0:
        k[-1] = 0.0 if order % 2 else k[-1]
    return np.fft.irfft(k**order * np.fft.rfft(u), n=n)


@pytest.mark.parametrize("mean", [0.0, 0.4])
def test_satisfies_pde(mean):
    # smooth GRF data (alpha = 4) so that the solution is resolved at n = 256
    nu = 0.05
    u0 = PeriodicGRF(256, sigma=40.0, tau=5.0, alpha=4.0).sample(
        1, rng=np.random.default_rng(3))[0] + mean
    t, dt = 0.3, 1e-3
    us = burgers_exact(u0, viscosity=nu, times=t + dt * np.arange(-2, 3))
    u_t = (us[0] - 8 * us[1] + 8 * us[3] - us[4]) / (12 * dt)  # O(dt^4) ~ 1e-12 * d5u/dt5
    u = us[2]
    residual = u_t + u * _spectral_derivative(u, 1) - nu * _spectral_derivative(u, 2)
    # terms are O(1); the residual is limited by the time difference (dt^4) and
    # by round-off / dt (~1e-16 / 1e-3): 1e-8 relative to |u_t|
    assert np.abs(residual).max() < 1e-8 * np.abs(u_t).max(), np.abs(residual).max()


def test_galilean_shift_consistent():
    rng = np.random.default_rng(1)
    u0 = PeriodicGRF(128).sample(1, rng=rng)[0]
    nu, t, c = 0.05, 0.5, 0.25  # c * t * n = 16 grid cells: the shift lands on the grid
    shifted = burgers_exact(u0 + c, viscosity=nu, times=t)
    plain = burgers_exact(u0, viscosity=nu, times=t)
    np.testing.assert_allclose(shifted, c + np.roll(plain, 16), rtol=0, atol=1e-13)


def test_small_viscosity_no_overflow():
    # nu = 0.002: exp(-V/(2 nu)) spans ~e^50, where FFT evaluations of phi overflow or lose
    # all precision; the log-space quadrature must stay finite and converged.
    u0 = PeriodicGRF(1024).sample(2, rng=np.random.default_rng(2))
    a = burgers_exact(u0, viscosity=0.002, times=[0.5, 1.0])
    b = burgers_exact(u0, viscosity=0.002, times=[0.5, 1.0], n_quad=4096)
    assert np.isfinite(a).all()
    # converged quadrature: doubling the points changes ~1e-14 (round-off)
    assert np.abs(a - b).max() < 1e-12 * np.abs(a).max()
    # mass is conserved by Burgers: the grid mean stays 0 (to the sum's round-off)
    assert np.abs(a.mean(-1)).max() < 1e-12


def test_bad_inputs():
    u0 = np.zeros(16)
    with pytest.raises(InputError, match="`viscosity` must be a finite number > 0"):
        burgers_exact(u0, viscosity=0.0, times=1.0)
    with pytest.raises(InputError, match="`times` must be a finite time >= 0"):
        burgers_exact(u0, viscosity=0.1, times=[-1.0])
    with pytest.raises(ShapeError, match=r"`u0` must have shape \(n,\) or \(n_samples, n\)"):
        burgers_exact(np.zeros((2, 2, 4)), viscosity=0.1, times=1.0)
    with pytest.raises(InputError, match="`u0` must be finite"):
        burgers_exact(np.full(8, np.nan), viscosity=0.1, times=1.0)
    with pytest.raises(InputError, match="`n_quad` must be a positive multiple of n=16"):
        burgers_exact(u0, viscosity=0.1, times=1.0, n_quad=24)
    with pytest.raises(InputError, match="`c` must be > 1"):
        burgers_closed_form(u0, 0.0, viscosity=0.1, c=0.5)
