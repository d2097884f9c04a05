"""Losses and metrics against naive numpy computations and exact derivatives.

rtol 1e-9 where a denominator carries the 1e-10 guard epsilon: its relative effect on norms
of order 1-100 is ~1e-11.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neuralop_fem.training.losses import (
    central_difference_1d,
    central_difference_2d,
    h1_loss_term,
    operator_loss,
    relative_h1_error,
    relative_l2_error,
)
from solvers.errors import ShapeError


def _naive_rel_l2(p: np.ndarray, u: np.ndarray) -> np.ndarray:
    return np.array([np.sqrt(((pi - ui) ** 2).sum() / (ui**2).sum())
                     for pi, ui in zip(p, u, strict=True)])


def test_relative_l2_matches_naive(rng):
    u = rng.standard_normal((5, 32, 1))
    p = u + 0.1 * rng.standard_normal((5, 32, 1))
    got = relative_l2_error(torch.from_numpy(p), torch.from_numpy(u)).numpy()
    np.testing.assert_allclose(got, _naive_rel_l2(p, u), rtol=1e-9)


def test_zero_prediction_has_relative_error_one(rng):
    u = torch.from_numpy(rng.standard_normal((3, 9, 9, 1)))
    torch.testing.assert_close(relative_l2_error(torch.zeros_like(u), u),
                               torch.ones(3, dtype=u.dtype))


def test_central_difference_1d_second_order():
    # d/dx sin(2 pi x) on the periodic grid; O(h^2) error constant (2 pi)^3/6.
    errs = []
    for n in (32, 64, 128):
        x = np.arange(n) / n
        u = torch.from_numpy(np.sin(2 * np.pi * x))[None]
        d = central_difference_1d(u, 1.0 / n)[0].numpy()
        errs.append(np.abs(d - 2 * np.pi * np.cos(2 * np.pi * x)).max())
    rates = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    np.testing.assert_allclose(rates, 2.0, atol=0.05)


def test_central_difference_2d_exact_on_quadratics():
    # Central differences are exact for quadratics: u = x^2 + 3xy - y^2.
    n = 11
    x = np.linspace(0, 1, n)
    X, Y = np.meshgrid(x, x, indexing="ij")
    u = torch.from_numpy(X**2 + 3 * X * Y - Y**2)[None]
    d = central_difference_2d(u, 1.0 / (n - 1))[0].numpy()
    np.testing.assert_allclose(d[..., 0], (2 * X + 3 * Y)[1:-1, 1:-1], atol=1e-12)
    np.testing.assert_allclose(d[..., 1], (3 * X - 2 * Y)[1:-1, 1:-1], atol=1e-12)


def test_h1_term_1d_matches_naive(rng):
    n = 16
    p = rng.standard_normal((4, n, 1))
    g = rng.standard_normal((4, n, 1))
    h = 1.0 / n
    naive = []
    for pi, gi in zip(p[..., 0], g[..., 0], strict=True):
        dp = np.array([(pi[(j + 1) % n] - pi[j - 1]) / (2 * h) for j in range(n)])
        naive.append(((gi - dp) ** 2).sum() / (gi**2).sum())
    got = h1_loss_term(torch.from_numpy(p), torch.from_numpy(g)).numpy()
    np.testing.assert_allclose(got, naive, rtol=1e-9)


def test_h1_term_2d_weighted_matches_naive(rng):
    n = 7
    p = rng.standard_normal((2, n, n, 1))
    g = rng.standard_normal((2, n, n, 2))
    k = rng.uniform(3, 12, (2, n, n, 1))
    h = 1.0 / (n - 1)
    naive = []
    for s in range(2):
        num = []
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                dx = (p[s, i + 1, j, 0] - p[s, i - 1, j, 0]) / (2 * h)
                dy = (p[s, i, j + 1, 0] - p[s, i, j - 1, 0]) / (2 * h)
                w = k[s, i, j, 0] ** 2
                num += [w * (g[s, i, j, 0] - dx) ** 2, w * (g[s, i, j, 1] - dy) ** 2]
        den = (k[s] ** 2 * g[s] ** 2).mean()
        naive.append(np.mean(num) / den)
    got = h1_loss_term(torch.from_numpy(p), torch.from_numpy(g), coefficient=torch.from_numpy(k))
    np.testing.assert_allclose(got.numpy(), naive, rtol=1e-9)


def test_operator_loss_adds_weighted_h1(rng):
    n = 16
    u = torch.from_numpy(rng.standard_normal((3, n, 1)))
    p = u + 0.05 * torch.from_numpy(rng.standard_normal((3, n, 1)))
    g = torch.from_numpy(rng.standard_normal((3, n, 1)))
    base = operator_loss(p, u)
    full = operator_loss(p, u, target_grad=g, gamma=0.1)
    extra = torch.sqrt(0.1 / n * h1_loss_term(p, g)).mean()
    torch.testing.assert_close(full, base + extra)
    torch.testing.assert_close(base, relative_l2_error(p, u).mean())


def test_relative_h1_error_of_exact_prediction_is_zero(rng):
    u = torch.from_numpy(rng.standard_normal((2, 9, 9, 1)))
    assert relative_h1_error(u, u).abs().max() == 0
    assert relative_h1_error(2 * u, u).sub(1).abs().max() < 1e-12


def test_shape_errors(rng):
    u = torch.zeros(2, 8, 1)
    with pytest.raises(ShapeError, match="must have the shape of `target`"):
        relative_l2_error(torch.zeros(2, 9, 1), u)
    with pytest.raises(ShapeError, match="`target_grad` must be given"):
        operator_loss(u, u, gamma=0.1)
    with pytest.raises(ShapeError, match="`target_grad` must have shape"):
        h1_loss_term(torch.zeros(2, 5, 5, 1), torch.zeros(2, 5, 5, 1))
