"""Validation of datasets against the schema (:mod:`neuralop_fem.data.names`).

:func:`validate` inspects metadata, dims, dtypes and coordinates only, so a lazily opened
dataset stays lazy; every failure is a :class:`~neuralop_fem.errors.DatasetError` naming the
source (file) and what is wrong.
"""

from __future__ import annotations

import math

import numpy as np
import xarray as xr

from solvers.problems import get_problem

from .. import __version__
from ..errors import DatasetError
from .names import (
    DIAGNOSTICS,
    FIELD_VARIABLES,
    ITERATIONS,
    OPTIONAL_FIELDS,
    PROBLEMS,
    REQUIRED_ATTRS,
    RESIDUAL,
    SAMPLE,
    SCHEMA_VERSION,
    SEED,
    SOLVE_TIME,
    STORAGE_DTYPE,
    TIME,
    U_T,
)

__all__ = ["validate"]


def _fail(source: str, what: str) -> DatasetError:
    return DatasetError(f"{source}: {what}")


def validate(ds: xr.Dataset, *, source: str) -> xr.Dataset:
    """Check that ``ds`` follows the schema; return it unchanged.

    Only metadata, dims, dtypes and coordinates are inspected, so a lazily opened dataset
    stays lazy.

    Parameters
    ----------
    ds : xarray.Dataset
    source : str
        The file name (or a description) used in error messages.

    Raises
    ------
    DatasetError
        ``"<source>: <what is wrong>"`` for a dataset that is not a neuralop_fem dataset, has
        an unknown schema version, misses variables/attributes, or has wrong dims, dtypes or
        coordinates.
    """
    version = ds.attrs.get("neuralop_fem_schema_version")
    if version is None:
        raise _fail(
            source,
            "is not a neuralop_fem dataset (no `neuralop_fem_schema_version` attribute; "
            f"variables found: {sorted(map(str, ds.variables))}).",
        )
    if np.ndim(version) != 0 or int(version) != SCHEMA_VERSION:
        raise _fail(
            source,
            f"has unknown schema version {version}; this neuralop_fem ({__version__}) reads "
            f"schema version {SCHEMA_VERSION}. Upgrade neuralop_fem to read it.",
        )
    missing = [k for k in REQUIRED_ATTRS if k not in ds.attrs]
    if missing:
        raise _fail(source, f"misses global attribute(s) {missing}.")
    problem = ds.attrs["problem"]
    if problem not in PROBLEMS:
        raise _fail(source, f"attribute `problem` must be one of {PROBLEMS}; got {problem!r}.")
    storage = ds.attrs[STORAGE_DTYPE]
    if storage not in ("float32", "float64"):
        raise _fail(source, f"attribute `{STORAGE_DTYPE}` must be float32 or float64; "
                    f"got {storage!r}.")

    expected = dict(FIELD_VARIABLES[problem])
    for name, dims in OPTIONAL_FIELDS[problem].items():
        if name in ds.variables:
            expected[name] = dims
    for name in DIAGNOSTICS:
        expected[name] = (SAMPLE,)
    missing = [k for k in expected if k not in ds.variables]
    if missing:
        raise _fail(
            source,
            f"misses variable(s) {missing} of a {problem} dataset; "
            f"found {sorted(map(str, ds.variables))}.",
        )
    for name, dims in expected.items():
        got = tuple(ds[name].dims)
        if got != dims:
            raise _fail(source, f"variable `{name}` must have dims {dims}; got {got}.")
        for key in ("units", "long_name"):
            if key not in ds[name].attrs:
                raise _fail(source, f"variable `{name}` misses the `{key}` attribute.")
    for name in FIELD_VARIABLES[problem].keys() | (expected.keys() & {U_T}):
        if str(ds[name].dtype) != storage:
            raise _fail(
                source,
                f"variable `{name}` must have dtype {storage} (attribute `{STORAGE_DTYPE}`); "
                f"got {ds[name].dtype}.",
            )
    kinds = {SEED: np.uint64, ITERATIONS: np.int64, RESIDUAL: np.float64, SOLVE_TIME: np.float64}
    for name, dtype in kinds.items():
        if ds[name].dtype != dtype:
            raise _fail(source, f"variable `{name}` must have dtype {np.dtype(dtype)}; "
                        f"got {ds[name].dtype}.")

    _check_coords(ds, problem, source)
    return ds


def _check_coords(ds: xr.Dataset, problem: str, source: str) -> None:
    spec = get_problem(problem)
    spatial = spec.dims
    needed = [SAMPLE, *spatial] + ([TIME] if TIME in ds.dims else [])
    for name in needed:
        if name not in ds.coords:
            raise _fail(source, f"misses coordinate `{name}`.")
        for key in ("units", "long_name"):
            if key not in ds[name].attrs:
                raise _fail(source, f"coordinate `{name}` misses the `{key}` attribute.")
    if ds[SAMPLE].dtype != np.int64:
        raise _fail(source, f"coordinate `sample` must have dtype int64; got {ds[SAMPLE].dtype}.")
    if ds.sizes[SAMPLE] == 0:
        raise _fail(source, "holds no samples.")
    for name in spatial:
        values = np.asarray(ds[name].values)
        n = values.size
        if ds[name].dtype != np.float64 or n < 2:
            raise _fail(
                source,
                f"coordinate `{name}` must be float64 with >= 2 points; "
                f"got {ds[name].dtype}, {n} points.",
            )
        want = spec.coordinates(n)
        # 1e-12 absolute: the grid is i/n or i/(n-1) computed in float64, exact to ~1e-16.
        if not np.allclose(values, want, rtol=0.0, atol=1e-12):
            raise _fail(source, f"coordinate `{name}` must be the uniform grid of "
                        f"{spec.describe_grid(n)}.")
    sizes = {ds.sizes[d] for d in spatial}
    if len(sizes) > 1:
        shape = " x ".join(str(ds.sizes[d]) for d in spatial)
        raise _fail(source, f"the {problem} grid must be square; got {shape}.")
    if TIME in ds.coords and not math.isfinite(float(np.sum(ds[TIME].values))):
        raise _fail(source, "coordinate `time` must be finite.")
