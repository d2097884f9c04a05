"""Noise conventions and coefficient error metrics of the Darcy inverse problem (numpy only).

Re-exported by :mod:`solvers.darcy_inverse`, where the conventions are described.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._darcy_adjoint import average_pool_nodes
from .checks import is_int, is_real, plain
from .contract import check_finite, ordered_values
from .errors import InputError, ShapeError

__all__ = [
    "NOISE_HINT",
    "add_noise",
    "admissible_start",
    "check_noise_level",
    "coefficient_errors",
    "paper_noise_to_relative",
    "pool_coefficient",
]

Array = NDArray[np.float64]
#: The relative noise level is a fraction: ``noise_level`` must lie in [0, 1).
NOISE_HINT = "a fraction ||noise|| / ||u||, e.g. 0.05 for 5 %"


def check_noise_level(value: Any, *, name: str = "noise_level") -> float:
    """A relative noise level as a float in [0, 1), else an InputError that says why.

    Refuses bools and values >= 1 (a level given in percent, ``5`` for 5 %, is the usual
    slip: the level is ``||noise|| / ||u||``, so 5 % is ``0.05``).
    """
    if not is_real(value) or not np.isfinite(value) or not 0.0 <= value < 1.0:
        msg = (f"`{name}` must be a relative noise level in [0, 1) ({NOISE_HINT}); "
               f"got {plain(value)}.")
        raise InputError(msg)
    return float(value)


def admissible_start(a: ArrayLike, *, bounds: tuple[float, float] | None = None,
                     floor_ratio: float = 0.1) -> Array:
    """A coefficient made usable as ``initial_guess``, e.g. a surrogate's prediction.

    A surrogate's coefficient can dip to 0 or below where it is unsure (a briefly trained
    model, an observation unlike its training data); the inversion needs ``a > 0`` (it works
    on ``log a``). Values below a floor are raised to it: with ``bounds`` the result is
    clipped into them, else the floor is ``floor_ratio`` times the median of the sample's
    positive values (a start far below the rest sends the first L-BFGS-B step to the edge of
    its safeguard box: measured, a floor of 1e-6 left a 141 x 141 inversion stuck at relative
    misfit 0.97). Nothing else changes.

    Parameters
    ----------
    a : (n_samples, n, n) or (n, n) array, or DataArray
        Finite coefficient on the observation grid.
    bounds : (lower, upper) or None
        The inversion's ``bounds``.
    floor_ratio
        In (0, 1].

    Returns
    -------
    Array of the shape of ``a``, > 0 (within ``bounds`` when given).

    Examples
    --------
    >>> admissible_start(np.array([[-1.0, 4.0], [8.0, 12.0]])).tolist()
    [[0.8, 4.0], [8.0, 12.0]]
    """
    arr = ordered_values(a, core_dims=("x", "y"), name="a")  # a DataArray by dim name
    if arr.dtype.kind not in "fiu" or arr.ndim not in (2, 3):
        msg = f"`a` must be a real (n, n) or (n_samples, n, n) array; got {arr.dtype} {arr.shape}."
        raise InputError(msg)
    check_finite(arr, name="a")
    if not is_real(floor_ratio) or not 0 < floor_ratio <= 1:
        msg = f"`floor_ratio` must lie in (0, 1]; got {plain(floor_ratio)}."
        raise InputError(msg)
    batch = arr.astype(np.float64).reshape(-1, *arr.shape[-2:])
    if bounds is not None:
        ok = isinstance(bounds, tuple | list) and len(bounds) == 2 and all(
            is_real(v) and np.isfinite(v) for v in bounds)
        if not ok or not 0 < bounds[0] < bounds[1]:
            msg = ("`bounds` must be None or (lower, upper) with 0 < lower < upper; "
                   f"got {plain(bounds)}.")
            raise InputError(msg)
        low, high = float(bounds[0]), float(bounds[1])
        out = np.clip(batch, low * (1 + 1e-9), high * (1 - 1e-9))
        return out.reshape(arr.shape)
    out = np.empty_like(batch)
    for k, values in enumerate(batch):
        positive = values[values > 0]
        if positive.size == 0:
            msg = (f"`a` must have positive values to start from; sample {k} has none "
                   f"(maximum {values.max():.3g}).")
            raise InputError(msg)
        out[k] = np.maximum(values, float(floor_ratio) * float(np.median(positive)))
    return out.reshape(arr.shape)




def _number(value: Any, *, name: str, fraction: bool = False) -> float:
    """A finite real >= 0 (Python or numpy, not a bool); with ``fraction`` also < 1."""
    if not is_real(value) or not np.isfinite(value) or value < 0 or (fraction and value >= 1):
        if fraction:
            msg = (f"`{name}` must be a noise factor in [0, 1), a fraction (0.01 for 1 %, not "
                   f"1); got {plain(value)}.")
        else:
            msg = f"`{name}` must be a finite number >= 0; got {plain(value)}."
        raise InputError(msg)
    return float(value)


def _fields(values: Any, *, name: str) -> Array:
    arr = ordered_values(values, core_dims=("x", "y"), name=name)  # a DataArray by dim name
    if arr.dtype.kind not in "fiu" or arr.ndim not in (2, 3) or arr.shape[-1] != arr.shape[-2]:
        msg = (f"`{name}` must be a real array of shape (n_samples, n, n) or (n, n); got "
               f"{arr.dtype} array of shape {arr.shape}.")
        raise ShapeError(msg)
    check_finite(arr, name=name)
    return arr.astype(np.float64)


def paper_noise_to_relative(
    epsilon: float, solutions: ArrayLike, *, observed: ArrayLike | None = None,
    std_offset: float = 1e-5,
) -> float | Array:
    """Relative noise level of the paper's pointwise noise ``epsilon (sigma(x) + c) N(0, 1)``.

    Cao (2021) perturbs the (normalised) inverse-problem input, which amounts to adding
    ``epsilon * (sigma(x) + c) * z(x)``, ``z`` i.i.d. standard normal, to the solution, where
    ``sigma`` is the pointwise population standard deviation (ddof 0) of the training
    solutions and ``c = 1e-5`` the normaliser's offset. Its expected squared norm over the
    interior nodes is ``epsilon^2 ||sigma + c||^2``, so the relative level is

    ``level = epsilon * ||sigma + c|| / ||u||`` (interior nodes).

    Parameters
    ----------
    epsilon
        The paper's noise factor (0, 0.01, 0.1), >= 0.
    solutions : (n_samples, n, n) or (n, n) array
        Training solutions (``sigma`` is their pointwise std over samples), or the
        pointwise std field ``sigma`` itself.
    observed : (k, n, n) or (n, n) array, or None
        Solutions whose per-sample level is wanted (the clean solutions, or the noisy
        observations, which overstate ``||u||`` by ``sqrt(1 + level^2)``: 0.5 % at 10 %).
    std_offset
        ``c`` (0 for the plain ``epsilon * sigma`` convention).

    Returns
    -------
    float or (k,) array
        Without ``observed``: the dataset-averaged level
        ``epsilon * rms(sigma + c) / rms(u)`` with both root mean squares over the interior
        nodes (and the training samples). With ``observed``: one level per observed sample
        (a (n, n) ``observed`` gives a float).
    """
    eps = _number(epsilon, name="epsilon", fraction=True)
    offset = _number(std_offset, name="std_offset")
    sol = _fields(solutions, name="solutions")
    if sol.ndim == 3 and len(sol) < 2:
        msg = f"`solutions` must hold >= 2 samples to estimate a std; got shape {sol.shape}."
        raise ShapeError(msg)
    sigma = (sol.std(axis=0) if sol.ndim == 3 else sol)[1:-1, 1:-1] + offset
    if observed is None:
        if sol.ndim == 2:
            msg = ("`observed` must be given when `solutions` is a std field (n, n): the "
                   "relative level needs ||u||; got None.")
            raise InputError(msg)
        return eps * float(np.sqrt(np.mean(sigma**2) / np.mean(sol[:, 1:-1, 1:-1] ** 2)))
    obs = _fields(observed, name="observed")
    if obs.shape[-1] != sigma.shape[-1] + 2:
        msg = f"`observed` must be on the grid of `solutions` ({sol.shape[-1]}); got {obs.shape}."
        raise ShapeError(msg)
    norms = np.linalg.norm(obs[..., 1:-1, 1:-1], axis=(-2, -1))
    if not np.all(norms > 0):
        msg = "`observed` must not be identically 0 on the interior nodes."
        raise InputError(msg)
    # numpy's pairwise sum, not the BLAS dot of a flat norm: the same level at any BLAS
    # thread count (a threaded dot splits the sum by thread).
    levels = eps * float(np.sqrt(np.sum(np.square(sigma)))) / norms
    return float(levels) if obs.ndim == 2 else levels


def add_noise(
    u: ArrayLike, level: float, *, rng: np.random.Generator, std_field: ArrayLike | None = None
) -> Array:
    """Add Gaussian noise to the interior nodes of solutions (boundary values unchanged).

    Parameters
    ----------
    u : (n_samples, n, n) or (n, n) array, or DataArray
        Clean solutions (a DataArray read by its dim names, ``(sample, x, y)`` in any
        spatial order; the result is in that order).
    level
        Without ``std_field``: the relative level; each sample gets
        ``level * ||u_k|| / sqrt(N) * z`` (``N`` interior nodes), so ``E||eta||^2 =
        level^2 ||u_k||^2``. With ``std_field``: the paper's ``epsilon``; the noise is
        ``epsilon * std_field(x) * z`` (pass ``sigma + 1e-5`` to match Cao 2021).
    rng
        Source of ``z ~ N(0, 1)``, i.i.d. over nodes and samples.
    std_field : (n, n) array or None
        Pointwise noise scale of the paper's convention.

    Returns
    -------
    Array of the shape of ``u`` (of a DataArray: ``(sample, x, y)``).
    """
    lev = _number(level, name="level", fraction=True)
    arr = _fields(u, name="u")
    if not isinstance(rng, np.random.Generator):
        msg = f"`rng` must be a numpy.random.Generator; got {type(rng).__name__}."
        raise InputError(msg)
    batch = arr[None] if arr.ndim == 2 else arr
    z = rng.standard_normal(batch[:, 1:-1, 1:-1].shape)
    if std_field is None:
        inner = batch[:, 1:-1, 1:-1]
        scale = lev * np.sqrt(np.mean(inner**2, axis=(1, 2)))[:, None, None]
    else:
        std = _fields(std_field, name="std_field")
        if std.shape != batch.shape[1:]:
            msg = f"`std_field` must have shape {batch.shape[1:]}; got {std.shape}."
            raise ShapeError(msg)
        scale = lev * std[1:-1, 1:-1]
    out = batch.copy()
    out[:, 1:-1, 1:-1] += scale * z
    return out[0] if arr.ndim == 2 else out


def _nodal(a: ArrayLike, *, name: str) -> Array:
    """``a`` as float64 ``(n_samples, n, n)`` (one ``(n, n)`` field as one sample), a
    DataArray read by its dim names."""
    arr = ordered_values(a, core_dims=("x", "y"), name=name).astype(np.float64)
    return arr[None] if arr.ndim == 2 else arr


def pool_coefficient(a: ArrayLike, *, factor: int) -> Array:
    """Average-pool a node-grid field: ``n -> (n - 1) / factor + 1`` nodes.

    Coarse node ``(I, J)`` at fine node ``(factor I, factor J)`` gets the mean of the fine
    nodes within ``factor // 2`` of it along each axis (centred window, NaN-padded outside
    the domain, nanmean): the rule that builds the inverse-problem targets (141 -> 36 with
    factor 4, 85 -> 22 with factor 4, and 421 -> 141 with factor 3).

    Parameters
    ----------
    a : (..., n, n) array with ``(n - 1) % factor == 0``.
    factor : int >= 1
    """
    arr = ordered_values(a, core_dims=("x", "y"), name="a").astype(np.float64)
    n = arr.shape[-1]
    if not is_int(factor) or factor < 1 or (n - 1) % factor:
        msg = f"`factor` must be an int >= 1 dividing n - 1 = {n - 1}; got {plain(factor)}."
        raise InputError(msg)
    return average_pool_nodes(arr, factor=int(factor))


def coefficient_errors(
    a_est: ArrayLike, a_true: ArrayLike, *, pool: int = 4, threshold: float = 7.5,
    a_true_coarse: ArrayLike | None = None,
) -> dict[str, Array]:
    """Per-sample error metrics of an estimated coefficient.

    Parameters
    ----------
    a_est, a_true : (n_samples, n, n) or (n, n) arrays
        Estimate and truth on the same node grid.
    pool
        Pooling factor to the coarse grid (:func:`pool_coefficient`).
    threshold
        Phase threshold (7.5, the midpoint of 3 and 12).
    a_true_coarse : array or None
        Coarse truth to compare with instead of ``pool_coefficient(a_true)`` (e.g. the
        targets pooled from the 421 grid).

    Returns
    -------
    dict of (n_samples,) arrays
        ``"fine"``: ``||a_est - a_true|| / ||a_true||`` on the grid; ``"coarse"``: the same
        after pooling; ``"misclassified"``: fraction of nodes where ``a_est > threshold``
        differs from ``a_true > threshold``.
    """
    est = _nodal(a_est, name="a_est")
    true = _nodal(a_true, name="a_true")
    if est.shape != true.shape:
        msg = f"`a_est` must have the shape of `a_true` {true.shape}; got {est.shape}."
        raise ShapeError(msg)

    def rel(x: Array, y: Array) -> Array:
        return np.linalg.norm(x - y, axis=(1, 2)) / np.linalg.norm(y, axis=(1, 2))

    coarse_true = pool_coefficient(true, factor=pool) if a_true_coarse is None else (
        _nodal(a_true_coarse, name="a_true_coarse"))
    return {
        "fine": rel(est, true),
        "coarse": rel(pool_coefficient(est, factor=pool), coarse_true),
        "misclassified": np.mean((est > threshold) != (true > threshold), axis=(1, 2)),
    }
