r"""The Darcy residual of a prediction as a batched torch stencil, on the model's device.

:func:`fd_relative_residual` computes, for a batch of nodal coefficients ``a`` and candidate
solutions ``u`` on the ``n x n`` node grid ``x_i = i / (n - 1)``, the relative residual

.. math::

    r = \frac{\| b - A u \|_2}{\| b \|_2}, \qquad
    (A u)_{ij} = a_{i-1/2,j} (u_{ij} - u_{i-1,j}) + a_{i+1/2,j} (u_{ij} - u_{i+1,j})
               + a_{i,j-1/2} (u_{ij} - u_{i,j-1}) + a_{i,j+1/2} (u_{ij} - u_{i,j+1}),

with ``b = h^2 f`` over the interior nodes, ``u = 0`` on the boundary (the boundary values of
``u`` are ignored) and the face coefficients the harmonic ``2 a_1 a_2 / (a_1 + a_2)`` or
arithmetic ``(a_1 + a_2) / 2`` mean of the two nodal values. This is the scaled system ``h^2``
times the 5-point discretisation of ``-div(a grad u) = f`` that
:class:`solvers.darcy.DarcyFDSolver` assembles as a sparse matrix
(:func:`solvers._darcy_fd.assemble_fd`), applied matrix-free: about 20 floating-point
operations per node and no assembly, so a batch costs a few array passes on the device that
already holds it. It agrees with the sparse operator to round-off in float64.
"""

from __future__ import annotations

import numpy as np
import torch
from numpy.typing import NDArray
from torch.nn import functional as F  # noqa: N812

from ..errors import InputError

__all__ = ["AVERAGINGS", "apply_fd_operator", "fd_relative_residual", "residual_device"]

AVERAGINGS = ("harmonic", "arithmetic")


def _faces(a: torch.Tensor, averaging: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Face coefficients: (s, n-1, n) between ``(i, j)`` and ``(i+1, j)``; (s, n, n-1) in y."""
    a1x, a2x = a[:, :-1, :], a[:, 1:, :]
    a1y, a2y = a[:, :, :-1], a[:, :, 1:]
    if averaging == "harmonic":
        return 2.0 * a1x * a2x / (a1x + a2x), 2.0 * a1y * a2y / (a1y + a2y)
    return 0.5 * (a1x + a2x), 0.5 * (a1y + a2y)


def apply_fd_operator(a: torch.Tensor, u: torch.Tensor, *,
                      averaging: str = "harmonic") -> torch.Tensor:
    """``h^2 A u`` at the interior nodes: the scaled 5-point operator, matrix-free.

    Parameters
    ----------
    a : (n_samples, n, n) tensor
        Nodal coefficient (> 0), boundary nodes included.
    u : (n_samples, n, n) tensor
        Candidate solution; its boundary values are replaced by the Dirichlet value 0.
    averaging : {"harmonic", "arithmetic"}
        Face averaging of the nodal coefficient.

    Returns
    -------
    (n_samples, n - 2, n - 2) tensor
        ``(A u)_ij`` for ``1 <= i, j <= n - 2`` (x-major, as ``u[:, 1:-1, 1:-1]``).
    """
    if averaging not in AVERAGINGS:
        msg = f"`averaging` must be one of {AVERAGINGS}; got {averaging!r}."
        raise InputError(msg)
    if a.ndim != 3 or a.shape != u.shape or a.shape[-1] != a.shape[-2] or a.shape[-1] < 3:
        msg = (f"`a` and `u` must both have shape (n_samples, n, n) with n >= 3; got "
               f"{tuple(a.shape)} and {tuple(u.shape)}.")
        raise InputError(msg)
    ax, ay = _faces(a, averaging)
    v = F.pad(u[:, 1:-1, 1:-1], (1, 1, 1, 1))  # u = 0 on the boundary
    flux_x = ax * (v[:, 1:, :] - v[:, :-1, :])  # a_{i+1/2,j} (u_{i+1,j} - u_ij)
    flux_y = ay * (v[:, :, 1:] - v[:, :, :-1])
    return -((flux_x[:, 1:, 1:-1] - flux_x[:, :-1, 1:-1])
             + (flux_y[:, 1:-1, 1:] - flux_y[:, 1:-1, :-1]))


def residual_device(device: torch.device) -> torch.device:
    """Where the float64 stencil runs: ``device``, or the CPU for a device without float64
    (Apple's ``mps``)."""
    return torch.device("cpu") if device.type == "mps" else device


def fd_relative_residual(a: NDArray[np.float64], u: NDArray[np.float64], *, forcing: float,
                         averaging: str = "harmonic",
                         device: torch.device | str = "cpu") -> NDArray[np.float64]:
    """``||b - A u|| / ||b||`` of each sample for the FD solver's system, computed on ``device``.

    The system of :class:`solvers.darcy.DarcyFDSolver` with constant ``forcing`` (``b = h^2
    f``, ``h = 1 / (n - 1)``); float64 throughout (on a device without float64, the CPU).

    Parameters
    ----------
    a, u : (n_samples, n, n) arrays
        Nodal coefficient and candidate solution; boundary values of ``u`` are ignored.
    forcing : float
        The constant right-hand side ``f`` (nonzero).
    averaging : {"harmonic", "arithmetic"}
        The solver's face averaging.
    device : torch.device or str
        Where to compute (the surrogate's device).

    Returns
    -------
    (n_samples,) float64 array; NaN where ``u`` has a non-finite interior value (as
    :func:`neuralop_fem.surrogate.warmstart.relative_residual`).
    """
    if not np.isfinite(forcing) or forcing == 0:
        msg = f"`forcing` must be a finite nonzero number; got {forcing!r}."
        raise InputError(msg)
    dev = residual_device(torch.device(device))
    at = torch.as_tensor(np.asarray(a, dtype=np.float64)).to(dev, non_blocking=True)
    ut = torch.as_tensor(np.asarray(u, dtype=np.float64)).to(dev, non_blocking=True)
    n = at.shape[-1]
    b = forcing / (n - 1) ** 2
    with torch.inference_mode():
        au = apply_fd_operator(at, ut, averaging=averaging)
        res = torch.linalg.vector_norm((b - au).flatten(1), dim=1)
        res = res / (abs(b) * (n - 2))  # ||b||: (n - 2)^2 equal entries
        finite = torch.isfinite(ut[:, 1:-1, 1:-1].flatten(1)).all(dim=1)
        res = torch.where(finite, res, torch.full_like(res, float("nan")))
        return res.cpu().numpy()
