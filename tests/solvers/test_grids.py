"""solvers.grids: every restriction and interpolation is exact where it should be, and
converges at its order where it approximates."""

from __future__ import annotations

import numpy as np
import pytest

from solvers.errors import InputError
from solvers.grids import (
    GRID_CONVENTIONS,
    average_pool_nodes,
    bilinear_at_points,
    bilinear_nodes,
    extend_half_open,
    grid_coordinates,
    grid_reachable,
    grid_stride,
    linear_periodic,
    nearest_nodes,
    resample_input,
    resample_output,
    restrict,
    spectral_periodic,
)
from solvers.ladder import interpolate

from ..helpers import assert_order

# Sums and FFTs of O(1) values over at most a few hundred points: a few units of 1e-16 each.
ROUND_OFF = 1e-13


def _trig(x: np.ndarray) -> np.ndarray:
    """A trigonometric polynomial of degree 3 (exact on grids of more than 6 points)."""
    return 0.5 + np.sin(2 * np.pi * x) + 0.3 * np.cos(6 * np.pi * x) - 0.2 * np.sin(4 * np.pi * x)


def _smooth(x: np.ndarray) -> np.ndarray:
    """A smooth periodic field with every Fourier mode (analytic: exp(sin))."""
    return np.exp(np.sin(2 * np.pi * x))


def _periodic(n: int) -> np.ndarray:
    return grid_coordinates("periodic", n)


# -- conventions and restrictions ------------------------------------------------------------


def test_every_convention_is_stated_once_with_its_points():
    assert set(GRID_CONVENTIONS) == {"nodes", "periodic", "cell-centred", "half-open"}
    np.testing.assert_array_equal(grid_coordinates("nodes", 5), [0, 0.25, 0.5, 0.75, 1])
    np.testing.assert_array_equal(grid_coordinates("periodic", 4), [0, 0.25, 0.5, 0.75])


@pytest.mark.parametrize(("grid", "n_full", "want"), [
    ("nodes", 9, [2, 3, 5, 9]),
    ("periodic", 8, [1, 2, 4, 8]),
    ("half-open", 12, [1, 2, 3, 4, 6, 12]),
    ("cell-centred", 12, [12]),
])
def test_reachable_resolutions_of_each_grid(grid, n_full, want):
    assert grid_reachable(grid, n_full) == want


def test_strides_and_their_messages():
    assert grid_stride("nodes", 421, 141) == 3
    assert grid_stride("periodic", 8192, 512) == 16
    assert grid_stride("half-open", 32, 16) == 2
    with pytest.raises(InputError, match=r"\(\(n_full - 1\) % \(n - 1\) == 0\): one of"):
        grid_stride("nodes", 421, 100)
    with pytest.raises(InputError, match=r"on the cell-centred grid: one of \[32\]; got 16"):
        grid_stride("cell-centred", 32, 16)
    with pytest.raises(InputError, match="`grid` must be one of"):
        grid_reachable("staggered", 8)


def test_restrict_keeps_the_fine_samples_at_the_coarse_points():
    x = grid_coordinates("nodes", 9)
    fine = np.add.outer(x, 2 * x)[None]
    coarse = restrict(fine, 5, grid="nodes", ndim=2)
    xc = grid_coordinates("nodes", 5)
    np.testing.assert_array_equal(coarse[0], np.add.outer(xc, 2 * xc))


def test_average_pool_is_exact_for_constants_and_linear_fields_inside():
    x = grid_coordinates("nodes", 13)
    lin = np.add.outer(x, 3 * x)
    pooled = average_pool_nodes(lin[None], factor=3)[0]
    xc = grid_coordinates("nodes", 5)
    # Away from the clipped boundary windows the centred mean of a linear field is its value.
    np.testing.assert_allclose(pooled[1:-1, 1:-1], np.add.outer(xc, 3 * xc)[1:-1, 1:-1],
                               atol=ROUND_OFF)
    np.testing.assert_allclose(average_pool_nodes(np.full((1, 13, 13), 2.5), factor=4), 2.5,
                               atol=ROUND_OFF)


def test_extend_half_open_repeats_the_last_row_and_column():
    v = np.arange(9.0).reshape(1, 3, 3)
    out = extend_half_open(v)
    assert out.shape == (1, 4, 4)
    np.testing.assert_array_equal(out[:, :3, :3], v)
    np.testing.assert_array_equal(out[0, 3, :3], v[0, 2])
    np.testing.assert_array_equal(out[0, :3, 3], v[0, :, 2])
    assert extend_half_open(None) is None


# -- interpolations: exact cases -------------------------------------------------------------


@pytest.mark.parametrize(("n", "n_to"), [(16, 64), (16, 24), (64, 16), (24, 16), (20, 14)])
def test_spectral_periodic_is_exact_for_trigonometric_polynomials(n, n_to):
    """Refining, coarsening on nested and on non-nested grids: degree 3 < min(n, n_to) / 2."""
    out = spectral_periodic(_trig(_periodic(n))[None], n_to)[0]
    np.testing.assert_allclose(out, _trig(_periodic(n_to)), atol=ROUND_OFF)


def test_spectral_periodic_passes_through_the_samples():
    """The interpolant of 24 samples of a field with every mode, evaluated on 72 points and
    strided back, returns the samples; coarsening a nested grid is striding."""
    v = _smooth(_periodic(24))[None] + np.random.default_rng(0).normal(size=(1, 24))
    np.testing.assert_allclose(spectral_periodic(v, 72)[:, ::3], v, atol=ROUND_OFF)
    np.testing.assert_array_equal(spectral_periodic(v, 8), v[:, ::3])


def test_linear_periodic_is_exact_for_piecewise_linear_fields_with_kinks_at_the_samples():
    x = _periodic(8)
    hat = np.interp(np.arange(24) / 24, np.append(x, 1.0), np.append(np.abs(x - 0.5), 0.5))
    out = linear_periodic(np.abs(x - 0.5)[None], 24)[0]
    np.testing.assert_allclose(out, hat, atol=ROUND_OFF)


def test_bilinear_nodes_and_at_points_are_exact_for_bilinear_fields():
    def f(x, y):
        return 1 + 2 * x - y + 3 * x * y

    xs = grid_coordinates("nodes", 5)
    coarse = f(*np.meshgrid(xs, xs, indexing="ij"))
    xf = grid_coordinates("nodes", 13)
    np.testing.assert_allclose(bilinear_nodes(coarse[None], 13)[0],
                               f(*np.meshgrid(xf, xf, indexing="ij")), atol=ROUND_OFF)
    # at the shared nodes of a refinement the weights are exactly 0 and 1: the values themselves
    u = np.random.default_rng(3).normal(size=(2, 5, 5))
    np.testing.assert_array_equal(bilinear_nodes(u, 9)[:, ::2, ::2], u)
    pts = np.random.default_rng(1).uniform(size=(50, 2))
    np.testing.assert_allclose(bilinear_at_points(coarse, pts), f(pts[:, 0], pts[:, 1]),
                               atol=ROUND_OFF)


def test_nearest_nodes_keeps_the_phase_values_of_a_piecewise_constant_coefficient():
    x = grid_coordinates("nodes", 9)
    a = np.where(np.add.outer(x, 0 * x) < 0.45, 3.0, 12.0)[None]
    out = nearest_nodes(a, 13)
    assert set(np.unique(out)) == {3.0, 12.0}
    xt = grid_coordinates("nodes", 13)
    # exact away from the jump (within a fine cell of x = 0.45 the nearest node decides)
    far = np.abs(xt - 0.45) > 1 / 8
    np.testing.assert_array_equal(out[0][far], np.where(xt < 0.45, 3.0, 12.0)[far, None]
                                  * np.ones((1, 13)))


# -- interpolations: orders ------------------------------------------------------------------


def test_linear_periodic_converges_at_second_order():
    ns = [16, 32, 64, 128]
    errs = [np.abs(linear_periodic(_smooth(_periodic(n))[None], 3 * n // 2 + 1)[0]
                   - _smooth(_periodic(3 * n // 2 + 1))).max() for n in ns]
    assert_order([1 / n for n in ns], errs, 2.0, 0.15)


def test_bilinear_converges_at_second_order_on_grids_and_at_points():
    def f(x, y):
        return np.sin(np.pi * x) * np.cos(2 * y)

    ns = [9, 17, 33, 65]
    errs, at_points = [], []
    pts = np.random.default_rng(2).uniform(size=(200, 2))
    for n in ns:
        x = grid_coordinates("nodes", n)
        v = f(*np.meshgrid(x, x, indexing="ij"))
        xt = grid_coordinates("nodes", 2 * n + 3)
        errs.append(np.abs(bilinear_nodes(v[None], 2 * n + 3)[0]
                           - f(*np.meshgrid(xt, xt, indexing="ij"))).max())
        at_points.append(np.abs(bilinear_at_points(v, pts) - f(pts[:, 0], pts[:, 1])).max())
    h = [1 / (n - 1) for n in ns]
    assert_order(h, errs, 2.0, 0.15)
    assert_order(h, at_points, 2.0, 0.25)  # scattered points: the worst one varies with h


def test_spectral_periodic_converges_faster_than_any_power():
    """exp(sin) has geometrically decaying modes: doubling the points squares the error
    (roughly), far beyond the 4x of a second-order method."""
    errs = [np.abs(spectral_periodic(_smooth(_periodic(n))[None], 100)[0]
                   - _smooth(_periodic(100))).max() for n in (8, 16, 24)]
    assert errs[1] < errs[0] ** 1.5
    assert errs[2] < 1e-12 < errs[0]


# -- the interpolations for each use ----------------------------------------------------------


def test_resample_input_strides_where_the_grids_nest_else_interpolates_linearly():
    v = _smooth(_periodic(24))[None]
    np.testing.assert_array_equal(resample_input(v, 8, grid="periodic"), v[:, ::3])
    np.testing.assert_array_equal(resample_input(v, 36, grid="periodic"),
                                  linear_periodic(v, 36))
    x = grid_coordinates("nodes", 9)
    a = np.where(np.add.outer(x, x) < 1, 3.0, 12.0)[None]
    np.testing.assert_array_equal(resample_input(a, 5, grid="nodes"), a[:, ::2, ::2])
    np.testing.assert_array_equal(resample_input(a, 7, grid="nodes", piecewise_constant=True),
                                  nearest_nodes(a, 7))
    np.testing.assert_array_equal(resample_input(a, 7, grid="nodes"), bilinear_nodes(a, 7))


def test_resample_output_is_the_ladders_interpolation_spectral_on_periodic_grids():
    assert interpolate is resample_output
    v = _smooth(_periodic(24))[None]
    np.testing.assert_array_equal(resample_output(v, 40, grid="periodic"),
                                  spectral_periodic(v, 40))
    # the answer to "what is this output on 40 points" differs from the linear one of inputs
    assert np.abs(spectral_periodic(v, 40) - linear_periodic(v, 40)).max() > 1e-3
    x = grid_coordinates("nodes", 9)
    u = np.sin(np.pi * np.add.outer(x, x))[None]
    np.testing.assert_array_equal(resample_output(u, 5, grid="nodes"), u[:, ::2, ::2])
    np.testing.assert_array_equal(resample_output(u, 13, grid="nodes"), bilinear_nodes(u, 13))


def test_resampling_checks_the_layout():
    with pytest.raises(InputError, match=r"\(n_samples, n\) on the periodic grid"):
        resample_output(np.zeros((2, 4, 4)), 8, grid="periodic")
    with pytest.raises(InputError, match=r"\(n_samples, n, n\) on the node grid"):
        resample_input(np.zeros((2, 4, 5)), 8, grid="nodes")
    with pytest.raises(InputError, match="'periodic' or 'nodes'"):
        resample_output(np.zeros((2, 4, 4)), 8, grid="cell-centred")
