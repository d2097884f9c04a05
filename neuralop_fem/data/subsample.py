"""Resolution changes and target derivatives on the dataset grids (numpy only).

Grids
-----
The strides are the rules of :mod:`solvers.grids` (:func:`~solvers.grids.grid_reachable`,
:func:`~solvers.grids.grid_stride`), asked here by a ``periodic`` flag:

* periodic 1D (Burgers): ``x_i = i/n``; resolution ``n`` is reachable from ``n_full`` by striding
  when ``n_full % n == 0`` (stride ``n_full // n``), e.g. 8192 -> 2048 -> 512.
* node grid (Darcy): ``x_i = i/(n-1)`` incl. both ends; reachable when
  ``(n_full - 1) % (n - 1) == 0`` (stride ``(n_full - 1) // (n - 1)``),
  e.g. 421 -> 211 -> 141 -> 85.

:func:`average_pool_nodes` (the coarse CiNN input) is :func:`solvers.grids.average_pool_nodes`.

Derivatives are computed on the full-resolution data and then subsampled:

* :func:`periodic_derivative`: ``(u[i+1] - u[i-1]) / (2h)`` with the true periodic neighbours
  (``np.roll``), ``h = 1/n_full``; second order.
* :func:`node_gradient`: central differences ``(u[i+1] - u[i-1]) / (2h)`` at interior nodes,
  ``h = 1/(n_full - 1)``, and the second-order one-sided formulas
  ``(-3u[0] + 4u[1] - u[2]) / (2h)`` / ``(3u[n-1] - 4u[n-2] + u[n-3]) / (2h)`` on the boundary;
  second order everywhere for smooth u.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from solvers.grids import average_pool_nodes, grid_reachable, grid_stride

from ..errors import InputError

__all__ = [
    "average_pool_nodes",
    "node_gradient",
    "periodic_derivative",
    "reachable_resolutions",
    "subsample_stride",
]


def _grid(periodic: bool) -> str:
    return "periodic" if periodic else "nodes"


def reachable_resolutions(n_full: int, *, periodic: bool) -> list[int]:
    """Resolutions reachable from ``n_full`` by strided subsampling, ascending.

    The rule of the grid (:func:`solvers.grids.grid_reachable`): periodic grid, the
    divisors of ``n_full``; node grid, ``n`` with ``(n_full-1) % (n-1) == 0`` (``n >= 2``).
    """
    return grid_reachable(_grid(periodic), n_full)


def subsample_stride(n_full: int, n: int, *, periodic: bool) -> int:
    """Stride that takes a grid of ``n_full`` points to ``n`` points.

    Raises
    ------
    InputError
        If ``n`` is not reachable; the message lists the reachable resolutions.
    """
    return grid_stride(_grid(periodic), n_full, n)


def periodic_derivative(u: NDArray[np.floating], *, h: float) -> NDArray[np.floating]:
    """Second-order periodic central difference along the last axis.

    Parameters
    ----------
    u : (..., n) array on the periodic grid ``x_i = i h`` (``h = 1/n``, no duplicated endpoint).
    h : float
        Grid spacing.

    Returns
    -------
    (..., n) array ``(u[i+1] - u[i-1]) / (2h)`` with indices taken modulo n.
    """
    return (np.roll(u, -1, axis=-1) - np.roll(u, 1, axis=-1)) / (2.0 * h)


def _diff_axis(u: NDArray[np.floating], axis: int, h: float) -> NDArray[np.floating]:
    u = np.moveaxis(u, axis, -1)
    d = np.empty_like(u)
    d[..., 1:-1] = (u[..., 2:] - u[..., :-2]) / (2.0 * h)
    d[..., 0] = (-3.0 * u[..., 0] + 4.0 * u[..., 1] - u[..., 2]) / (2.0 * h)
    d[..., -1] = (3.0 * u[..., -1] - 4.0 * u[..., -2] + u[..., -3]) / (2.0 * h)
    return np.moveaxis(d, -1, axis)


def node_gradient(u: NDArray[np.floating], *, h: float) -> NDArray[np.floating]:
    """Gradient on the 2D node grid, second order (central inside, one-sided on the boundary).

    Parameters
    ----------
    u : (..., n, n) array, axis -2 is x and axis -1 is y, ``n >= 3``.
    h : float
        Node spacing ``1/(n-1)``.

    Returns
    -------
    (..., n, n, 2) array: ``[..., 0] = du/dx``, ``[..., 1] = du/dy``.
    """
    if u.shape[-1] < 3 or u.shape[-2] < 3:
        msg = f"`u` must have at least 3 x 3 nodes for a gradient; got shape {u.shape}."
        raise InputError(msg)
    return np.stack((_diff_axis(u, -2, h), _diff_axis(u, -1, h)), axis=-1)
