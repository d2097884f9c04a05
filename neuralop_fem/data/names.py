"""The names of the neuralop_fem dataset schema, defined once: dimensions, variables,
global attributes, per-problem field tables and the ``units`` / ``long_name`` of each.

The lowest layer of :mod:`neuralop_fem.data`: it imports nothing of the package, so the
builders (:mod:`~neuralop_fem.data.schema`, which re-exports every name),
:mod:`~neuralop_fem.data.validation` and :mod:`~neuralop_fem.data.provenance` all import it
without importing each other in a circle.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "A",
    "CONVENTIONS",
    "DIAGNOSTICS",
    "FIELD_VARIABLES",
    "ITERATIONS",
    "ITERATIONS_UNKNOWN",
    "OPTIONAL_FIELDS",
    "PROBLEMS",
    "REQUIRED_ATTRS",
    "RESIDUAL",
    "SAMPLE",
    "SCHEMA_VERSION",
    "SEED",
    "SEED_UNKNOWN",
    "SOLVE_TIME",
    "STORAGE_DTYPE",
    "TIME",
    "U",
    "U0",
    "U_T",
    "VARIABLE_ATTRS",
    "X",
    "Y",
]

SCHEMA_VERSION = 1
CONVENTIONS = "CF-1.8"

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

# Global attribute recording the floating-point type of the stored fields.
STORAGE_DTYPE = "storage_dtype"

#: Sentinel stored in ``seed`` when the per-sample seed is unknown (imported data).
SEED_UNKNOWN = np.uint64(np.iinfo(np.uint64).max)
#: Sentinel stored in ``iterations`` when unknown; ``residual``/``solve_time`` use NaN.
ITERATIONS_UNKNOWN = -1

PROBLEMS = ("burgers", "darcy")
DIAGNOSTICS = (SEED, ITERATIONS, RESIDUAL, SOLVE_TIME)

#: Field variables (floating point, cast by the storage dtype) and their dims, per problem.
FIELD_VARIABLES: dict[str, dict[str, tuple[str, ...]]] = {
    "burgers": {U0: (SAMPLE, X), U: (SAMPLE, X)},
    "darcy": {A: (SAMPLE, X, Y), U: (SAMPLE, X, Y)},
}
OPTIONAL_FIELDS: dict[str, dict[str, tuple[str, ...]]] = {
    "burgers": {U_T: (SAMPLE, TIME, X)},
    "darcy": {},
}

REQUIRED_ATTRS = (
    "Conventions",
    "title",
    "problem",
    "neuralop_fem_schema_version",
    "neuralop_fem_version",
    "created",
    "dataset_seed",
    "source",
    "config_json",
    STORAGE_DTYPE,
)

_BURGERS_U = "velocity u of the viscous Burgers equation u_t + u u_x = nu u_xx"
#: ``units``, ``long_name`` and ``comment`` of every variable and coordinate (problem-specific
#: where keyed). ``long_name`` is short, as plot labels show it: xarray's label
#: ``long_name [units]`` stays one line up to 30 characters; the full description is the CF
#: ``comment``.
VARIABLE_ATTRS: dict[str, dict[str, dict[str, str]]] = {
    "burgers": {
        U0: {"units": "1", "long_name": "initial condition u(x, 0)",
             "comment": "nondimensional " + _BURGERS_U + " at t = 0"},
        U: {"units": "1", "long_name": "solution u(x, T)",
            "comment": "nondimensional " + _BURGERS_U + " at t = T = final_time"},
        U_T: {"units": "1", "long_name": "solution u(x, t)",
              "comment": "nondimensional " + _BURGERS_U + " at the output times"},
        X: {
            "units": "1",
            "long_name": "position x",
            "comment": "periodic unit interval [0, 1), x_i = i/n (no duplicated endpoint)",
            "axis": "X",
        },
        # No axis="T": CF reserves it for time coordinates whose units are a time unit with a
        # reference date ("s since ..."); this nondimensional time has units "1".
        TIME: {"units": "1", "long_name": "time (nondimensional)"},
        ITERATIONS: {"units": "1", "long_name": "solver time steps",
                     "comment": "number of time steps of the solver"},
        RESIDUAL: {
            "units": "1",
            "long_name": "resolution indicator",
            "comment": "spatial resolution indicator (not an error bound): relative l2 norm of "
            "the top fifth of the resolved spectrum at the final time; 0 when those modes "
            "decayed below the solver's mode truncation; NaN for the FD solver",
        },
    },
    "darcy": {
        A: {"units": "1", "long_name": "coefficient a(x, y)",
            "comment": "coefficient a of -div(a grad u) = f on [0, 1]^2"},
        U: {"units": "1", "long_name": "solution u(x, y)",
            "comment": "solution u of -div(a grad u) = f on [0, 1]^2, u = 0 on the boundary"},
        X: {
            "units": "1",
            "long_name": "position x",
            "comment": "node grid on [0, 1] including the boundary, x_i = i/(n-1)",
            "axis": "X",
        },
        Y: {
            "units": "1",
            "long_name": "position y",
            "comment": "node grid on [0, 1] including the boundary, y_j = j/(n-1)",
            "axis": "Y",
        },
        ITERATIONS: {"units": "1", "long_name": "solver iterations",
                     "comment": "linear-solver iterations (1 for a direct solve)"},
        RESIDUAL: {"units": "1", "long_name": "relative residual",
                   "comment": "final relative residual ||b - A u|| / ||b||"},
    },
    "common": {
        SAMPLE: {"units": "1", "long_name": "global sample index k"},
        SEED: {
            "units": "1",
            "long_name": "per-sample seed",
            "comment": "np.random.SeedSequence([dataset_seed, k]) state; regenerates sample k "
            "alone",
        },
        SOLVE_TIME: {"units": "s", "long_name": "solve wall time",
                     "comment": "wall time of the solve of this sample"},
    },
}
