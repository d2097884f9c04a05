"""The names of the neuralop_fem dataset schema, defined once: dimensions, variables,
global attributes and the ``units`` / ``long_name`` of the shared ones (each problem's
fields and their attributes are its kit's: :mod:`neuralop_fem.problems`).

The lowest layer of :mod:`neuralop_fem.data`: it imports only the dimension and variable
names of :mod:`neuralop_fem.problems.names` (which it re-exports), so the builders
(:mod:`~neuralop_fem.data.schema`, which re-exports every name),
:mod:`~neuralop_fem.data.validation` and :mod:`~neuralop_fem.data.provenance` all import it
without importing each other in a circle.
"""

from __future__ import annotations

import numpy as np

# The dimension and variable names: the problems' (their kits name their fields with them).
from ..problems.names import (
    ITERATIONS,
    RESIDUAL,
    SAMPLE,
    SEED,
    SOLVE_TIME,
    TIME,
    U0,
    U_T,
    A,
    U,
    X,
    Y,
)

__all__ = [
    "A",
    "COMMON_ATTRS",
    "CONVENTIONS",
    "DIAGNOSTICS",
    "GRID",
    "ITERATIONS",
    "ITERATIONS_UNKNOWN",
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
    "X",
    "Y",
]

SCHEMA_VERSION = 1
CONVENTIONS = "CF-1.8"

# Global attribute recording the floating-point type of the stored fields.
STORAGE_DTYPE = "storage_dtype"
# Global attribute naming the grid convention of the fields (solvers.grids; absent: the
# problem's own grid, which every file written before it existed is on).
GRID = "grid"

#: Sentinel stored in ``seed`` when the per-sample seed is unknown (imported data).
SEED_UNKNOWN = np.uint64(np.iinfo(np.uint64).max)
#: Sentinel stored in ``iterations`` when unknown; ``residual``/``solve_time`` use NaN.
ITERATIONS_UNKNOWN = -1

DIAGNOSTICS = (SEED, ITERATIONS, RESIDUAL, SOLVE_TIME)

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

#: ``units`` and ``long_name`` of the variables and coordinates every problem shares; the
#: problem-specific ones (fields, grid coordinates, the meaning of ``iterations`` and
#: ``residual``) are its kit's ``variable_attrs`` (:mod:`neuralop_fem.problems`).
#: ``long_name`` is short, as plot labels show it (xarray: ``long_name [units]``); the full
#: description is the CF ``comment``.
COMMON_ATTRS: dict[str, dict[str, str]] = {
    SAMPLE: {"units": "1", "long_name": "global sample index k"},
    SEED: {
        "units": "1",
        "long_name": "per-sample seed",
        "comment": "np.random.SeedSequence([dataset_seed, k]) state; regenerates sample k alone",
    },
    SOLVE_TIME: {"units": "s", "long_name": "solve wall time",
                 "comment": "wall time of the solve of this sample"},
}
