"""Input checks of the Darcy inversion (private; the messages name the argument, the value
received and what was expected)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._inverse_noise import NOISE_HINT
from .checks import check_int, check_real, is_real, plain
from .contract import check_finite, ordered_values
from .errors import InputError, ShapeError

__all__ = ["MAGNITUDE", "MAX_MEMORY", "check_coefficient", "check_noise_levels",
           "check_observations", "count", "is_real", "real", "wrong_sign_note"]

Array = NDArray[np.float64]

#: Magnitudes the inversion accepts: observations, coefficients (starts, bounds), the forcing
#: and the coefficient scale ``|f| / max|u_obs|`` the data imply lie within [1 / MAGNITUDE,
#: MAGNITUDE]. Beyond, products in the solves (the adjoint state scales like ``u / a^2``, the
#: CG inner products like its square) under- or overflow in float64: observations at 1e-97
#: ended in a division by zero inside CG.
MAGNITUDE = 1e50
#: Most L-BFGS-B correction pairs (``memory``): scipy allocates ``(2 m + 5) n + 11 m^2``
#: floats up front (``m = 10**9`` overflows its size check), and pairs beyond the iterations
#: done are never used (defaults: 30 pairs, 40 iterations).
MAX_MEMORY = 1000
#: The sign test of :func:`wrong_sign_note`: noise of relative level ``L`` puts about
#: ``L / 5`` of the interior norm on the wrong side of 0 (measured: 0.01 at 0.1, 0.06 at 0.3),
#: so a share above ``max(SIGN_SLACK, L / 2)`` is more than noise explains.
SIGN_SLACK = 0.02


def real(value: Any, *, name: str, low: float = 0.0, strict: bool = True) -> float:
    """``value`` as a finite float > low (>= low when not strict), else InputError."""
    return check_real(value, name=name, low=low, low_open=strict)


def count(value: Any, *, name: str, low: int) -> int:
    """``value`` as an int >= low (Python or numpy integer, not a bool), else InputError."""
    return check_int(value, name=name, minimum=low)


def check_observations(values: Array, *, forcing: float) -> None:
    """Refuse observations no coefficient can produce: zero, wrong sign, extreme magnitude."""
    inner = values[:, 1:-1, 1:-1].reshape(len(values), -1)
    zero = ~np.any(inner, axis=1)
    if zero.any():
        msg = (f"`u_obs` must not be identically 0 on the interior nodes (no information "
               f"about a); got zero data in sample {int(np.argmax(zero))}.")
        raise InputError(msg)
    peak = np.abs(inner).max(axis=1)
    scale = abs(forcing) / peak  # the coefficient scale the data imply
    bad = (peak < 1 / MAGNITUDE) | (peak > MAGNITUDE) | (scale < 1 / MAGNITUDE) | (
        scale > MAGNITUDE)
    if bad.any():
        k = int(np.argmax(bad))
        msg = (f"`u_obs` must have magnitudes within [1e-50, 1e50], and so must the "
               f"coefficient scale |forcing| / max|u_obs| = {scale[k]:.3g} they imply; got "
               f"max|u_obs| = {peak[k]:.3g} in sample {k} (forcing {forcing:g}). "
               f"Rescale the data (the problem is linear in f: scaling u_obs and forcing "
               f"together leaves a unchanged).")
        raise InputError(msg)
    mean = np.sign(forcing) * inner.mean(axis=1)
    if (mean <= 0).any():
        k = int(np.argmax(mean <= 0))
        sign = "positive" if forcing > 0 else "negative"
        msg = (f"`u_obs` must have the sign of the forcing: with forcing {forcing:g} "
               f"the solution is {sign} inside (maximum principle), but sample {k} has "
               f"mean {inner[k].mean():.3g} over the interior nodes. Check the sign of the "
               f"data, or pass the forcing that produced them.")
        raise InputError(msg)


def wrong_sign_note(values: Array, *, forcing: float, noise_levels: Array,
                    name: str = "u_obs") -> str | None:
    """Why observations look sign-flipped in part, or None.

    The solution of a forcing of one sign has that sign inside (maximum principle). For each
    sample the share ``||min(sign(f) u, 0)|| / ||u||`` over the interior nodes is compared
    with what its noise level explains (:data:`SIGN_SLACK`); a wholly flipped sample is
    refused by :func:`check_observations`, a partly flipped one is only suspicious (the
    inversion still fits it, confidently and wrongly).

    Parameters
    ----------
    values : (n_samples, n, n) array
        Observations on the node grid.
    forcing
        The forcing ``f`` the observations are said to come from.
    noise_levels : (n_samples,) array
        Relative noise level of each sample.
    name
        The observations' name in the message.
    """
    inner = np.sign(forcing) * values[:, 1:-1, 1:-1].reshape(len(values), -1)
    norms = np.linalg.norm(inner, axis=1)
    share = np.linalg.norm(np.minimum(inner, 0.0), axis=1) / np.where(norms > 0, norms, 1.0)
    bad = share > np.maximum(SIGN_SLACK, 0.5 * np.asarray(noise_levels, dtype=np.float64))
    if not bad.any():
        return None
    k = int(np.argmax(bad))
    sign = "positive" if forcing > 0 else "negative"
    return (f"`{name}` looks sign-flipped: with forcing {forcing:g} the solution is "
            f"{sign} inside (maximum principle), but {share[k]:.1%} of the interior norm of "
            f"sample {k} has the other sign, more than its noise level {noise_levels[k]:g} "
            f"explains ({int(bad.sum())} of {len(values)} samples like it). Check the sign of "
            "the data, or pass the forcing that produced them.")


def check_coefficient(a: Any, *, want: tuple[int, ...], name: str,
                      bounds: tuple[float, float] | None) -> Array:
    """``a`` (a start or an objective's argument) as float64 of shape ``want``, > 0, within
    the magnitudes and (for ``initial_guess``) the bounds."""
    arr = ordered_values(a, core_dims=("x", "y"), name=name)  # a DataArray by dim name
    if arr.dtype.kind not in "fiu":
        msg = f"`{name}` must be a real array; got dtype {arr.dtype}."
        raise InputError(msg)
    if arr.shape != tuple(want):
        msg = f"`{name}` must have shape {tuple(want)} to match `u_obs`; got {arr.shape}."
        raise ShapeError(msg)
    check_finite(arr, name=name)
    arr = arr.astype(np.float64)
    if (arr <= 0).any():
        hint = (" (a surrogate's coefficient can dip below 0: "
                "solvers.darcy_inverse.admissible_start raises it to a floor)"
                if name == "initial_guess" else "")
        msg = f"`{name}` must be > 0 everywhere; got minimum {plain(arr.min())}{hint}."
        raise InputError(msg)
    if arr.min() < 1 / MAGNITUDE or arr.max() > MAGNITUDE:
        msg = (f"`{name}` must have values within [1e-50, 1e50]; got values in "
               f"[{arr.min():.3g}, {arr.max():.3g}].")
        raise InputError(msg)
    if bounds is not None and name == "initial_guess":
        lo, hi = bounds
        if arr.min() < lo or arr.max() > hi:
            msg = (f"`initial_guess` must lie within `bounds` {bounds}; got values in "
                   f"[{arr.min():g}, {arr.max():g}].")
            raise InputError(msg)
    return arr


def check_noise_levels(noise_level: Any, n_samples: int, *, default: float) -> Array:
    """Per-sample relative noise levels in [0, 1) (None: ``default`` for every sample)."""
    if noise_level is None:
        return np.full(n_samples, default)
    raw = np.asarray(getattr(noise_level, "values", noise_level))
    if raw.dtype.kind not in "fiu":
        msg = (f"`noise_level` must be a number or an array of numbers ({NOISE_HINT}); "
               f"got {plain(noise_level)}.")
        raise InputError(msg)
    levels = raw.astype(np.float64)
    if levels.ndim == 0:
        levels = np.full(n_samples, float(levels))
    if levels.shape != (n_samples,):
        msg = (f"`noise_level` must be a number or have shape ({n_samples},), one per "
               f"sample; got shape {levels.shape}.")
        raise ShapeError(msg)
    if not np.all(np.isfinite(levels)) or (levels < 0).any() or (levels >= 1).any():
        msg = (f"`noise_level` must be relative noise levels in [0, 1) ({NOISE_HINT}); got "
               f"{levels.tolist()}.")
        raise InputError(msg)
    return levels
