"""Classical solvers and random-field samplers for operator-learning data.

numpy, scipy and scikit-fem only: importing :mod:`solvers` never imports torch.

- :mod:`solvers.grf`: :class:`PeriodicGRF`, :class:`NeumannGRF`, :func:`sample_seeds`,
  :func:`threshold`
- :mod:`solvers.burgers`: :class:`BurgersSpectralSolver` (ETDRK4), :class:`BurgersFDSolver`
- :mod:`solvers.darcy`: :class:`DarcyFDSolver` (5-point), :class:`DarcyFEMSolver`
  (P1/Q1, scikit-fem)
- :mod:`solvers.darcy_grid_variants`: :class:`DarcyCellFDSolver` (cell centres, PDEBench's
  grid), :class:`DarcyHalfOpenFDSolver` (``x_i = i/n``, neuraloperator's)
- :mod:`solvers.grids`: the grid conventions (nodes, periodic, cell-centred, half-open), their
  restrictions (strides, average pooling) and interpolations (linear for inputs, spectral or
  bilinear for comparing outputs)
- :mod:`solvers.ladder`: solver ladders of the fair verdict (:class:`~solvers.ladder.Rung`)
- :mod:`solvers.darcy_inverse`: :class:`DarcyInverseSolver` (coefficient from the solution:
  adjoint gradient, smoothed TV on ``log a``, L-BFGS-B, discrepancy principle)
- :mod:`solvers.exact`: Cole-Hopf Burgers and manufactured Darcy solutions
- :mod:`solvers.contract`: the solver contract (:class:`Solver`, :class:`SolveReport`,
  batch helpers)
- :mod:`solvers.problems`: the problem registry (:func:`get_problem`, :func:`register_problem`)

Every solver follows one contract: ``.solve(inputs, *, initial_guess=None)`` takes numpy or
xarray input with a leading ``sample`` dimension (or one sample) and returns the same form;
``.solve_with_report`` also returns a :class:`SolveReport` of per-sample diagnostics.
"""

from __future__ import annotations

from .burgers import BurgersFDSolver, BurgersSpectralSolver
from .contract import Solver, SolveReport
from .darcy import DarcyFDSolver, DarcyFEMSolver
from .darcy_grid_variants import DarcyCellFDSolver, DarcyHalfOpenFDSolver
from .darcy_inverse import DarcyInverseSolver, InverseSolveReport
from .errors import ConvergenceError, ConvergenceWarning, InputError, NeuralopFemError, ShapeError
from .grf import NeumannGRF, PeriodicGRF, sample_seeds, threshold
from .problems import PROBLEMS, Problem, get_problem, register_problem

__all__ = [
    "BurgersFDSolver",
    "BurgersSpectralSolver",
    "ConvergenceError",
    "ConvergenceWarning",
    "DarcyCellFDSolver",
    "DarcyFDSolver",
    "DarcyFEMSolver",
    "DarcyHalfOpenFDSolver",
    "DarcyInverseSolver",
    "InputError",
    "InverseSolveReport",
    "NeumannGRF",
    "NeuralopFemError",
    "PROBLEMS",
    "PeriodicGRF",
    "Problem",
    "ShapeError",
    "SolveReport",
    "Solver",
    "get_problem",
    "register_problem",
    "sample_seeds",
    "threshold",
]
