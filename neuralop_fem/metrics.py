r"""Error metrics of solutions on the dataset grids (numpy; shared by every evaluation).

Training validation, ``evaluate_run``, ``compare`` and the reports all compute their numbers
here, so the same sample gets the same error wherever it is reported. Per sample :math:`i`,
with :math:`p` a prediction (candidate) and :math:`r` the reference on the grid:

* :func:`relative_l2`: :math:`\|p_i - r_i\|_2 / \|r_i\|_2` over all grid points (the papers'
  metric; reported as the mean over samples);
* :func:`relative_h1`: the relative H1-seminorm error with both gradients by second-order
  central differences: periodic on the 1D grid ``x_j = j/n``; at the interior nodes of the 2D
  node grid ``x_j = j/(n-1)`` (the boundary nodes have no central difference);
* :func:`energy_norm_error` (Darcy): :math:`\|p_i - r_i\|_a / \|r_i\|_a` with
  :math:`\|v\|_a^2 = v^T K(a) v`, ``K`` the P1 stiffness matrix (:func:`solvers.darcy.energy_norm`);
* :func:`summarize`: mean, median, 95th percentile and maximum of per-sample values.

A reference that is zero everywhere has no relative error: its value is NaN.

>>> import numpy as np
>>> r = np.array([[3.0, 4.0]]); p = np.array([[3.0, 4.5]])
>>> relative_l2(p, r)
array([0.1])
>>> summarize([0.1, 0.2, 0.3])["median"]
0.2
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import ShapeError

__all__ = [
    "STATISTICS",
    "worse_than_zero_note",
    "energy_norm_error",
    "relative_h1",
    "relative_l2",
    "summarize",
]

#: The statistics :func:`summarize` returns, in order.
STATISTICS = ("mean", "median", "p95", "max")


def _pair(pred: ArrayLike, ref: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    p = np.asarray(pred, dtype=np.float64)
    r = np.asarray(ref, dtype=np.float64)
    if p.shape != r.shape or p.ndim < 2:
        msg = (f"`pred` must have the shape of `ref` (n_samples, *grid) {r.shape}; got "
               f"{p.shape}.")
        raise ShapeError(msg)
    return p, r


def _ratio(num: NDArray[np.float64], den: NDArray[np.float64]) -> NDArray[np.float64]:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.sqrt(num / den)
    return np.where(den > 0, out, np.nan)


def relative_l2(pred: ArrayLike, ref: ArrayLike) -> NDArray[np.float64]:
    """Per-sample relative L2 error ``||pred - ref|| / ||ref||`` over the grid.

    Parameters
    ----------
    pred, ref : (n_samples, *grid) arrays of equal shape

    Returns
    -------
    (n_samples,) float64 array (NaN where ``ref`` is zero).
    """
    p, r = _pair(pred, ref)
    n = len(r)
    num = np.square(p - r).reshape(n, -1).sum(axis=1)
    den = np.square(r).reshape(n, -1).sum(axis=1)
    return _ratio(num, den)


def _gradient(u: NDArray[np.float64], grid: str) -> NDArray[np.float64]:
    """Central differences without the spacing (it cancels in the relative error)."""
    if grid == "periodic":
        return np.roll(u, -1, axis=-1) - np.roll(u, 1, axis=-1)
    dx = u[:, 2:, 1:-1] - u[:, :-2, 1:-1]
    dy = u[:, 1:-1, 2:] - u[:, 1:-1, :-2]
    return np.stack((dx, dy), axis=-1)


def relative_h1(pred: ArrayLike, ref: ArrayLike, *, grid: str) -> NDArray[np.float64]:
    """Per-sample relative H1-seminorm error ``|pred - ref|_H1 / |ref|_H1``.

    Parameters
    ----------
    pred, ref : (n_samples, n) on the periodic grid or (n_samples, n, n) on the node grid
    grid : {"periodic", "nodes"}
        The grid convention (:attr:`solvers.problems.Problem.grid`). Periodic: central
        differences at every point with periodic neighbours; nodes: at the ``(n-2)^2``
        interior nodes. Second order for smooth fields.

    Returns
    -------
    (n_samples,) float64 array (NaN where ``ref`` is constant, or the grid is too small).
    """
    p, r = _pair(pred, ref)
    want = {"periodic": 2, "nodes": 3}
    if grid not in want:
        msg = f"`grid` must be 'periodic' or 'nodes'; got {grid!r}."
        raise ShapeError(msg)
    if p.ndim != want[grid]:
        msg = (f"`pred` must be {want[grid] - 1}-D samples on the {grid} grid; got shape "
               f"{p.shape}.")
        raise ShapeError(msg)
    n = len(r)
    if r.shape[-1] < 3:
        return np.full(n, np.nan)
    num = np.square(_gradient(p - r, grid)).reshape(n, -1).sum(axis=1)
    den = np.square(_gradient(r, grid)).reshape(n, -1).sum(axis=1)
    return _ratio(num, den)


def energy_norm_error(a: ArrayLike, pred: ArrayLike, ref: ArrayLike) -> NDArray[np.float64]:
    """Per-sample relative error in the energy norm of ``-div(a grad u)`` (Darcy).

    Parameters
    ----------
    a, pred, ref : (n_samples, n, n) arrays on the node grid
        Nodal coefficient and the two solutions.

    Returns
    -------
    (n_samples,) float64 array ``||pred - ref||_a / ||ref||_a`` (NaN where ``||ref||_a = 0``).
    """
    from solvers.darcy import energy_norm

    p, r = _pair(pred, ref)
    num = energy_norm(a, p - r) ** 2
    den = energy_norm(a, r) ** 2
    return _ratio(num, den)


def summarize(values: Sequence[float] | NDArray[np.float64]) -> dict[str, float]:
    """Mean, median, 95th percentile and maximum of the finite per-sample values.

    Non-finite entries (NaN: undefined errors) are left out; with none left every statistic
    is NaN.
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    v = v[np.isfinite(v)]
    if v.size == 0:
        return dict.fromkeys(STATISTICS, float("nan"))
    return {
        "mean": float(v.mean()),
        "median": float(np.median(v)),
        "p95": float(np.percentile(v, 95)),
        "max": float(v.max()),
    }


def worse_than_zero_note(mean_rel_l2: float, *, who: str = "the model") -> str | None:
    """A sentence to print beside a mean relative L2 error above 1, else None.

    A relative error above 1 means the prediction is farther from the truth than the zero
    function is: the model has not learnt the map (untrained, diverged, or used far from its
    training data).
    """
    if not np.isfinite(mean_rel_l2) or mean_rel_l2 <= 1.0:
        return None
    return (f"Warning: {who} has a mean relative L2 error of {mean_rel_l2:.3g} > 1, worse than "
            "predicting zero everywhere: it has not learnt this map (too little training, a "
            "diverged run, or inputs unlike its training data).")
