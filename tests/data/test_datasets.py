"""torch datasets: shapes, subsampling, derivative conventions, laziness, inverse view."""

from __future__ import annotations

import dask
import dask.array as da
import numpy as np
import pytest
import torch

from neuralop_fem.data import (
    BurgersDataset,
    DarcyDataset,
    DarcyInverseDataset,
    UnitGaussianNormalizer,
    load_dataset,
    save_dataset,
)
from neuralop_fem.errors import DatasetError, InputError

from ..helpers import corrupt_chunk
from .conftest import make_burgers, make_darcy


def test_burgers_items_and_periodic_derivative(rng):
    ds = make_burgers(rng, n_samples=4, n=32)
    data = BurgersDataset(ds, resolution=8, indices=[3, 1])
    assert len(data) == 2
    item = data[0]
    shapes = {"input": (8, 1), "target": (8, 1), "grid": (8, 1), "target_grad": (8, 1)}
    for key, shape in shapes.items():
        assert item[key].shape == shape, key
        assert item[key].dtype == torch.float32, key
    u0, u = ds["u0"].values[3], ds["u"].values[3]
    np.testing.assert_array_equal(item["input"][:, 0].numpy(), u0[::4].astype(np.float32))
    np.testing.assert_array_equal(item["target"][:, 0].numpy(), u[::4].astype(np.float32))
    np.testing.assert_array_equal(item["grid"][:, 0].numpy(), (np.arange(8) / 8).astype(np.float32))
    # Naive: true periodic neighbours on the full grid (index n-1 wraps to 0), h = 1/32.
    n = 32
    full = np.array([(u[(i + 1) % n] - u[(i - 1) % n]) * n / 2 for i in range(n)])
    # float32 storage of a float64 computation: relative rounding 6e-8.
    np.testing.assert_allclose(item["target_grad"][:, 0].numpy(), full[::4], rtol=1e-6)


def test_darcy_items_and_gradient_from_full_grid(rng):
    ds = make_darcy(rng, n_samples=3, n=13)
    data = DarcyDataset(ds, resolution=5)
    item = data[2]
    assert item["input"].shape == (5, 5, 1)
    assert item["target_grad"].shape == (5, 5, 2)
    assert item["grid"].shape == (5, 5, 2)
    u = ds["u"].values[2]
    h = 1 / 12
    i, j = 1, 2  # coarse (1, 2) is fine node (3, 6): interior central differences
    dx = (u[4, 6] - u[2, 6]) / (2 * h)
    dy = (u[3, 7] - u[3, 5]) / (2 * h)
    np.testing.assert_allclose(item["target_grad"][i, j].numpy(), [dx, dy], rtol=1e-6)  # float32
    # Boundary node (0, 6): one-sided second-order along x.
    bx = (-3 * u[0, 6] + 4 * u[1, 6] - u[2, 6]) / (2 * h)
    np.testing.assert_allclose(item["target_grad"][0, 2, 0].numpy(), bx, rtol=1e-6)
    np.testing.assert_array_equal(item["coefficient"][..., 0].numpy(), ds["a"].values[2, ::3, ::3])
    np.testing.assert_allclose(item["grid"][1, 2].numpy(), [0.25, 0.5])


def test_unreachable_resolution_is_error(rng):
    match = r"reachable from 32.*one of \[1, 2, 4, 8, 16, 32\]; got 12"
    with pytest.raises(InputError, match=match):
        BurgersDataset(make_burgers(rng), resolution=12)


def test_wrong_problem_is_error(rng):
    with pytest.raises(DatasetError, match="must be a darcy dataset; got a burgers dataset"):
        DarcyDataset(make_burgers(rng))


def test_bad_indices_are_error(rng):
    with pytest.raises(InputError, match=r"`indices` must be positions in \[0, 6\)"):
        BurgersDataset(make_burgers(rng), indices=[0, 6])


def test_lazy_and_in_memory_agree(tmp_path, rng):
    path = save_dataset(make_darcy(rng, n_samples=5, n=9), tmp_path / "d.nc")
    lazy = DarcyDataset(path, resolution=5, indices=slice(1, 4))
    eager = DarcyDataset(load_dataset(path), resolution=5, indices=slice(1, 4), in_memory=True)
    assert not lazy.data["u"].variable._in_memory
    for i in range(3):
        for key, value in lazy[i].items():
            torch.testing.assert_close(value, eager[i][key], rtol=0, atol=0)


def test_a_file_opened_with_plain_xarray_gives_the_same_items(tmp_path, rng):
    """xr.open_dataset returns the fields as stored, (sample, y, x); the dataset reads them by
    dimension name, so its items are those of load_dataset's (sample, x, y)."""
    import xarray as xr

    ds = make_darcy(rng, n_samples=3, n=9)
    path = save_dataset(ds, tmp_path / "d.nc")
    with xr.open_dataset(path) as plain:
        assert plain["a"].dims == ("sample", "y", "x")
        items = DarcyDataset(plain, resolution=9, in_memory=True)
        for i in range(3):
            np.testing.assert_array_equal(items[i]["input"][..., 0].numpy(),
                                          ds["a"].values[i].astype(np.float32))


def _poisoned(ds, allowed):
    """Replace the fields by dask arrays whose unselected samples raise when computed."""

    def read(name, k):
        if k not in allowed:
            msg = f"sample {k} was read"
            raise AssertionError(msg)
        return ds[name].values[k]

    out = ds.copy()
    for name in ("a", "u"):
        shape = ds[name].shape[1:]
        parts = [
            da.from_delayed(dask.delayed(read)(name, k), shape=shape, dtype=ds[name].dtype)
            for k in range(ds.sizes["sample"])
        ]
        out[name] = (ds[name].dims, da.stack(parts), ds[name].attrs)
    return out


@pytest.mark.parametrize("in_memory", [False, True])
def test_reads_only_selected_samples(rng, in_memory):
    ds = make_darcy(rng, n_samples=6, n=9)
    data = DarcyDataset(_poisoned(ds, {1, 4}), indices=[4, 1], in_memory=in_memory)
    np.testing.assert_array_equal(data[0]["target"][..., 0].numpy(),
                                  ds["u"].values[4].astype(np.float32))
    data[1]  # noqa: B018


def test_inverse_view_pooling_and_fixed_noise(rng):
    ds = make_darcy(rng, n_samples=4, n=25)  # 25 -> n_fine 13 (stride 2) -> n_coarse 7 (pool 2)
    clean = DarcyInverseDataset(ds, n_fine=13, n_coarse=7, indices=range(3))
    item = clean[0]
    assert item["input"].shape == (13, 13, 1)
    assert item["target"].shape == (7, 7, 1)
    assert item["grid"].shape == (7, 7, 2)
    assert item["grid_fine"].shape == (13, 13, 2)
    np.testing.assert_array_equal(item["input"][..., 0].numpy(),
                                  ds["u"].values[0, ::2, ::2].astype(np.float32))
    # Naive two-stage pooling at one coarse node: centred 3x3 window (factor 2 -> r = 1).
    a = ds["a"].values[0]
    fine = np.array([[a[max(0, 2 * p - 1) : 2 * p + 2, max(0, 2 * q - 1) : 2 * q + 2].mean()
                      for q in range(13)] for p in range(13)])
    want = fine[max(0, 2 * 3 - 1) : 2 * 3 + 2, max(0, 2 * 0 - 1) : 2 + 0].mean()
    np.testing.assert_allclose(item["target"][3, 0, 0].item(), want, rtol=1e-6)  # float32

    norm = UnitGaussianNormalizer.fit(clean.stacked("input").double())
    eps = 0.1
    noisy = DarcyInverseDataset(
        ds, n_fine=13, n_coarse=7, noise=eps, noise_seed=11, input_normalizer=norm, indices=[2, 0]
    )
    first, again = noisy[1]["input"], noisy[1]["input"]
    torch.testing.assert_close(first, again, rtol=0, atol=0)  # drawn once: same every read
    # In normalised units the noise is exactly eps * z with z from SeedSequence([seed, k]).
    z = np.random.default_rng(np.random.SeedSequence([11, 0])).standard_normal((13, 13))
    diff = norm.encode(first.double()) - norm.encode(clean[0]["input"].double())
    # float32 items of size ~1 divided by sigma ~ 0.3: 1e-6 absolute.
    np.testing.assert_allclose(diff[..., 0].numpy(), eps * z, atol=1e-5)


def test_inverse_noise_needs_seed_and_normalizer(rng):
    with pytest.raises(InputError, match="`noise_seed` and `input_normalizer` must be given"):
        DarcyInverseDataset(make_darcy(rng, n=25), n_fine=13, n_coarse=7, noise=0.01)


@pytest.mark.parametrize("in_memory", [True, False])
def test_corrupted_chunk_is_a_dataset_error(tmp_path, rng, in_memory):
    path = save_dataset(make_darcy(rng, n_samples=4, n=9), tmp_path / "d.nc")
    corrupt_chunk(path, tmp_path / "bad.nc", "u")
    with pytest.raises(DatasetError, match=r"bad\.nc: variable `u` \(sample .*\) cannot be read"):
        DarcyDataset(tmp_path / "bad.nc", in_memory=in_memory)[0]
