"""Classical solvers and random-field samplers for operator-learning data.

numpy, scipy and scikit-fem only: importing :mod:`solvers` never imports torch.
"""

from __future__ import annotations

from ._contract import SolveReport
from .errors import ConvergenceError, InputError, NeuralopFemError, ShapeError

__all__ = [
    "ConvergenceError",
    "InputError",
    "NeuralopFemError",
    "ShapeError",
    "SolveReport",
]
