"""The dimension and variable names of the dataset files, the words the problem kits and the
schema share (:mod:`neuralop_fem.data.names` re-exports them beside the schema's attributes).

A kit names its fields, their dims and attributes with them (:mod:`.builtin`); a new problem may
use these or its own.
"""

from __future__ import annotations

__all__ = [
    "A",
    "ITERATIONS",
    "RESIDUAL",
    "SAMPLE",
    "SEED",
    "SOLVE_TIME",
    "TIME",
    "U",
    "U0",
    "U_T",
    "X",
    "Y",
]

# Dimension names.
SAMPLE = "sample"
X = "x"
Y = "y"
TIME = "time"

# Variable names.
U0 = "u0"
U = "u"
U_T = "u_t"
A = "a"
SEED = "seed"
ITERATIONS = "iterations"
RESIDUAL = "residual"
SOLVE_TIME = "solve_time"
