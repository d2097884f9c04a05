"""Grid conventions of sampled fields on [0, 1] (per axis), named once.

A dataset's fields are point values on one of these grids (``n`` points per axis):

* ``"nodes"``: ``x_i = i/(n-1)``, ``i = 0..n-1``, boundary included (this package's Darcy grid);
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
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .checks import plain
from .errors import InputError

__all__ = ["GRID_CONVENTIONS", "describe_grid", "grid_coordinates", "grid_spacing"]

#: Grid convention -> one line stating its points (``n`` points per axis).
GRID_CONVENTIONS = {
    "nodes": "x_i = i/(n-1), i = 0..n-1 on [0, 1], boundary included",
    "periodic": "x_i = i/n, i = 0..n-1 on [0, 1) periodic (no duplicated end point)",
    "cell-centred": "cell centres x_i = (i + 1/2)/n, i = 0..n-1 of [0, 1] (no boundary point)",
    "half-open": "x_i = i/n, i = 0..n-1 on [0, 1) (x = 0 included, x = 1 not a sample point)",
}


def _check(grid: object, n: object) -> tuple[str, int]:
    if grid not in GRID_CONVENTIONS:
        valid = ", ".join(map(repr, GRID_CONVENTIONS))
        msg = f"`grid` must be one of {valid}; got {grid!r}."
        raise InputError(msg)
    minimum = 2 if grid == "nodes" else 1
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < minimum:
        msg = f"`n` must be an integer >= {minimum}; got {plain(n)}."
        raise InputError(msg)
    return str(grid), int(n)


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
