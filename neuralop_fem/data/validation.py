"""Validation of datasets against the schema (:mod:`neuralop_fem.data.names`).

:func:`validate` inspects metadata, dims, dtypes and coordinates only, so a lazily opened
dataset stays lazy; every failure is a :class:`~neuralop_fem.errors.DatasetError` naming the
source (file) and what is wrong.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import xarray as xr

from solvers.checks import is_int, is_real, plain
from solvers.problems import get_problem

from .._version import __version__
from ..errors import DatasetError
from ..problems import data_problems, get_kit
from ..safe_text import clipped_repr, printable
from .attrs import netcdf_attrs
from .dim_order import file_dims
from .grids import dataset_grid, describe_grid, grid_coordinates
from .names import (
    DIAGNOSTICS,
    ITERATIONS,
    REQUIRED_ATTRS,
    RESIDUAL,
    SAMPLE,
    SCHEMA_VERSION,
    SEED,
    SOLVE_TIME,
    STORAGE_DTYPE,
    TIME,
)
from .provenance import generation_settings, physics_options, read_record, solver_from_record

__all__ = ["validate"]


def _fail(source: str, what: str) -> DatasetError:
    return DatasetError(f"{source}: {what}")


def validate(ds: xr.Dataset, *, source: str) -> xr.Dataset:
    """Check that ``ds`` follows the schema; return it unchanged.

    Only metadata, dims, dtypes and coordinates are inspected, so a lazily opened dataset
    stays lazy. A field's dims may be in the API's order ``(sample, x, y)`` or in the order
    of files ``(sample, y, x)`` (:mod:`~neuralop_fem.data.dim_order`).

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
    if not _is_integer(version):
        raise _fail(source, f"attribute `neuralop_fem_schema_version` must be an integer; got "
                    f"{_plain(version)!r}: the file was altered or not written by neuralop_fem.")
    if int(version) != SCHEMA_VERSION:
        raise _fail(
            source,
            f"has unknown schema version {version}; this neuralop_fem ({__version__}) reads "
            f"schema version {SCHEMA_VERSION}. Upgrade neuralop_fem to read it.",
        )
    missing = [k for k in REQUIRED_ATTRS if k not in ds.attrs]
    if missing:
        raise _fail(source, f"misses global attribute(s) {missing}.")
    _check_attr_types(ds.attrs, source)
    problem = ds.attrs["problem"]
    if problem not in data_problems():
        raise _fail(source, f"attribute `problem` must be one of {data_problems()}; got "
                    f"{problem!r}.")
    kit = get_kit(problem)
    storage = ds.attrs[STORAGE_DTYPE]
    if storage not in ("float32", "float64"):
        raise _fail(source, f"attribute `{STORAGE_DTYPE}` must be float32 or float64; "
                    f"got {storage!r}.")

    expected = dict(kit.fields)
    for name, dims in kit.optional_fields.items():
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
        if got not in (dims, file_dims(dims)):  # the API's order, or the files' (dim_order)
            orders = dims if file_dims(dims) == dims else f"{dims} or {file_dims(dims)}"
            raise _fail(source, f"variable `{name}` must have dims {orders}; got {got}.")
        for key in ("units", "long_name"):
            if key not in ds[name].attrs:
                raise _fail(source, f"variable `{name}` misses the `{key}` attribute.")
    for name in kit.fields.keys() | (expected.keys() & kit.optional_fields.keys()):
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
    _check_against_record(ds.attrs, problem, source)
    return ds


def _plain(value: object) -> object:
    """A numpy scalar as the Python value (for messages)."""
    return value.item() if isinstance(value, np.generic) else value


def _is_integer(value: object) -> bool:
    return np.ndim(value) == 0 and is_int(value if not isinstance(value, np.ndarray) else
                                          value.item())


def _check_attr_types(attrs: Mapping[str, object], source: str) -> None:
    """The required global attributes have their documented types (an edited file may not)."""
    for key in REQUIRED_ATTRS:
        value = attrs[key]
        if key == "dataset_seed":
            # -1: unknown (imported data); else the seed of np.random.SeedSequence.
            if not _is_integer(value) or int(value) < -1:  # type: ignore[call-overload]
                raise _fail(source, f"attribute `dataset_seed` must be an integer >= 0 (-1 for "
                            f"imported data); got {_plain(value)!r}: the file was altered.")
        elif key != "neuralop_fem_schema_version" and not isinstance(value, str):
            raise _fail(source, f"attribute `{key}` must be text; got {_plain(value)!r} "
                        f"({type(value).__name__}): the file was altered.")


def _same(stored: object, recorded: object) -> bool:
    if isinstance(recorded, str) or isinstance(stored, str):
        return stored == recorded
    try:
        a, b = np.asarray(stored), np.asarray(recorded)
        return a.shape == b.shape and bool(np.all(a == b))
    except (TypeError, ValueError):
        return False


def _check_against_record(attrs: Mapping[str, object], problem: str, source: str) -> None:
    """A generated file's plain attributes repeat its provenance record (``config_json``):
    every setting, the seed, the solver and its settings. They must agree; an attribute that
    was edited after the file was written (or a record that was) is refused, naming both."""
    record = generation_settings(attrs, source=source)
    if record is None:
        _check_imported_physics(attrs, problem, source)
        return
    settings = record["settings"]
    if settings.get("problem") != problem:
        raise _fail(source, f"attribute `problem` ({problem!r}) disagrees with the provenance "
                    f"record `config_json` (problem {settings.get('problem')!r}): the file was "
                    "altered after it was written.")
    expected: dict[str, object] = {k: v for k, v in settings.items()
                                   if k != "problem" and v is not None}
    for key in ("solver_class", "solver_config", "chunk_size"):
        if key in record:
            expected[key] = record[key]
    try:
        plain = netcdf_attrs(expected)
    except DatasetError as exc:
        raise _fail(source, f"the provenance record `config_json` holds a value that is not a "
                    f"setting: {exc}") from None
    solver_from_record(attrs, problem, source=source)  # the recorded solver must rebuild
    for key, value in plain.items():
        if key not in attrs:
            continue  # a file of an earlier release may not repeat every setting
        if not _same(attrs[key], value):
            raise _fail(source, f"attribute `{key}` = {_plain(attrs[key])!r} disagrees with the "
                        f"provenance record `config_json` ({value!r}): the file was altered "
                        "after it was written.")


def _check_imported_physics(attrs: Mapping[str, object], problem: str, source: str) -> None:
    """An imported file's physical parameters: numbers (or null) in its provenance record,
    repeated by its plain attributes (``"unknown"`` for null). An attribute edited to
    ``'abc'``, ``-0.5`` or an array after the import is refused, naming both."""
    record = read_record(attrs, source=source)
    if "source_file" not in record or "format" not in record:  # not an import record
        return
    physics = record.get("physics")
    if not isinstance(physics, dict):
        raise _fail(source, f"the provenance record `config_json` must hold `physics`, a "
                    f"mapping; got {clipped_repr(physics)}: the file was altered.")
    for name in physics_options(get_problem(problem).data_problem):
        value = physics.get(name)
        number = is_real(value) and math.isfinite(value)
        if value is not None and (not number or (name != "forcing" and value <= 0)):
            bound = "a finite number" + ("" if name == "forcing" else " > 0")
            raise _fail(source, f"the provenance record `config_json` gives the {name} "
                        f"{clipped_repr(value)}; it must be {bound} or null: the file was "
                        "altered.")
        if name in attrs and not _same(attrs[name], "unknown" if value is None else value):
            raise _fail(source, f"attribute `{name}` = {printable(plain(attrs[name]), limit=200)} "
                        f"disagrees with the provenance record `config_json` "
                        f"({'unknown' if value is None else value!r}): the file was altered "
                        "after it was written.")


def _check_coords(ds: xr.Dataset, problem: str, source: str) -> None:
    spec = get_problem(problem)
    spatial = spec.dims
    grid = dataset_grid(ds.attrs, problem, source=source)
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
        want = spec.coordinates(n) if grid == spec.grid else grid_coordinates(grid, n)
        # 1e-12 absolute: the grid is i/n, i/(n-1) or (i + 1/2)/n computed in float64, exact
        # to ~1e-16.
        if not np.allclose(values, want, rtol=0.0, atol=1e-12):
            what = (spec.describe_grid(n) if grid == spec.grid
                    else describe_grid(grid, n, spec.ndim))
            raise _fail(source, f"coordinate `{name}` must be the uniform grid of {what}.")
    sizes = {ds.sizes[d] for d in spatial}
    if len(sizes) > 1:
        shape = " x ".join(str(ds.sizes[d]) for d in spatial)
        raise _fail(source, f"the {problem} grid must be square; got {shape}.")
    if TIME in ds.coords:
        _check_times(np.asarray(ds[TIME].values, dtype=np.float64).ravel(), source)


def _check_times(t: np.ndarray, source: str) -> None:
    """The output times: finite and strictly increasing (``[0, 2, 1]`` is refused)."""
    if not np.isfinite(t).all():
        raise _fail(source, "coordinate `time` must be finite.")
    steps = np.diff(t) <= 0
    if steps.any():
        i = int(np.argmax(steps)) + 1
        raise _fail(source, f"coordinate `time` must be strictly increasing; got "
                    f"{float(t[i - 1])!r} then {float(t[i])!r} at index {i}.")
