"""Closed-form Darcy solutions for verifying the solvers of :mod:`solvers.darcy`.

Each problem solves :math:`-\\nabla\\cdot(a\\nabla u) = f` on :math:`(0, 1)^2` with ``u = 0``
on the boundary; ``f`` is computed exactly from ``a`` and ``u``. Functions take coordinate
arrays of any (broadcastable) shape; :func:`node_grid` gives the ``n x n`` node grid with
``indexing="ij"`` (axis 0 is ``x``), the convention of the solvers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .checks import check_real

__all__ = ["QuadraticDarcyProblem", "SmoothDarcyProblem", "node_grid"]

Array = NDArray[np.float64]


def node_grid(n: int) -> tuple[Array, Array]:
    """Node coordinates ``x_i = i / (n - 1)``, each of shape (n, n), ``indexing="ij"``."""
    x = np.linspace(0.0, 1.0, n)
    gx, gy = np.meshgrid(x, x, indexing="ij")
    return gx, gy


@dataclass(frozen=True, kw_only=True)
class SmoothDarcyProblem:
    """Manufactured smooth solution with a variable coefficient.

    .. math::

        u = \\sin(\\pi x)\\sin(\\pi y), \\qquad
        a = m + \\sin(2\\pi x + 1)\\cos(\\pi y), \\qquad
        f = -\\nabla a\\cdot\\nabla u + 2\\pi^2 a u .

    Parameters
    ----------
    mean
        The constant ``m`` > 1, so that ``a >= m - 1 > 0``.
    """

    mean: float = 2.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "mean", check_real(self.mean, name="mean", low=1.0))

    def coefficient(self, x: Array, y: Array) -> Array:
        return self.mean + np.sin(2 * np.pi * x + 1.0) * np.cos(np.pi * y)

    def solution(self, x: Array, y: Array) -> Array:
        return np.sin(np.pi * x) * np.sin(np.pi * y)

    def gradient(self, x: Array, y: Array) -> tuple[Array, Array]:
        """``(du/dx, du/dy)``."""
        return (
            np.pi * np.cos(np.pi * x) * np.sin(np.pi * y),
            np.pi * np.sin(np.pi * x) * np.cos(np.pi * y),
        )

    def forcing(self, x: Array, y: Array) -> Array:
        ax = 2 * np.pi * np.cos(2 * np.pi * x + 1.0) * np.cos(np.pi * y)
        ay = -np.pi * np.sin(2 * np.pi * x + 1.0) * np.sin(np.pi * y)
        ux, uy = self.gradient(x, y)
        return -(ax * ux + ay * uy) + 2 * np.pi**2 * self.coefficient(x, y) * self.solution(x, y)


@dataclass(frozen=True, kw_only=True)
class QuadraticDarcyProblem:
    """Constant coefficient, ``u = x(1-x) y(1-y)``, ``f = 2 a (x(1-x) + y(1-y))``.

    The 5-point stencil differentiates quadratics exactly, so the finite-difference
    solution equals ``u`` at the nodes up to round-off on any grid.
    """

    coefficient_value: float = 3.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "coefficient_value", check_real(
            self.coefficient_value, name="coefficient_value", low=0.0))

    def coefficient(self, x: Array, y: Array) -> Array:
        return np.full(np.broadcast_shapes(np.shape(x), np.shape(y)), self.coefficient_value)

    def solution(self, x: Array, y: Array) -> Array:
        return x * (1 - x) * y * (1 - y)

    def forcing(self, x: Array, y: Array) -> Array:
        return 2 * self.coefficient_value * (x * (1 - x) + y * (1 - y))
