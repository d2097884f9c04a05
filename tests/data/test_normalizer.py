"""UnitGaussianNormalizer: statistics, inverse, resampling, persistence."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neuralop_fem.data import DarcyDataset
from neuralop_fem.data.normalizer import UnitGaussianNormalizer
from neuralop_fem.errors import ShapeError

from .conftest import make_darcy


def test_fit_is_pointwise_population_statistics(rng):
    x = rng.standard_normal((7, 5, 6, 1)) * 3 + 1
    norm = UnitGaussianNormalizer.fit(torch.from_numpy(x))
    np.testing.assert_allclose(norm.mean.numpy(), x.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(norm.std.numpy(), x.std(axis=0, ddof=0), rtol=1e-12)
    enc = norm.encode(torch.from_numpy(x)).numpy()
    naive = (x - x.mean(axis=0)) / (x.std(axis=0) + 1e-5)
    np.testing.assert_allclose(enc, naive, rtol=1e-12)
    np.testing.assert_allclose(norm.decode(norm.encode(torch.from_numpy(x))).numpy(), x, rtol=1e-12)


def test_global_fit_broadcasts_to_any_grid(rng):
    x = rng.standard_normal((6, 16, 2)) * np.array([0.01, 4.0]) + np.array([0.5, -1.0])
    norm = UnitGaussianNormalizer.fit(torch.from_numpy(x), periodic=True, pointwise=False)
    assert norm.mean.shape == (1, 2)
    np.testing.assert_allclose(norm.mean.numpy()[0], x.reshape(-1, 2).mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(norm.std.numpy()[0], x.reshape(-1, 2).std(axis=0), rtol=1e-12)
    other = torch.from_numpy(rng.standard_normal((3, 40, 2)))  # another resolution
    naive = (other.numpy() - x.reshape(-1, 2).mean(axis=0)) / (x.reshape(-1, 2).std(axis=0) + 1e-5)
    np.testing.assert_allclose(norm.encode(other).numpy(), naive, rtol=1e-10)
    np.testing.assert_allclose(norm.decode(norm.encode(other)).numpy(), other.numpy(), rtol=1e-10)
    again = UnitGaussianNormalizer.from_state_dict(norm.state_dict())
    assert torch.equal(again.encode(other), norm.encode(other))


def test_fit_uses_only_the_training_indices(rng, tmp_path):
    ds = make_darcy(rng, n_samples=8, n=9)
    train = DarcyDataset(ds, indices=range(5))
    norm = UnitGaussianNormalizer.fit(train.stacked("input"))
    a = ds["a"].values[:5, :, :, None]
    np.testing.assert_allclose(norm.mean.numpy(), a.mean(axis=0), rtol=1e-6)  # float32 items
    np.testing.assert_allclose(norm.std.numpy(), a.std(axis=0), rtol=1e-5, atol=1e-6)
    all_mean = ds["a"].values.mean(axis=0)[..., None]
    assert not np.allclose(norm.mean.numpy(), all_mean)


def test_state_dict_round_trip(tmp_path, rng):
    norm = UnitGaussianNormalizer.fit(torch.from_numpy(rng.random((4, 8, 1))), periodic=True)
    path = tmp_path / "n.pt"
    torch.save(norm.state_dict(), path)
    back = UnitGaussianNormalizer.from_state_dict(torch.load(path, weights_only=True))
    x = torch.from_numpy(rng.random((3, 8, 1)))
    torch.testing.assert_close(back.encode(x), norm.encode(x), rtol=0, atol=0)
    assert bool(back.periodic)
    again = UnitGaussianNormalizer.from_dict(norm.to_dict())
    torch.testing.assert_close(again.decode(x), norm.decode(x), rtol=0, atol=0)


def test_strided_resampling_on_node_grid(rng):
    x = torch.from_numpy(rng.random((5, 13, 13, 1)))
    norm = UnitGaussianNormalizer.fit(x)
    coarse = x[:, ::3, ::3]  # 13 -> 5 nodes is reachable (stride 3)
    want = (coarse - norm.mean[::3, ::3]) / (norm.std[::3, ::3] + 1e-5)
    torch.testing.assert_close(norm.encode(coarse), want, rtol=0, atol=0)


def test_bilinear_resampling_when_not_reachable(rng):
    n_fit, n = 5, 4
    mean = rng.random((n_fit, n_fit, 1))
    norm = UnitGaussianNormalizer(mean, np.ones_like(mean) - 1e-5)
    out = norm.decode(torch.zeros(1, n, n, 1, dtype=torch.float64))[0, ..., 0].numpy()
    # Naive bilinear interpolation of the node-grid mean at x_i = i/(n-1).
    want = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            px, py = i / (n - 1) * (n_fit - 1), j / (n - 1) * (n_fit - 1)
            i0, j0 = min(int(px), n_fit - 2), min(int(py), n_fit - 2)
            wx, wy = px - i0, py - j0
            m = mean[..., 0]
            want[i, j] = (
                (1 - wx) * (1 - wy) * m[i0, j0]
                + wx * (1 - wy) * m[i0 + 1, j0]
                + (1 - wx) * wy * m[i0, j0 + 1]
                + wx * wy * m[i0 + 1, j0 + 1]
            )
    np.testing.assert_allclose(out, want, rtol=1e-12)


def test_periodic_linear_resampling(rng):
    mean = rng.random((6, 1))
    norm = UnitGaussianNormalizer(mean, np.zeros_like(mean), periodic=True)
    out = norm.decode(torch.zeros(4, 1, dtype=torch.float64))[..., 0].numpy()
    pos = np.arange(4) * 6 / 4  # x_j = j/4 on the fitted grid i/6
    i0 = np.floor(pos).astype(int)
    w = pos - i0
    want = (1 - w) * mean[i0 % 6, 0] + w * mean[(i0 + 1) % 6, 0]
    np.testing.assert_allclose(out, want, rtol=1e-12)


def test_wrong_channels_is_shape_error(rng):
    norm = UnitGaussianNormalizer.fit(torch.from_numpy(rng.random((3, 4, 4, 1))))
    with pytest.raises(ShapeError, match=r"`x` must have shape \(batch, \*spatial, 1\)"):
        norm.encode(torch.zeros(2, 4, 4, 2))


def test_mismatched_mean_std_is_shape_error():
    with pytest.raises(ShapeError, match="`mean` and `std` must have one shape"):
        UnitGaussianNormalizer(np.zeros((4, 1)), np.ones((5, 1)))
