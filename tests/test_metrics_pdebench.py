"""PDEBench's metrics (RMSE, nRMSE, max, bRMSE, fRMSE) against a naive transcription of their
definitions (loops over samples, points and Fourier coefficients)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from neuralop_fem.metrics import (
    boundary_rmse,
    fourier_band_rmse,
    fourier_error_spectrum,
    max_error,
    peer_metrics,
    relative_l2,
    rmse,
)


def naive_1d(p, r, low=4, high=12):
    nb, nx = p.shape
    e = p - r
    out = {"rmse": np.mean([math.sqrt(np.mean(e[b] ** 2)) for b in range(nb)]),
           "nrmse": np.mean([math.sqrt(np.mean(e[b] ** 2)) / math.sqrt(np.mean(r[b] ** 2))
                             for b in range(nb)]),
           "max_error": max(abs(v) for v in e.ravel()),
           "boundary_rmse": np.mean([math.sqrt((e[b, 0] ** 2 + e[b, -1] ** 2) / 2)
                                     for b in range(nb)])}
    shells = []
    for k in range(nx // 2 + 1):
        power = []
        for b in range(nb):
            c = sum(e[b, j] * np.exp(-2j * np.pi * k * j / nx) for j in range(nx))
            power.append(abs(c) ** 2)
        shells.append(math.sqrt(np.mean(power)) / nx)
    out.update(frmse_low=np.mean(shells[:low]), frmse_mid=np.mean(shells[low:high]),
               frmse_high=np.mean(shells[high:]))
    return out


def naive_2d(p, r, low=4, high=12):
    nb, nx, ny = p.shape
    e = p - r
    f = np.fft.fftn(e, axes=(1, 2))
    err = np.zeros((nb, min(nx // 2, ny // 2)))
    for i in range(nx // 2):
        for j in range(ny // 2):
            it = math.floor(math.sqrt(i**2 + j**2))
            if it > min(nx // 2, ny // 2) - 1:
                continue
            err[:, it] += np.abs(f[:, i, j]) ** 2
    shells = np.sqrt(err.mean(axis=0)) / (nx * ny)
    bd = []
    for b in range(nb):
        s = (sum(e[b, 0, :] ** 2) + sum(e[b, -1, :] ** 2) + sum(e[b, :, 0] ** 2)
             + sum(e[b, :, -1] ** 2))
        bd.append(math.sqrt(s / (2 * nx + 2 * ny)))
    return {"boundary_rmse": np.mean(bd), "frmse_low": shells[:low].mean(),
            "frmse_mid": shells[low:high].mean(), "frmse_high": shells[high:].mean()}


def test_1d_metrics_match_the_definitions(rng):
    r = rng.standard_normal((3, 32))
    p = r + 0.1 * rng.standard_normal((3, 32))
    got = peer_metrics(p, r)
    want = naive_1d(p, r)
    for key, value in want.items():
        # Sums of a few hundred float64 terms: 1e-12 relative.
        assert got[key] == pytest.approx(value, rel=1e-12), key


def test_2d_metrics_match_the_definitions(rng):
    r = rng.standard_normal((2, 32, 28))
    p = r + 0.1 * rng.standard_normal((2, 32, 28))
    got = peer_metrics(p, r)
    for key, value in naive_2d(p, r).items():
        assert got[key] == pytest.approx(value, rel=1e-12), key


def test_nrmse_is_our_relative_l2(rng):
    r = rng.standard_normal((4, 9, 9))
    p = rng.standard_normal((4, 9, 9))
    np.testing.assert_allclose(rmse(p, r) / rmse(np.zeros_like(r), r), relative_l2(p, r),
                               rtol=1e-14)
    assert peer_metrics(p, r)["nrmse"] == pytest.approx(relative_l2(p, r).mean(), rel=1e-14)


def test_simple_values():
    r = np.zeros((1, 4))
    p = np.array([[1.0, 0.0, 0.0, -3.0]])
    assert rmse(p, r)[0] == pytest.approx(math.sqrt(10 / 4))
    assert max_error(p, r)[0] == 3.0
    assert boundary_rmse(p, r)[0] == pytest.approx(math.sqrt(10 / 2))
    # A constant error is all in shell 0: |sum of n ones|^2 = n^2.
    spectrum = fourier_error_spectrum(np.ones((2, 8, 8)), np.zeros((2, 8, 8)))
    np.testing.assert_allclose(spectrum[:, 0], 64.0**2)
    np.testing.assert_allclose(spectrum[:, 1:], 0.0, atol=1e-20)
    bands = fourier_band_rmse(spectrum, (8, 8), bands=(1, 2))
    assert bands["low"] == pytest.approx(1.0)  # sqrt(64^2) / 64
    assert bands["mid"] == pytest.approx(0.0, abs=1e-12)


def test_evaluate_reports_pdebench_metrics(tmp_path):
    """evaluate_run gives PDEBench's numbers beside ours, computed from the same predictions."""
    import shutil
    from pathlib import Path

    from neuralop_fem import Surrogate, load_dataset
    from neuralop_fem.evaluation import evaluate_run

    fixture = Path(__file__).parent / "resources" / "compat_3ded0bf"
    run = tmp_path / "run"
    shutil.copytree(fixture / "run_darcy_fno", run)
    from neuralop_fem.evaluation.training_overlap import SeenInTrainingWarning

    with pytest.warns(SeenInTrainingWarning, match="8 of the 10 samples evaluated"):  # all: seen
        result = evaluate_run(run, fixture / "darcy_n17.nc", indices="all", device="cpu")
    ds = load_dataset(fixture / "darcy_n17.nc")
    pred = Surrogate.load(run, device="cpu").solve(ds["a"].values)
    want = peer_metrics(pred, ds["u"].values)
    got = result["summary"]["pdebench"]
    # float32 model: the two prediction paths agree to ~1e-7 relative.
    for key, value in want.items():
        assert got[key] == pytest.approx(value, rel=1e-5, nan_ok=True), key
    np.testing.assert_allclose(result["rmse"], rmse(pred, ds["u"].values), rtol=1e-5)
    assert got["nrmse"] == result["summary"]["rel_l2"]["mean"]
