"""Statistics, seeding and input validation of the Gaussian random fields."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from solvers.errors import InputError, ShapeError
from solvers.grf import NeumannGRF, PeriodicGRF, sample_seeds, threshold

N_STAT = 4000  # samples for the statistical tests


def _neumann_basis(n: int) -> np.ndarray:
    """phi_k(x_i) = c_k cos(pi k x_i), written independently of the sampler (naive matrix)."""
    x = np.arange(n) / (n - 1)
    c = np.full(n, np.sqrt(2.0))
    c[0] = c[-1] = 1.0
    return c[None, :] * np.cos(np.pi * x[:, None] * np.arange(n)[None, :])


def test_periodic_spectrum_matches_theory(rng):
    grf = PeriodicGRF(64)
    u = grf.sample(N_STAT, rng=rng)
    coef = np.fft.rfft(u, axis=-1) / grf.n
    ratio = (np.abs(coef[:, 1:]) ** 2).mean(0) / grf.spectrum[1:]
    # |c_k|^2 / lambda_k ~ Exp(1) (std 1; chi2_1 with std sqrt 2 at Nyquist): 5 sigma/sqrt(N),
    # over 32 modes the chance of a false failure is ~1e-5.
    tol = 5 * np.sqrt(2.0) / np.sqrt(N_STAT)
    assert np.abs(ratio - 1).max() < tol, ratio
    assert np.abs(coef[:, 0]).max() < 1e-14  # the k = 0 mode is never sampled


def test_periodic_pointwise_variance_and_zero_mean(rng):
    grf = PeriodicGRF(33, sigma=2.0, tau=1.5, alpha=1.5)  # odd n: no Nyquist mode
    u = grf.sample(N_STAT, rng=rng)
    var = grf.pointwise_variance
    # u^2/var ~ chi2_1 (std sqrt 2) per node; the node average is no noisier: 5 sigma.
    assert abs((u**2).mean() / var - 1) < 5 * np.sqrt(2.0 / N_STAT)
    # pointwise sample mean ~ N(0, var/N): 5 sigma at every node
    assert np.abs(u.mean(0)).max() < 5 * np.sqrt(var / N_STAT)
    # grid mean of each sample is exactly 0 (round-off, field of size ~sqrt(var))
    assert np.abs(u.mean(1)).max() < 1e-14 * np.sqrt(var) * 10


def test_periodic_variance_equals_spectrum_sum_even_n():
    grf = PeriodicGRF(10)
    lam = grf.sigma**2 * ((2 * np.pi * np.arange(-4, 6)) ** 2 + grf.tau**2) ** (-grf.alpha)
    lam[4] = 0.0  # k = 0
    assert grf.pointwise_variance == pytest.approx(lam.sum(), rel=1e-14)


def test_neumann_spectrum_and_variance(rng):
    n = 9
    grf = NeumannGRF(n, tau=2.0)
    a = grf.sample(N_STAT, rng=rng)
    phi = _neumann_basis(n)
    w = np.ones(n)
    w[0] = w[-1] = 0.5
    coef = np.einsum("ik,sij,jl->skl", phi * w[:, None], a, phi * w[:, None]) / (n - 1) ** 2
    lam = grf.spectrum
    # coef^2 / lambda ~ chi2_1 (std sqrt 2): 5 sigma/sqrt(N) over 80 modes
    ratio = (coef**2).mean(0)[lam > 0] / lam[lam > 0]
    assert np.abs(ratio - 1).max() < 5 * np.sqrt(2.0 / N_STAT), ratio
    assert np.abs(coef[:, 0, 0]).max() < 1e-14  # trapezoid mean exactly zero
    ww = np.outer(w, w) / (n - 1) ** 2
    mean_var = (ww * (a**2).mean(0)).sum()
    assert abs(mean_var / grf.mean_pointwise_variance - 1) < 5 * np.sqrt(2.0 / N_STAT)


def test_neumann_matches_naive_expansion():
    n = 6
    grf = NeumannGRF(n, sigma=1.5, alpha=1.0)
    a = grf.sample(2, seeds=[4, 5])
    phi = _neumann_basis(n)
    xi = np.stack([np.random.default_rng(s).standard_normal((n, n)) for s in (4, 5)])
    ref = np.einsum("ik,skl,jl->sij", phi, xi * np.sqrt(grf.spectrum), phi)
    np.testing.assert_allclose(a, ref, rtol=0, atol=1e-14)  # round-off of a 36-term sum


@pytest.mark.parametrize("grf", [PeriodicGRF(16), NeumannGRF(5)])
def test_seeds_reproducible_and_batch_equals_single(grf):
    seeds = sample_seeds(7, np.arange(4))
    batch = grf.sample(4, seeds=seeds)
    assert batch.dtype == np.float64
    singles = np.concatenate([grf.sample(1, seeds=[s]) for s in seeds])
    np.testing.assert_array_equal(batch, singles)
    np.testing.assert_array_equal(batch, grf.sample(4, seeds=seeds))
    assert not np.array_equal(batch[0], batch[1])
    a = grf.sample(3, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(a, grf.sample(3, rng=np.random.default_rng(1)))


def test_sample_seeds_definition():
    s = sample_seeds(11, [0, 5, 5])
    assert s.dtype == np.uint64
    assert s[1] == s[2] != s[0]
    expected = np.random.SeedSequence([11, 5]).generate_state(1, np.uint64)[0]
    assert s[1] == expected
    assert sample_seeds(12, [5])[0] != s[1]


def test_threshold_values_and_xarray():
    f = np.array([[-1.0, 0.0], [0.5, 2.0]])
    np.testing.assert_array_equal(threshold(f), [[3.0, 3.0], [12.0, 12.0]])
    da = xr.DataArray(f, dims=("x", "y"), coords={"x": [0.0, 1.0]})
    out = threshold(da, high=2.0, low=1.0)
    assert isinstance(out, xr.DataArray)
    np.testing.assert_array_equal(out.values, [[1.0, 1.0], [2.0, 2.0]])
    np.testing.assert_array_equal(out.x, da.x)


@pytest.mark.parametrize("value", [0.0, -1.0, np.inf, np.nan])
def test_threshold_rejects_bad_levels(value):
    with pytest.raises(InputError, match="`high` must be a finite number > 0"):
        threshold(np.zeros(3), high=value)
    with pytest.raises(InputError, match="`low` must be a finite number > 0"):
        threshold(np.zeros(3), low=value)


def test_threshold_rejects_nan_field():
    with pytest.raises(InputError, match="`field` must be finite"):
        threshold(np.array([0.0, np.nan]))


@pytest.mark.parametrize("cls", [PeriodicGRF, NeumannGRF])
def test_bad_n(cls):
    with pytest.raises(InputError, match=r"`n` must be an integer >= 2; got 1"):
        cls(1)


@pytest.mark.parametrize("cls", [PeriodicGRF, NeumannGRF])
@pytest.mark.parametrize("name", ["sigma", "tau", "alpha"])
@pytest.mark.parametrize("value", [0.0, -2.0])
def test_nonpositive_parameters(cls, name, value):
    with pytest.raises(InputError, match=f"`{name}` must be a finite number > 0; got {value}"):
        cls(8, **{name: value})


def test_both_or_neither_rng_seeds(rng):
    grf = PeriodicGRF(8)
    with pytest.raises(InputError, match="exactly one of `rng` and `seeds`"):
        grf.sample(2)
    with pytest.raises(InputError, match="exactly one of `rng` and `seeds`"):
        grf.sample(2, rng=rng, seeds=[1, 2])


def test_wrong_seeds_length():
    with pytest.raises(ShapeError, match=r"`seeds` must have shape \(3,\)"):
        PeriodicGRF(8).sample(3, seeds=[1, 2])


def test_bad_n_samples(rng):
    with pytest.raises(InputError, match="`n_samples` must be an integer >= 1"):
        NeumannGRF(4).sample(0, rng=rng)


def test_config_round_trip():
    grf = PeriodicGRF(32, sigma=3.0)
    assert PeriodicGRF(**grf.config) == grf
