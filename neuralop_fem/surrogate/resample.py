"""Resampling of samples between grids of the same convention (numpy, scipy).

* periodic 1D grid ``x_i = i/n``: strided when the grids nest, else periodic linear
  interpolation (second order);
* node grid ``x_i = i/(n-1)`` on [0, 1]^2: strided when the grids nest, else bilinear
  interpolation (second order for smooth fields) or nearest node (keeps the phase values of a
  piecewise-constant coefficient).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy.ndimage import map_coordinates

__all__ = ["resample_nodes", "resample_periodic"]


def resample_periodic(u: NDArray[np.float64], n: int) -> NDArray[np.float64]:
    """Resample ``(s, m)`` periodic samples on ``x_i = i/m`` to ``n`` points.

    Strided when ``m % n == 0``, otherwise periodic linear interpolation (second order).
    """
    m = u.shape[-1]
    if m == n:
        return u
    if m % n == 0:
        return np.ascontiguousarray(u[:, :: m // n])
    pos = np.arange(n) * (m / n)
    i0 = np.floor(pos).astype(np.int64)
    w = pos - i0
    return (1 - w) * u[:, i0 % m] + w * u[:, (i0 + 1) % m]


def resample_nodes(u: NDArray[np.float64], n: int, *, order: int = 1) -> NDArray[np.float64]:
    """Resample ``(s, m, m)`` node-grid samples (``x_i = i/(m-1)``) to ``n x n`` nodes.

    Strided when ``(m - 1) % (n - 1) == 0``, otherwise interpolation: ``order=1`` bilinear
    (second order for smooth fields), ``order=0`` nearest node (keeps the phase values of a
    piecewise-constant coefficient).
    """
    m = u.shape[-1]
    if m == n:
        return u
    if (m - 1) % (n - 1) == 0:
        step = (m - 1) // (n - 1)
        return np.ascontiguousarray(u[:, ::step, ::step])
    c = np.linspace(0.0, m - 1, n)
    ii, jj = np.meshgrid(c, c, indexing="ij")
    return np.stack([map_coordinates(s, [ii, jj], order=order, mode="nearest") for s in u])
