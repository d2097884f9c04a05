"""Grid conventions of sampled fields on [0, 1] (per axis), with their restrictions and
interpolations: the one place of :mod:`solvers` that says where samples lie and how fields move
between grids.

Conventions
-----------
A dataset's fields are point values on one of these grids (``n`` points per axis):

* ``"nodes"``: ``x_i = i/(n-1)``, ``i = 0..n-1``, boundary included (this package's Darcy grid;
  Dirichlet values on the first and last point of each axis);
* ``"periodic"``: ``x_i = i/n`` on the periodic interval [0, 1) (this package's Burgers grid);
* ``"cell-centred"``: ``x_i = (i + 1/2)/n``, the centres of ``n`` equal cells of [0, 1]
  (PDEBench's 2D Darcy files): no point lies on the boundary;
* ``"half-open"``: ``x_i = i/n``, ``i = 0..n-1`` on [0, 1) of a problem that is *not*
  periodic (neuraloperator's small Darcy set and grid embedding): the boundary ``x = 0`` is a
  sample point, ``x = 1`` is not.

    >>> from solvers.grids import grid_coordinates
    >>> grid_coordinates("cell-centred", 4)
    array([0.125, 0.375, 0.625, 0.875])
    >>> grid_coordinates("half-open", 4)
    array([0.  , 0.25, 0.5 , 0.75])

Restrictions (a finer grid to a coarser one)
--------------------------------------------
* :func:`grid_reachable` / :func:`grid_stride` / :func:`restrict`: strided subsampling, the
  benchmark's coarsening (sample ``k`` of a coarse dataset is the fine sample at every
  ``stride``-th point). Node grids: ``(n_full - 1) % (n - 1) == 0``, stride
  ``(n_full - 1) // (n - 1)``; periodic and half-open grids: ``n_full % n == 0``, stride
  ``n_full // n``; a cell-centred grid is not strided (the centres of a coarser grid are not
  points of a finer one).
* :func:`average_pool_nodes`: centred window means on the node grid (a coarse model input).

Interpolations, each for its use
--------------------------------
* :func:`resample_input`: inputs and coefficients handed to a solver or a model on another
  grid: strided where the grids nest, else linear (periodic linear, bilinear on nodes; second
  order) or, for a piecewise-constant coefficient, the nearest node (keeps its phase values).
* :func:`resample_output`: computed outputs (solutions, predictions) brought to a comparison
  grid: :func:`spectral_periodic` on the periodic grid (exact for band-limited fields; the
  samples themselves where the grids nest) and, on the node grid, strided where the grids nest,
  else :func:`bilinear_nodes` (second order).
  The ladder of the fair verdict and the surrogate's ``resample=True`` both use it, so a
  solver's answer and a prediction on another grid are compared the same way.
* :func:`linear_periodic`, :func:`bilinear_nodes`, :func:`nearest_nodes`,
  :func:`spectral_periodic`: the interpolations themselves; :func:`bilinear_at_points`: the
  node grid's bilinear interpolant at scattered points (mesh transfer).
* :func:`extend_half_open`: ``x_i = i/n`` values extended to the ``n + 1`` nodes of the node
  grid by repeating the last row and column.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.interpolate import RegularGridInterpolator
from scipy.ndimage import map_coordinates

from .checks import plain
from .errors import InputError

__all__ = [
    "GRID_CONVENTIONS",
    "average_pool_nodes",
    "bilinear_at_points",
    "bilinear_nodes",
    "describe_grid",
    "extend_half_open",
    "grid_coordinates",
    "grid_reachable",
    "grid_spacing",
    "grid_stride",
    "linear_periodic",
    "nearest_nodes",
    "resample_input",
    "resample_output",
    "restrict",
    "spectral_periodic",
]

#: Grid convention -> one line stating its points (``n`` points per axis).
GRID_CONVENTIONS = {
    "nodes": "x_i = i/(n-1), i = 0..n-1 on [0, 1], boundary included",
    "periodic": "x_i = i/n, i = 0..n-1 on [0, 1) periodic (no duplicated end point)",
    "cell-centred": "cell centres x_i = (i + 1/2)/n, i = 0..n-1 of [0, 1] (no boundary point)",
    "half-open": "x_i = i/n, i = 0..n-1 on [0, 1) (x = 0 included, x = 1 not a sample point)",
}


def _check_grid(grid: object) -> str:
    if grid not in GRID_CONVENTIONS:
        valid = ", ".join(map(repr, GRID_CONVENTIONS))
        msg = f"`grid` must be one of {valid}; got {grid!r}."
        raise InputError(msg)
    return str(grid)


def _check(grid: object, n: object) -> tuple[str, int]:
    grid = _check_grid(grid)
    minimum = 2 if grid == "nodes" else 1
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < minimum:
        msg = f"`n` must be an integer >= {minimum}; got {plain(n)}."
        raise InputError(msg)
    return grid, int(n)


def grid_coordinates(grid: str, n: int) -> NDArray[np.float64]:
    """The ``n`` coordinates of ``grid`` along one axis (float64, shape ``(n,)``)."""
    grid, n = _check(grid, n)
    i = np.arange(n, dtype=np.float64)
    if grid == "nodes":
        return i / (n - 1)
    if grid == "cell-centred":
        return (i + 0.5) / n
    return i / n


def grid_spacing(grid: str, n: int) -> float:
    """The distance between neighbouring points of ``grid`` with ``n`` points per axis."""
    grid, n = _check(grid, n)
    return 1.0 / (n - 1) if grid == "nodes" else 1.0 / n


def describe_grid(grid: str, n: int, ndim: int = 1) -> str:
    """One line naming ``grid`` with ``n`` points per axis in ``ndim`` dimensions."""
    grid, n = _check(grid, n)
    side = " x ".join([str(n)] * ndim)
    what = {"nodes": "nodes", "periodic": "points", "cell-centred": "cells",
            "half-open": "points"}[grid]
    formula = (GRID_CONVENTIONS[grid].replace("0..n-1", f"0..{n - 1}")
               .replace("(n-1)", f"{n - 1}").replace("/n", f"/{n}"))
    return f"{side} {what}, {formula}"


# -- restrictions ------------------------------------------------------------------------------


def grid_reachable(grid: str, n_full: int) -> list[int]:
    """Resolutions reachable from ``n_full`` points of ``grid`` by strided subsampling, ascending.

    Node grids: ``n >= 2`` with ``(n_full - 1) % (n - 1) == 0`` (421 -> 211, 141, 85, ...);
    periodic and half-open grids: the divisors of ``n_full`` (8192 -> 2048 -> 512); a
    cell-centred grid: only ``n_full`` itself.
    """
    grid = _check_grid(grid)
    if grid == "nodes":
        return [n for n in range(2, n_full + 1) if (n_full - 1) % (n - 1) == 0]
    if grid == "cell-centred":
        return [n_full]
    return [n for n in range(1, n_full + 1) if n_full % n == 0]


def grid_stride(grid: str, n_full: int, n: int) -> int:
    """The stride that takes ``n_full`` points of ``grid`` to ``n`` points.

    Raises
    ------
    InputError
        If ``n`` is not :func:`grid_reachable`; the message lists the reachable resolutions
        (and the rule, on the periodic and node grids).
    """
    reachable = grid_reachable(grid, n_full)
    if n not in reachable:
        if grid in ("periodic", "nodes"):
            rule = "n_full % n == 0" if grid == "periodic" else "(n_full - 1) % (n - 1) == 0"
            msg = (f"`resolution` must be reachable from {n_full} by strided subsampling "
                   f"({rule}): one of {reachable}; got {n}.")
        else:
            msg = (f"`resolution` must be reachable from {n_full} by strided subsampling on the "
                   f"{grid} grid: one of {reachable}; got {n}.")
        raise InputError(msg)
    return (n_full - 1) // (n - 1) if grid == "nodes" else n_full // n


def restrict(values: NDArray[np.floating], n: int, *, grid: str,
             ndim: int = 1) -> NDArray[np.floating]:
    """Strided subsampling of ``values`` (grid along the last ``ndim`` axes) to ``n`` points.

    Exact: the coarse samples are fine samples (:func:`grid_stride` gives the step).
    """
    step = grid_stride(grid, values.shape[-1], n)
    sel = (Ellipsis,) + (slice(None, None, step),) * ndim
    return np.ascontiguousarray(values[sel])


def average_pool_nodes(a: NDArray[np.floating], *, factor: int) -> NDArray[np.floating]:
    """Average-pool a node-grid field by ``factor``: ``n -> (n-1)/factor + 1`` nodes.

    Coarse node ``i`` (at fine node ``factor*i``) gets the mean of the fine nodes within
    ``r = factor // 2`` nodes of it along each axis, i.e. a centred ``(2r+1) x (2r+1)`` window
    (``factor x factor`` for odd factors, ``(factor+1) x (factor+1)`` for even ones), clipped at
    the boundary (the mean is over the nodes inside the domain only, like a NaN-padded nanmean).
    Exact for fields linear along each axis away from the boundary window clipping; a
    restriction, not an interpolation (the coarse value is a local mean).

    Parameters
    ----------
    a : (..., n, n) array with ``(n - 1) % factor == 0``.
    factor : int >= 1

    Returns
    -------
    (..., m, m) array, ``m = (n - 1) // factor + 1``.
    """
    n = a.shape[-1]
    if factor < 1 or (n - 1) % factor != 0 or a.shape[-2] != n:
        msg = (
            f"`factor` must be >= 1 and divide n - 1 = {n - 1} of a square node grid; "
            f"got factor {factor} for shape {a.shape}."
        )
        raise InputError(msg)
    r = factor // 2
    m = (n - 1) // factor + 1
    centres = np.arange(m) * factor
    # (m, n) averaging matrix along one axis: row i averages fine nodes |j - factor*i| <= r.
    j = np.arange(n)
    w = (np.abs(j[None, :] - centres[:, None]) <= r).astype(a.dtype)
    w /= w.sum(axis=1, keepdims=True)
    # Separable: the 2D window mean over in-domain nodes is the product of the 1D means.
    return np.einsum("ix,...xy,jy->...ij", w, a, w, optimize=True)


# -- interpolations ----------------------------------------------------------------------------


def linear_periodic(values: NDArray[np.float64], n_to: int) -> NDArray[np.float64]:
    """Periodic linear interpolation from ``x_i = i/n`` to ``x_j = j/n_to`` along the last axis.

    Second order for smooth periodic fields; exact for constants and at shared points.
    """
    n = values.shape[-1]
    pos = np.arange(n_to) * (n / n_to)
    i0 = np.floor(pos).astype(np.int64)
    w = pos - i0
    return (1 - w) * values[..., i0 % n] + w * values[..., (i0 + 1) % n]


@lru_cache(maxsize=32)
def _linear_matrix(n_from: int, n_to: int) -> NDArray[np.float64]:
    """(n_to, n_from) linear interpolation between node grids ``x_i = i/(n-1)`` (read-only,
    built once per pair of grids)."""
    xf, xt = grid_coordinates("nodes", n_from), grid_coordinates("nodes", n_to)
    j = np.clip(np.searchsorted(xf, xt, side="right") - 1, 0, n_from - 2)
    w = (xt - xf[j]) / (xf[j + 1] - xf[j])
    mat = np.zeros((n_to, n_from))
    rows = np.arange(n_to)
    mat[rows, j] = 1.0 - w
    mat[rows, j + 1] += w
    mat.setflags(write=False)
    return mat


def bilinear_nodes(values: NDArray[np.float64], n_to: int) -> NDArray[np.float64]:
    """Bilinear (tensor-product linear) interpolation between 2D node grids.

    ``values`` of shape ``(..., n, n)`` on ``x_i = i/(n-1)`` to ``(..., n_to, n_to)`` on
    ``x_j = j/(n_to-1)``: second order for smooth fields, exact for bilinear ones and at the
    shared nodes. One matrix per axis (:func:`_linear_matrix`), so the cost is two matrix
    products.
    """
    mat = _linear_matrix(values.shape[-1], n_to)
    return mat @ values @ mat.T


def nearest_nodes(values: NDArray[np.float64], n_to: int) -> NDArray[np.float64]:
    """Nearest-node interpolation between 2D node grids (``(s, n, n) -> (s, n_to, n_to)``).

    Keeps the values of a piecewise-constant coefficient (its phases); first order at jumps.
    """
    c = np.linspace(0.0, values.shape[-1] - 1, n_to)
    ii, jj = np.meshgrid(c, c, indexing="ij")
    return np.stack([map_coordinates(s, [ii, jj], order=0, mode="nearest") for s in values])


def _zero_pad(values: NDArray[np.float64], n_to: int) -> NDArray[np.float64]:
    """The trigonometric interpolant of ``x_i = i/n`` samples at ``x_j = j/n_to``, ``n_to >= n``
    (zero-padded spectrum; a Nyquist mode of even ``n`` split evenly between ``+-n/2``)."""
    n = values.shape[-1]
    c = np.fft.rfft(values, axis=-1)
    out = np.zeros((*values.shape[:-1], n_to // 2 + 1), dtype=complex)
    out[..., : n // 2 + 1] = c
    if n % 2 == 0 and n_to > n:
        out[..., n // 2] *= 0.5
    return np.fft.irfft(out, n=n_to, axis=-1) * (n_to / n)


def spectral_periodic(values: NDArray[np.float64], n_to: int) -> NDArray[np.float64]:
    """Fourier interpolation from ``x_i = i/n`` to ``x_j = j/n_to`` along the last axis.

    The trigonometric interpolant of the samples (degree ``n/2``, the Nyquist mode of an even
    ``n`` taken as its cosine) evaluated at the target points: exact for trigonometric
    polynomials of degree below ``n/2``, spectrally accurate for smooth periodic fields, and
    the samples themselves where the grids share points (``n % n_to == 0`` is striding).
    """
    n = values.shape[-1]
    if n_to == n:
        return values.copy()
    if n % n_to == 0:
        return np.ascontiguousarray(values[..., :: n // n_to])
    if n_to > n:
        return _zero_pad(values, n_to)
    fine = n_to * -(-n // n_to)  # the first multiple of n_to above n: its grid holds the targets
    return np.ascontiguousarray(_zero_pad(values, fine)[..., :: fine // n_to])


def bilinear_at_points(values: ArrayLike, points: ArrayLike) -> NDArray[np.float64]:
    """The bilinear interpolant of ``(n, n)`` node-grid values at scattered points.

    ``points`` of shape ``(m, 2)`` in [0, 1]^2 (clipped to it), columns ``x`` (axis 0 of
    ``values``) and ``y``; returns ``(m,)``. Second order for smooth fields, exact at grid
    nodes and for bilinear fields.
    """
    v = np.asarray(values, dtype=np.float64)
    x = grid_coordinates("nodes", v.shape[0])
    interp = RegularGridInterpolator((x, x), v, method="linear")
    return interp(np.clip(np.asarray(points, dtype=np.float64), 0.0, 1.0))


def extend_half_open(values: NDArray[np.float64] | None) -> NDArray[np.float64] | None:
    """Half-open ``x_i = i/n`` values ``(s, n, n)`` on the ``n + 1``-node grid ``(s, n+1, n+1)``.

    The missing last row and column (``x = 1``, ``y = 1``) repeat the ones before them; None
    stays None.
    """
    if values is None:
        return None
    return np.pad(values, ((0, 0), (0, 1), (0, 1)), mode="edge")


def _nest(n_from: int, n_to: int, grid: str) -> int | None:
    """The stride taking ``n_from`` points to ``n_to`` when the coarse grid's points are fine
    points, else None."""
    if grid == "nodes":
        return (n_from - 1) // (n_to - 1) if (n_from - 1) % (n_to - 1) == 0 else None
    return n_from // n_to if n_from % n_to == 0 else None


def _check_layout(values: NDArray[np.float64], grid: str) -> None:
    if grid == "periodic":
        if values.ndim != 2:
            msg = f"`values` must be (n_samples, n) on the periodic grid; got {values.shape}."
            raise InputError(msg)
    elif grid == "nodes":
        if values.ndim != 3 or values.shape[1] != values.shape[2]:
            msg = f"`values` must be (n_samples, n, n) on the node grid; got {values.shape}."
            raise InputError(msg)
    else:
        msg = f"`grid` must be 'periodic' or 'nodes' to resample; got {grid!r}."
        raise InputError(msg)


def resample_input(values: ArrayLike, n_to: int, *, grid: str,
                   piecewise_constant: bool = False) -> NDArray[np.float64]:
    """Bring inputs (initial conditions, coefficients) to ``n_to`` points per dimension.

    Strided where the grids nest (the samples at the target points are kept exactly), else
    :func:`linear_periodic` (periodic, ``(s, n)``) or :func:`bilinear_nodes` (nodes,
    ``(s, n, n)``); :func:`nearest_nodes` with ``piecewise_constant`` (keeps a coefficient's
    phase values). Linear rather than spectral: an input need not be smooth (a thresholded
    coefficient), and linear interpolation neither overshoots nor rings.
    """
    v = np.asarray(values)
    _check_layout(v, grid)
    n = v.shape[-1]
    if n == n_to:
        return v
    step = _nest(n, n_to, grid)
    if step:
        sel = (Ellipsis,) + (slice(None, None, step),) * (v.ndim - 1)
        return np.ascontiguousarray(v[sel])
    if grid == "periodic":
        return linear_periodic(v, n_to)
    return nearest_nodes(v, n_to) if piecewise_constant else bilinear_nodes(v, n_to)


def resample_output(values: ArrayLike, n_to: int, *, grid: str) -> NDArray[np.float64]:
    """Bring outputs (a solver's answer, a model's prediction) to a comparison grid.

    ``(s, n)`` on the periodic grid: :func:`spectral_periodic` (exact for fields with modes
    below ``min(n, n_to) / 2``; striding where the grids nest); ``(s, n, n)`` on the node grid:
    :func:`bilinear_nodes` (second order, exact at the shared nodes, so striding where the
    grids nest). The ladder's rungs and the surrogate's predictions on another grid both come
    through here. Returns a new array.

    Raises
    ------
    InputError
        ``values`` not of the layout of ``grid``, or another grid.
    """
    v = np.asarray(values, dtype=np.float64)
    _check_layout(v, grid)
    if grid == "periodic":
        return spectral_periodic(v, n_to)
    if v.shape[-1] == n_to:
        return v.copy()
    step = _nest(v.shape[-1], n_to, grid)
    if step:
        return np.ascontiguousarray(v[:, ::step, ::step])
    return bilinear_nodes(v, n_to)
