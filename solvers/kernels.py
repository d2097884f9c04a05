"""The numerical kernels under the solvers, for scripts that time or count their pieces.

The solvers (:mod:`solvers.burgers`, :mod:`solvers.darcy`, :mod:`solvers.darcy_inverse`) are
the way to solve a problem; this module names the pieces they are built from, so that a
benchmark can time the assembly apart from the linear solve, count the FFTs of the spectral
stepper or prolong a coarse field the way the multilevel inversion does, without reaching
into the private modules (``solvers._*``), whose layout may change.

* :func:`assemble_fd`: the scaled 5-point matrices ``h^2 A(a)`` of a batch of nodal
  coefficients (the assembly of :class:`~solvers.darcy.DarcyFDSolver`);
* :func:`solve_linear` and :data:`LINEAR_SOLVERS`: one sparse SPD solve with the solvers'
  linear methods (direct, CG, AMG- or GMG-preconditioned CG);
* :func:`prolong_nodes`: bilinear interpolation from ``n_c`` to ``2 n_c - 1`` nodes per side;
* :class:`SpectralStepper` and :func:`integrate_spectral`: the ETDRK4 pseudo-spectral stepper
  of :class:`~solvers.burgers.BurgersSpectralSolver` and its time loop (the stepper counts
  its FFT pairs and points in ``fft_pairs`` / ``fft_points``).

>>> import numpy as np
>>> [m.shape for m in assemble_fd(np.ones((2, 5, 5)))]
[(9, 9), (9, 9)]
>>> prolong_nodes(np.arange(4.0).reshape(2, 2)).shape
(3, 3)
"""

from __future__ import annotations

from ._burgers_spectral import SpectralStepper
from ._burgers_spectral import integrate as integrate_spectral
from ._darcy_adjoint import prolong_nodes
from ._darcy_fd import assemble_fd
from ._darcy_linear import LINEAR_SOLVERS, solve_linear

__all__ = [
    "LINEAR_SOLVERS",
    "SpectralStepper",
    "assemble_fd",
    "integrate_spectral",
    "prolong_nodes",
    "solve_linear",
]
