r"""Exact solutions used by tests, docs and benchmarks (Burgers part).

* :func:`burgers_exact` -- the Cole-Hopf solution of periodic viscous Burgers for arbitrary
  periodic initial data, evaluated stably for small viscosity.
* :func:`burgers_closed_form` -- a closed-form Burgers solution (no quadrature), used to
  check :func:`burgers_exact` and the solvers.

The Darcy manufactured solutions live in :mod:`solvers.exact_darcy`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .checks import plain
from .contract import check_finite, check_positive
from .errors import InputError, ShapeError

__all__ = [
    "QuadraticDarcyProblem",
    "SmoothDarcyProblem",
    "burgers_closed_form",
    "burgers_exact",
    "node_grid",
]

_LOG_EPS = 40.0  # terms below exp(-40) ~ 4e-18 of the largest are negligible in float64
_ROW_CHUNK = 256


def burgers_closed_form(
    x: ArrayLike,
    t: float,
    *,
    viscosity: float,
    c: float = 2.0,
    wavenumber: int = 1,
    mean: float = 0.0,
) -> NDArray[np.float64]:
    r"""Closed-form solution of :math:`u_t + u u_x = \nu u_{xx}` on the periodic :math:`[0, 1)`.

    From the Cole-Hopf transform :math:`u = U - 2\nu\,\varphi_x/\varphi` with the heat solution
    :math:`\varphi = c + e^{-\nu \kappa^2 t}\cos(\kappa (x - U t))`, :math:`\kappa = 2\pi m`:

    .. math::

        u(x, t) = U + \frac{2\nu\kappa\, e^{-\nu\kappa^2 t}\sin(\kappa(x - Ut))}
                           {c + e^{-\nu\kappa^2 t}\cos(\kappa(x - Ut))}.

    Parameters
    ----------
    x
        Points in :math:`[0, 1)` (any shape).
    t
        Time, >= 0.
    viscosity
        :math:`\nu > 0`.
    c
        Offset, > 1 so that :math:`\varphi > 0`.
    wavenumber
        Integer :math:`m \ge 1`.
    mean
        Spatial mean :math:`U` (a Galilean shift).

    Returns
    -------
    float64 array of the shape of ``x``.
    """
    nu = check_positive(viscosity, name="viscosity")
    if not c > 1:
        msg = f"`c` must be > 1 so that phi > 0; got {plain(c)}."
        raise InputError(msg)
    kappa = 2 * np.pi * int(wavenumber)
    xs = np.asarray(x, dtype=np.float64) - mean * t
    decay = np.exp(-nu * kappa**2 * t)
    return mean + 2 * nu * kappa * decay * np.sin(kappa * xs) / (c + decay * np.cos(kappa * xs))


def _interpolate(v: NDArray[np.float64], n_quad: int) -> tuple[NDArray, NDArray]:
    """Trigonometric interpolant of ``v`` (n,) and its zero-mean antiderivative on n_quad points."""
    n = v.shape[-1]
    vh = np.fft.rfft(v) / n
    if n % 2 == 0:
        vh[n // 2] *= 0.5  # the Nyquist mode of the interpolant is the cosine, split in two
    pad = np.zeros(n_quad // 2 + 1, dtype=np.complex128)
    pad[: vh.size] = vh
    k = np.arange(pad.size)
    anti = np.zeros_like(pad)
    anti[1:] = pad[1:] / (2j * np.pi * k[1:])
    vq = np.fft.irfft(pad, n=n_quad, norm="forward")
    uq = np.fft.irfft(anti, n=n_quad, norm="forward")
    return vq, uq


def _log_heat_kernel(d: NDArray[np.float64], nu_t: float) -> NDArray[np.float64]:
    r"""log of the periodic heat kernel (up to a constant) :math:`\sum_m e^{-(d+m)^2/(4\nu t)}`."""
    d = np.mod(d, 1.0)
    n_img = int(np.ceil(np.sqrt(4 * nu_t * _LOG_EPS))) + 1
    m = np.arange(-n_img - 1, n_img + 1)
    e = -((d[:, None] + m[None, :]) ** 2) / (4 * nu_t)
    emax = e.max(axis=1)
    with np.errstate(under="ignore"):
        return emax + np.log(np.exp(e - emax[:, None]).sum(axis=1))


def _check_times(times: ArrayLike) -> tuple[NDArray[np.float64], bool]:
    t = np.asarray(times, dtype=np.float64)
    scalar = t.ndim == 0
    t = np.atleast_1d(t)
    if t.ndim != 1 or not np.isfinite(t).all() or (t < 0).any():
        msg = f"`times` must be a finite time >= 0 or a 1-D array of them; got {plain(times)}."
        raise InputError(msg)
    return t, scalar


def burgers_exact(
    u0: ArrayLike,
    *,
    viscosity: float,
    times: ArrayLike,
    n_quad: int | None = None,
) -> NDArray[np.float64]:
    r"""Exact solution of periodic viscous Burgers for arbitrary initial data (Cole-Hopf).

    Solves :math:`u_t + u u_x = \nu u_{xx}` on :math:`[0, 1)` with periodic conditions,
    where :math:`u_0` is given on the grid :math:`x_i = i/n` and taken to be its
    trigonometric interpolant. With the mean :math:`\bar u` removed,
    :math:`v_0 = u_0 - \bar u`, :math:`V(y) = \int_0^y v_0`, and the Galilean shift
    :math:`u(x, t) = \bar u + v(x - \bar u t, t)`, the Cole-Hopf formula reads

    .. math::

        v(x, t) = \frac{\int_0^1 K_t(x - y)\, e^{-V(y)/(2\nu)}\, v_0(y)\,dy}
                       {\int_0^1 K_t(x - y)\, e^{-V(y)/(2\nu)}\,dy},\qquad
        K_t(d) = \sum_{m \in \mathbb Z} e^{-(d + m)^2/(4\nu t)}

    (the numerator is :math:`-2\nu\varphi_x` after an integration by parts). Both integrals
    are evaluated by the trapezoid rule on ``n_quad`` points (spectrally accurate: the
    integrands are smooth and periodic) *in log space*: the weights
    :math:`\exp(\log K_t(x - y_j) - V(y_j)/(2\nu) - M(x))` are shifted by their maximum
    :math:`M(x)` for each ``x``, so nothing overflows and no relative precision is lost where
    :math:`\varphi` is tiny (FFT evaluations of :math:`\varphi` do both for
    :math:`\nu \lesssim 0.003`). Cost: :math:`O(n \cdot n_{quad})` per sample and time.

    Parameters
    ----------
    u0 : (n,) or (n_samples, n) float array
        Initial values on :math:`x_i = i/n`; finite.
    viscosity
        :math:`\nu > 0`.
    times
        A time >= 0 or a 1-D array of them. At ``t = 0`` the input is returned.
    n_quad
        Quadrature points, a multiple of ``n``; default the smallest multiple of ``n``
        that is >= 2048 (at n = 8192 doubling it changes the benchmark result by < 1e-14).
        The kernel must be resolved, roughly ``n_quad * sqrt(2 nu t) >= 8`` for full accuracy.

    Returns
    -------
    float64 array: ``u0.shape`` for a scalar time, else ``(n_samples, n_times, n)``
    (``(n_times, n)`` for 1-D ``u0``).

    Notes
    -----
    Accuracy: ~1e-13 relative on the benchmark data (GRF, :math:`\nu = 0.1/(2\pi)` and 0.1,
    t = 1); checked against :func:`burgers_closed_form` in the tests.
    """
    nu = check_positive(viscosity, name="viscosity")
    arr = np.asarray(u0)
    if arr.dtype.kind != "f":
        msg = f"`u0` must be a real floating-point array; got dtype {arr.dtype}."
        raise InputError(msg)
    if arr.ndim not in (1, 2) or arr.shape[-1] < 2:
        msg = f"`u0` must have shape (n,) or (n_samples, n) with n >= 2; got {arr.shape}."
        raise ShapeError(msg)
    check_finite(arr, name="u0")
    t_arr, scalar_t = _check_times(times)
    batch = np.atleast_2d(arr).astype(np.float64)
    n = batch.shape[-1]
    if n_quad is None:
        n_quad = n * int(np.ceil(2048 / n))
    if n_quad < n or n_quad % n:
        msg = f"`n_quad` must be a positive multiple of n={n}; got {plain(n_quad)}."
        raise InputError(msg)
    r = n_quad // n
    out = np.empty((batch.shape[0], t_arr.size, n))
    for s, u_s in enumerate(batch):
        mean = u_s.mean()
        vq, vint = _interpolate(u_s - mean, n_quad)
        log_phi0 = -vint / (2 * nu)
        for it, t in enumerate(t_arr):
            if t == 0:
                out[s, it] = u_s
                continue
            # Targets x_i - mean*t: the offsets x_i - mean*t - y_j = (i r - j)/n_quad + delta take
            # n_quad distinct values, so the log-kernel is evaluated once and gathered.
            delta = -mean * t
            log_k = _log_heat_kernel(np.arange(n_quad) / n_quad + delta, nu * t)
            cols = np.arange(n_quad)
            for lo in range(0, n, _ROW_CHUNK):
                rows = np.arange(lo, min(lo + _ROW_CHUNK, n)) * r
                e = log_k[(rows[:, None] - cols[None, :]) % n_quad]
                e += log_phi0
                e -= e.max(axis=1, keepdims=True)
                with np.errstate(under="ignore"):
                    w = np.exp(e)
                out[s, it, lo : lo + rows.size] = mean + (w @ vq) / w.sum(axis=1)
    if arr.ndim == 1:
        out = out[0]
    if scalar_t:
        out = out[..., 0, :]
    return out

# Darcy manufactured solutions live in their own module; re-exported here so that every
# exact solution is found in one place.
from .exact_darcy import QuadraticDarcyProblem, SmoothDarcyProblem, node_grid  # noqa: E402
