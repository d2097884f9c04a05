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

PDEBench's metrics (Takamoto et al. 2022, ``pdebench/models/metrics.py``), so our numbers sit
beside their tables. Our relative L2 *is* their nRMSE: ``RMSE(p - r) / RMSE(r)`` is
``||p - r|| / ||r||`` (the mean over grid points cancels), averaged over samples as they do.

* :func:`rmse`: :math:`\sqrt{\mathrm{mean}_j (p_{ij} - r_{ij})^2}` per sample (their RMSE is
  the mean over samples);
* :func:`max_error`: :math:`\max_j |p_{ij} - r_{ij}|` per sample (their "max" is the maximum
  over samples);
* :func:`boundary_rmse`: the RMSE over the boundary points: the two end points in 1D; in 2D the
  four edges, each edge's points counted once per edge, divided by ``2 nx + 2 ny`` (their bRMSE);
* :func:`fourier_error_spectrum` and :func:`fourier_band_rmse`: their fRMSE, the error per
  wavenumber shell (1D: ``rfft`` bins ``k = 0..n/2``; 2D: ``fftn`` coefficients with
  ``0 <= i, j < n/2`` summed into shells ``floor(sqrt(i^2 + j^2)) < n/2``), root mean square over
  samples, scaled by the domain size over the number of points, then averaged over the bands
  low ``k < 4``, mid ``4 <= k < 12``, high ``k >= 12``;
* :func:`peer_metrics`: all of them over a set of samples, as one dict.

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

from solvers.darcy import energy_norm

from .errors import ShapeError

__all__ = [
    "FOURIER_BANDS",
    "STATISTICS",
    "boundary_rmse",
    "fourier_band_rmse",
    "fourier_error_spectrum",
    "max_error",
    "peer_metrics",
    "rmse",
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


#: PDEBench's wavenumber bands: low ``k < 4``, mid ``4 <= k < 12``, high ``k >= 12``.
FOURIER_BANDS = (4, 12)


def rmse(pred: ArrayLike, ref: ArrayLike) -> NDArray[np.float64]:
    """Per-sample root mean square error over the grid points, shape ``(n_samples,)``."""
    p, r = _pair(pred, ref)
    return np.sqrt(np.square(p - r).reshape(len(r), -1).mean(axis=1))


def max_error(pred: ArrayLike, ref: ArrayLike) -> NDArray[np.float64]:
    """Per-sample maximum absolute error over the grid points, shape ``(n_samples,)``."""
    p, r = _pair(pred, ref)
    return np.abs(p - r).reshape(len(r), -1).max(axis=1)


def boundary_rmse(pred: ArrayLike, ref: ArrayLike) -> NDArray[np.float64]:
    """Per-sample RMSE on the boundary points (PDEBench's bRMSE), shape ``(n_samples,)``.

    1D ``(n_samples, n)``: the first and last points. 2D ``(n_samples, nx, ny)``: the four
    edges, summed edge by edge (the corners twice) and divided by ``2 nx + 2 ny``.
    """
    p, r = _pair(pred, ref)
    e2 = np.square(p - r)
    if e2.ndim == 2:
        return np.sqrt((e2[:, 0] + e2[:, -1]) / 2.0)
    if e2.ndim != 3:
        msg = f"`pred` must be 1-D or 2-D samples; got shape {p.shape}."
        raise ShapeError(msg)
    nx, ny = e2.shape[1:]
    edges = (e2[:, 0, :].sum(axis=1) + e2[:, -1, :].sum(axis=1) + e2[:, :, 0].sum(axis=1)
             + e2[:, :, -1].sum(axis=1))
    return np.sqrt(edges / (2 * nx + 2 * ny))


def fourier_error_spectrum(pred: ArrayLike, ref: ArrayLike) -> NDArray[np.float64]:
    """Per-sample squared Fourier error per wavenumber shell (PDEBench's fRMSE, before the mean).

    Parameters
    ----------
    pred, ref : (n_samples, n) or (n_samples, nx, ny) arrays

    Returns
    -------
    (n_samples, n_shells) float64 array
        1D: ``|rfft(p - r)_k|^2`` for ``k = 0..n//2``. 2D: the sum of ``|fft2(p - r)_ij|^2``
        over ``0 <= i < nx//2``, ``0 <= j < ny//2`` with ``floor(sqrt(i^2 + j^2)) = k``, for
        ``k < min(nx, ny)//2``.
    """
    p, r = _pair(pred, ref)
    if p.ndim == 2:
        return np.abs(np.fft.rfft(p - r, axis=1)) ** 2
    if p.ndim != 3:
        msg = f"`pred` must be 1-D or 2-D samples; got shape {p.shape}."
        raise ShapeError(msg)
    nx, ny = p.shape[1:]
    power = np.abs(np.fft.fft2(p - r, axes=(1, 2))) ** 2
    shells = min(nx // 2, ny // 2)
    i, j = np.meshgrid(np.arange(nx // 2), np.arange(ny // 2), indexing="ij")
    k = np.floor(np.sqrt(i**2 + j**2)).astype(np.int64)
    keep = k < shells
    out = np.zeros((len(p), shells))
    for shell in range(shells):
        mask = keep & (k == shell)
        out[:, shell] = power[:, : nx // 2, : ny // 2][:, mask].sum(axis=1)
    return out


def fourier_band_rmse(spectra: ArrayLike, grid: tuple[int, ...], *,
                      lengths: float | tuple[float, ...] = 1.0,
                      bands: tuple[int, int] = FOURIER_BANDS) -> dict[str, float]:
    """PDEBench's fRMSE in the low, mid and high bands from per-sample spectra.

    Parameters
    ----------
    spectra : (n_samples, n_shells) array
        :func:`fourier_error_spectrum` of the samples (concatenated over batches).
    grid : tuple of int
        The grid shape, ``(n,)`` or ``(nx, ny)``.
    lengths : float or tuple of float
        Domain length along each axis (1 on the unit interval and square).
    bands : (int, int)
        Shell indices where the mid and the high band start.

    Returns
    -------
    dict
        ``{"low", "mid", "high"}``: the mean over the band's shells of
        ``sqrt(mean over samples) / prod(grid) * prod(lengths)`` (NaN for an empty band).
    """
    s = np.asarray(spectra, dtype=np.float64)
    scale = float(np.prod(np.broadcast_to(lengths, (len(grid),)))) / float(np.prod(grid))
    per_shell = np.sqrt(s.mean(axis=0)) * scale
    lo, hi = bands
    out = {}
    for name, part in (("low", per_shell[:lo]), ("mid", per_shell[lo:hi]),
                       ("high", per_shell[hi:])):
        out[name] = float(part.mean()) if part.size else float("nan")
    return out


def peer_metrics(pred: ArrayLike, ref: ArrayLike) -> dict[str, float]:
    """PDEBench's metrics of a set of samples on the unit interval or square.

    Returns ``{"rmse", "nrmse", "max_error", "boundary_rmse", "frmse_low", "frmse_mid",
    "frmse_high"}``: the means over samples of :func:`rmse`, :func:`relative_l2` (= their
    nRMSE) and :func:`boundary_rmse`, the maximum of :func:`max_error` over samples, and
    :func:`fourier_band_rmse`.
    """
    p, r = _pair(pred, ref)
    bands = fourier_band_rmse(fourier_error_spectrum(p, r), p.shape[1:])
    return {
        "rmse": float(np.mean(rmse(p, r))),
        "nrmse": float(np.nanmean(relative_l2(p, r))),
        "max_error": float(np.max(max_error(p, r))),
        "boundary_rmse": float(np.mean(boundary_rmse(p, r))),
        **{f"frmse_{k}": v for k, v in bands.items()},
    }
