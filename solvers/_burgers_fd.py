r"""Numerics of the finite-difference Burgers solver (internal).

Conservative skew-symmetric central scheme on the periodic grid :math:`x_i = i h`,
:math:`h = 1/n`:

.. math::

    \frac{du_i}{dt} = -\frac{F_{i+1/2} - F_{i-1/2}}{h}
                      + \nu\,\frac{u_{i+1} - 2u_i + u_{i-1}}{h^2},\qquad
    F_{i+1/2} = \frac{u_i^2 + u_i u_{i+1} + u_{i+1}^2}{6},

second order in space (the flux is the skew-symmetric split
:math:`\tfrac13[(u^2)_x + u u_x]` in flux form: the discrete mean is conserved exactly, up to
round-off, and the semi-discrete energy only decays), integrated in time by the classical
fourth-order Runge-Kutta method with a fixed step inside the RK4 stability region.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .errors import ConvergenceError

# RK4 stability: imaginary-axis extent 2*sqrt(2) ~ 2.83, real-axis extent ~ 2.78
_RK4_IMAG = 2.8
_RK4_REAL = 2.78


def fd_rhs(u: NDArray[np.float64], viscosity: float, h: float) -> NDArray[np.float64]:
    """Right-hand side of the semi-discrete scheme for a batch ``u`` of shape (n_samples, n)."""
    up = np.roll(u, -1, axis=-1)
    flux = (u * u + u * up + up * up) / 6.0
    adv = (flux - np.roll(flux, 1, axis=-1)) / h
    diff = viscosity * (up - 2.0 * u + np.roll(u, 1, axis=-1)) / (h * h)
    return diff - adv


def stable_dt(max_speed: float, viscosity: float, h: float, *, cfl: float) -> float:
    """``cfl`` times the RK4 limit for central advection + diffusion (max_speed in units of u)."""
    # The eigenvalues of the central advection have |Im| <= max|u| * 2/h (the skew-symmetric
    # flux, linearised), those of the diffusion lie in [-4 nu / h^2, 0].
    lim_adv = _RK4_IMAG * h / (2 * max(max_speed, 1e-300))
    lim_diff = _RK4_REAL * h * h / (4 * viscosity)
    # the combined spectrum is inside the RK4 region if each part uses half of it
    return cfl * 1.0 / (1.0 / lim_adv + 1.0 / lim_diff)


def rk4_integrate(
    u0: NDArray[np.float64],
    viscosity: float,
    grid: NDArray[np.float64],
    stops: NDArray[np.float64],
    *,
    solver_name: str,
) -> NDArray[np.float64]:
    """RK4 along the time nodes ``grid``; states at ``stops``, shape (n_samples, n_stops, n)."""
    n = u0.shape[-1]
    h = 1.0 / n
    u = u0.copy()
    out = np.empty((u0.shape[0], stops.size, n))
    stop_index = {float(s): i for i, s in enumerate(stops)}
    if 0.0 in stop_index:
        out[:, stop_index[0.0]] = u0
    with np.errstate(over="ignore", invalid="ignore"):
        for t0, t1 in zip(grid[:-1], grid[1:], strict=True):
            dt = float(t1 - t0)
            k1 = fd_rhs(u, viscosity, h)
            k2 = fd_rhs(u + 0.5 * dt * k1, viscosity, h)
            k3 = fd_rhs(u + 0.5 * dt * k2, viscosity, h)
            k4 = fd_rhs(u + dt * k3, viscosity, h)
            u = u + (dt / 6.0) * (k1 + 2.0 * (k2 + k3) + k4)
            bad = ~np.isfinite(u).all(axis=-1)
            if bad.any():
                msg = (
                    f"{solver_name}: non-finite values at t={t1:.6g} in sample "
                    f"{int(np.argmax(bad))} (dt={dt:.3g}); pass a smaller `cfl`."
                )
                raise ConvergenceError(msg)
            i = stop_index.get(float(t1))
            if i is not None:
                out[:, i] = u
    return out
