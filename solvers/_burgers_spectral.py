r"""Numerics of the pseudo-spectral Burgers solver: ETDRK4 with contour-integral coefficients.

Semi-discretisation in Fourier space (rfft over the last axis of the whole batch):

.. math::

    \hat u_t = L \hat u + N(\hat u),\qquad L_k = -\nu (2\pi k)^2,\qquad
    N(\hat u)_k = -\tfrac{i 2\pi k}{2}\, P\,\mathcal F\!\left[(\mathcal F^{-1} P \hat u)^2\right]_k,

where :math:`P` keeps the modes :math:`k \le K = \lfloor (n-1)/3 \rfloor` (the 2/3 rule: the
product of two such fields aliases only onto modes above K). Modes above K evolve by the
exact linear decay. Time stepping: ETDRK4 of Cox & Matthews (4th order), with the
:math:`\varphi`-function coefficients computed by the contour integrals of Kassam &
Trefethen (no cancellation for small :math:`L_k h`).

References
----------
S. M. Cox and P. C. Matthews, J. Comput. Phys. 176 (2002) 430-455.
A.-K. Kassam and L. N. Trefethen, SIAM J. Sci. Comput. 26 (2005) 1214-1233.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import scipy.fft
from numpy.typing import NDArray

from .errors import ConvergenceError

_CONTOUR_RADIUS_SWITCH = 4.0


@dataclass(frozen=True)
class _Coefficients:
    e: NDArray[np.float64]
    e2: NDArray[np.float64]
    q: NDArray[np.float64]
    f1: NDArray[np.float64]
    f2: NDArray[np.float64]
    f3: NDArray[np.float64]


def etdrk4_coefficients(lin: NDArray[np.float64], h: float, *, n_contour: int) -> _Coefficients:
    r"""ETDRK4 coefficients for the diagonal real operator ``lin`` and step ``h``.

    The :math:`\varphi` functions are averaged over ``n_contour`` points of the upper half of
    the unit circle around each :math:`z = L h` (real part of the mean = the full-circle mean
    for real :math:`z`), which avoids the cancellation of the explicit formulas.
    """
    z = h * lin
    q = np.empty_like(z)
    f1, f2, f3 = np.empty_like(z), np.empty_like(z), np.empty_like(z)
    small = np.abs(z) < _CONTOUR_RADIUS_SWITCH
    theta = np.pi * (np.arange(1, n_contour + 1) - 0.5) / n_contour
    zr = z[small, None] + np.exp(1j * theta)[None, :]
    ez = np.exp(zr)
    ez2 = np.exp(zr / 2)
    z3 = zr**3
    q[small] = np.real(np.mean((ez2 - 1) / zr, axis=1))
    f1[small] = np.real(np.mean((-4 - zr + ez * (4 - 3 * zr + zr**2)) / z3, axis=1))
    f2[small] = np.real(np.mean((2 + zr + ez * (zr - 2)) / z3, axis=1))
    f3[small] = np.real(np.mean((-4 - 3 * zr - zr**2 + ez * (4 - zr)) / z3, axis=1))
    # |z| >= 4: the explicit formulas lose at most a factor ~10 to cancellation
    zb = z[~small]
    with np.errstate(under="ignore"):
        eb = np.exp(zb)
        eb2 = np.exp(zb / 2)
    q[~small] = (eb2 - 1) / zb
    f1[~small] = (-4 - zb + eb * (4 - 3 * zb + zb**2)) / zb**3
    f2[~small] = (2 + zb + eb * (zb - 2)) / zb**3
    f3[~small] = (-4 - 3 * zb - zb**2 + eb * (4 - zb)) / zb**3
    with np.errstate(under="ignore"):
        return _Coefficients(np.exp(z), np.exp(z / 2), h * q, h * f1, h * f2, h * f3)


@lru_cache(maxsize=256)
def _shared_coefficients(n: int, viscosity: float, h: float, n_contour: int) -> _Coefficients:
    """ETDRK4 coefficients of ``n`` points, shared between solves (they depend on the settings
    and the step only, not on the data: repeated small solves would otherwise spend half their
    time recomputing them)."""
    lin = -viscosity * (2 * np.pi * np.arange(n // 2 + 1)) ** 2
    c = etdrk4_coefficients(lin, h, n_contour=n_contour)
    for arr in (c.e, c.e2, c.q, c.f1, c.f2, c.f3):
        arr.setflags(write=False)
    return c


class SpectralStepper:
    """ETDRK4 stepper for a batch of periodic fields of ``n`` points (internal).

    The state is the rfft coefficients ``c_k = rfft(u)_k / n``. The nonlinear term of each
    step is evaluated with the smallest fast FFT length ``m <= n`` whose 2/3-rule band
    ``k <= (m-1)//3`` holds every mode above ``mode_tol`` times the largest one (with a
    1.5x margin for the modes the product creates); the modes above the band are at most
    ``mode_tol`` relative and evolve by their exact linear decay. With ``mode_tol = 0``
    every step uses ``m = n`` (the plain 2/3 rule).
    """

    def __init__(self, n: int, viscosity: float, *, n_contour: int, mode_tol: float) -> None:
        self.n = n
        self.k = np.arange(n // 2 + 1)
        self.cutoff = (n - 1) // 3
        ik = 2j * np.pi * self.k
        if n % 2 == 0:
            ik[-1] = 0.0  # the Nyquist mode has no real derivative (and is filtered anyway)
        self.half_ik = -0.5 * ik
        self.viscosity = viscosity
        self.lin = -viscosity * (2 * np.pi * self.k) ** 2
        self.n_contour = n_contour
        self.mode_tol = mode_tol
        self._cache: dict[float, _Coefficients] = {}
        self.fft_pairs = 0
        self.fft_points = 0  # sum of the FFT lengths used, for the FFT-floor estimate

    def band(self, ch: NDArray[np.complex128]) -> tuple[int, int]:
        """(FFT length m, band edge K) for the current state."""
        if self.mode_tol <= 0:
            return self.n, self.cutoff
        amp = np.abs(ch).max(axis=0)
        big = np.nonzero(amp > self.mode_tol * amp.max())[0]
        k_need = int(big[-1]) if big.size else 1
        m = min(self.n, scipy.fft.next_fast_len(int(np.ceil(4.5 * k_need)) + 1, real=True))
        return m, min((m - 1) // 3, self.cutoff)

    def nonlinear(self, ch: NDArray[np.complex128], m: int, kb: int) -> NDArray[np.complex128]:
        u = np.fft.irfft(ch[:, : kb + 1], n=m, axis=-1, norm="forward")
        self.fft_pairs += 1
        self.fft_points += m
        return self.half_ik[: kb + 1] * np.fft.rfft(u * u, axis=-1, norm="forward")[:, : kb + 1]

    def coefficients(self, h: float) -> _Coefficients:
        c = self._cache.get(h)
        if c is None:
            c = _shared_coefficients(self.n, self.viscosity, h, self.n_contour)
            self._cache[h] = c
        return c

    def step(self, ch: NDArray[np.complex128], h: float) -> NDArray[np.complex128]:
        """One ETDRK4 step of size ``h`` (Cox-Matthews form); returns the new coefficients."""
        c = self.coefficients(h)
        m, kb = self.band(ch)
        s = slice(0, kb + 1)
        v = ch[:, s]
        e, e2, q, f1, f2, f3 = c.e[s], c.e2[s], c.q[s], c.f1[s], c.f2[s], c.f3[s]
        nv = self.nonlinear(v, m, kb)
        a = e2 * v + q * nv
        na = self.nonlinear(a, m, kb)
        b = e2 * v + q * na
        nb = self.nonlinear(b, m, kb)
        cc = e2 * a + q * (2 * nb - nv)
        nc = self.nonlinear(cc, m, kb)
        out = np.empty_like(ch)
        out[:, s] = e * v + f1 * nv + 2 * f2 * (na + nb) + f3 * nc
        with np.errstate(under="ignore"):
            out[:, kb + 1 :] = c.e[kb + 1 :] * ch[:, kb + 1 :]
        return out


def graded_time_grid(
    final_time: float,
    *,
    dt: float,
    first_dt: float,
    growth: float,
    stops: NDArray[np.float64],
) -> NDArray[np.float64]:
    """Time nodes 0 = t_0 < ... < t_m = final_time.

    Steps start at ``first_dt`` and grow geometrically by ``growth`` until they reach ``dt``;
    every interval between consecutive nodes and ``stops`` (output times) longer than ``dt``
    is then split into equal steps <= ``dt``.
    """
    nodes = [0.0]
    h = first_dt
    while h < dt and nodes[-1] + h < final_time:
        nodes.append(nodes[-1] + h)
        h *= growth
    pts = np.unique(np.concatenate([nodes, stops, [final_time]]))
    pts = pts[pts <= final_time]
    tol = 1e-12 * final_time
    keep = np.concatenate([[True], np.diff(pts) > tol])
    pts = pts[keep]
    for s in stops:  # a node merged into a nearby stop becomes the stop itself
        pts[np.argmin(np.abs(pts - s))] = s
    out = [pts[:1]]
    for a, b in zip(pts[:-1], pts[1:], strict=True):
        m = max(1, int(np.ceil((b - a) / dt * (1 - 1e-12))))
        out.append(a + (b - a) * np.arange(1, m + 1) / m)
        out[-1][-1] = b
    return np.concatenate(out)


def integrate(
    stepper: SpectralStepper,
    u0: NDArray[np.float64],
    grid: NDArray[np.float64],
    stops: NDArray[np.float64],
    *,
    solver_name: str,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Step ``u0`` (n_samples, n) along ``grid``; return the states at ``stops`` and a tail
    estimate.

    Returns ``(states (n_samples, n_stops, n), tail (n_samples,))`` where ``tail`` is the
    relative l2 norm of the retained modes in the top fifth below the 2/3 cutoff at the last
    stop, an indicator of spatial under-resolution (~1e-16 when resolved).
    """
    vh = np.fft.rfft(u0, axis=-1, norm="forward")
    out = np.empty((u0.shape[0], stops.size, stepper.n))
    stop_index = {float(s): i for i, s in enumerate(stops)}
    if 0.0 in stop_index:
        out[:, stop_index[0.0]] = u0
    with np.errstate(over="ignore", invalid="ignore"):
        for t0, t1 in zip(grid[:-1], grid[1:], strict=True):
            vh = stepper.step(vh, float(t1 - t0))
            bad = ~np.isfinite(vh).all(axis=-1)
            if bad.any():
                first = int(np.argmax(bad))
                msg = (
                    f"{solver_name}: non-finite values at t={t1:.6g} in sample {first} "
                    f"(step {t1 - t0:.3g}); the time step is too large for this data: pass a "
                    "smaller `dt`."
                )
                raise ConvergenceError(msg)
            i = stop_index.get(float(t1))
            if i is not None:
                out[:, i] = np.fft.irfft(vh, n=stepper.n, axis=-1, norm="forward")
    k = np.arange(vh.shape[-1])
    band = (k > 0.8 * stepper.cutoff) & (k <= stepper.cutoff)
    norm = np.sqrt((np.abs(vh) ** 2).sum(-1))
    tail = np.sqrt((np.abs(vh[:, band]) ** 2).sum(-1)) / np.where(norm > 0, norm, 1.0)
    return out, tail
