"""Resolution subsampling, target derivatives and node-grid average pooling."""

from __future__ import annotations

import numpy as np
import pytest

from neuralop_fem.data.subsample import (
    average_pool_nodes,
    node_gradient,
    periodic_derivative,
    reachable_resolutions,
    subsample_stride,
)
from neuralop_fem.errors import InputError
from tests.helpers import assert_order


def test_reachable_resolutions_of_the_benchmarks():
    burgers = reachable_resolutions(8192, periodic=True)
    assert {512, 2048, 8192} <= set(burgers)
    assert all(8192 % n == 0 for n in burgers)
    darcy = reachable_resolutions(421, periodic=False)
    assert {85, 141, 211, 421} <= set(darcy)
    assert 100 not in darcy  # 99 does not divide 420
    assert subsample_stride(8192, 512, periodic=True) == 16
    assert subsample_stride(421, 141, periodic=False) == 3


def test_unreachable_resolution_lists_the_reachable_ones():
    match = r"one of \[2, 3, 4, 5, 6, 7, 8, 11, 13, 15, 16, 21, 22, 29, 31, 36, 43"
    with pytest.raises(InputError, match=match):
        subsample_stride(421, 100, periodic=False)


def test_periodic_derivative_exact_for_discrete_modes():
    # For u = sin(2 pi k x) the central difference is exactly sin(2 pi k h)/h * cos(2 pi k x).
    n, k = 64, 3
    x = np.arange(n) / n
    h = 1.0 / n
    got = periodic_derivative(np.sin(2 * np.pi * k * x), h=h)
    want = np.sin(2 * np.pi * k * h) / h * np.cos(2 * np.pi * k * x)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)  # rounding of O(1/h)-sized terms


def test_periodic_derivative_second_order():
    hs, errs = [], []
    for n in (32, 64, 128, 256):
        x = np.arange(n) / n
        u = np.exp(np.sin(2 * np.pi * x))
        du = 2 * np.pi * np.cos(2 * np.pi * x) * u
        hs.append(1 / n)
        errs.append(np.max(np.abs(periodic_derivative(u, h=1 / n) - du)))
    assert_order(hs, errs, expected=2.0, tol=0.1)  # central difference: order 2


def test_node_gradient_exact_for_quadratics():
    n = 9
    x = np.arange(n) / (n - 1)
    gx, gy = np.meshgrid(x, x, indexing="ij")
    u = 3 * gx**2 - 2 * gx * gy + gy**2 + gx
    g = node_gradient(u, h=1 / (n - 1))
    # Central and one-sided 3-point formulas are exact for quadratics (up to rounding).
    np.testing.assert_allclose(g[..., 0], 6 * gx - 2 * gy + 1, atol=1e-12)
    np.testing.assert_allclose(g[..., 1], -2 * gx + 2 * gy, atol=1e-12)


def test_node_gradient_second_order_incl_boundary():
    hs, errs = [], []
    for n in (17, 33, 65, 129):
        x = np.arange(n) / (n - 1)
        gx, gy = np.meshgrid(x, x, indexing="ij")
        u = np.sin(np.pi * gx) * np.sin(2 * np.pi * gy)
        dudx = np.pi * np.cos(np.pi * gx) * np.sin(2 * np.pi * gy)
        hs.append(1 / (n - 1))
        errs.append(np.max(np.abs(node_gradient(u, h=1 / (n - 1))[..., 0] - dudx)))
    assert_order(hs, errs, expected=2.0, tol=0.15)  # second order up to the boundary


def test_average_pool_matches_naive_loops(rng):
    for factor in (1, 2, 3, 4):
        n = 4 * 3 * factor + 1
        a = rng.random((2, n, n))
        got = average_pool_nodes(a, factor=factor)
        m = (n - 1) // factor + 1
        r = factor // 2
        want = np.empty((2, m, m))
        for i in range(m):
            for j in range(m):
                xs = slice(max(0, factor * i - r), min(n, factor * i + r + 1))
                ys = slice(max(0, factor * j - r), min(n, factor * j + r + 1))
                want[:, i, j] = a[:, xs, ys].mean(axis=(1, 2))
        np.testing.assert_allclose(got, want, rtol=1e-13)  # same sums, different order


def test_average_pool_rejects_bad_factor(rng):
    with pytest.raises(InputError, match="`factor` must be >= 1 and divide n - 1 = 10"):
        average_pool_nodes(rng.random((11, 11)), factor=3)
