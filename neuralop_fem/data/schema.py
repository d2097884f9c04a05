"""The neuralop_fem dataset schema: names, attributes, builders and validation.

One :class:`xarray.Dataset` per problem, stored as one netCDF4 file (see
``docs/data_format.md``). Every name used in files is defined once, in
:mod:`neuralop_fem.data.names` (the layer below this one, which the validation and the
provenance record import too), and re-exported here.

Burgers (1D periodic, grid ``x_i = i/n`` on [0, 1), no duplicated endpoint)::

    u0(sample, x)            initial condition
    u(sample, x)             solution at the final time
    u_t(sample, time, x)     optional trajectory at the output times

Darcy (2D node grid ``x_i = i/(n-1)`` on [0, 1], boundary included)::

    a(sample, x, y)          coefficient of -div(a grad u) = f
    u(sample, x, y)          solution, u = 0 on the boundary

Both, per sample: ``seed`` (uint64), ``iterations`` (int64), ``residual`` (float64),
``solve_time`` (float64, seconds). Coordinate ``sample`` is the int64 global sample index.

These are the dims in Python; files store the spatial dims reversed, ``(sample, y, x)``
(CF's order; :mod:`~neuralop_fem.data.dim_order`).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from typing import Any

import numpy as np
import xarray as xr
from numpy.typing import ArrayLike, DTypeLike

from solvers.grids import GRID_CONVENTIONS

from .._version import __version__
from ..errors import DatasetError
from ..problems import get_kit
from .attrs import netcdf_attrs
from .grids import dataset_grid, grid_coordinates
from .names import (
    COMMON_ATTRS,
    CONVENTIONS,
    DIAGNOSTICS,
    ITERATIONS,
    ITERATIONS_UNKNOWN,
    REQUIRED_ATTRS,
    RESIDUAL,
    SAMPLE,
    SCHEMA_VERSION,
    SEED,
    SEED_UNKNOWN,
    SOLVE_TIME,
    STORAGE_DTYPE,
    TIME,
    U0,
    U_T,
    A,
    U,
    X,
    Y,
)
from .provenance import ATTR, default_record
from .validation import validate

__all__ = [
    "A",
    "COMMON_ATTRS",
    "CONVENTIONS",
    "DIAGNOSTICS",
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
    "burgers_dataset",
    "burgers_grid",
    "darcy_dataset",
    "darcy_grid",
    "field_dataset",
    "netcdf_attrs",
    "variable_attrs",
]


def variable_attrs(problem: str, name: str) -> dict[str, str]:
    """``units``, ``long_name`` ... of variable or coordinate ``name`` in a ``problem`` file:
    the problem kit's ``variable_attrs``, else the shared :data:`COMMON_ATTRS`."""
    table = get_kit(problem).variable_attrs
    return dict(table[name] if name in table else COMMON_ATTRS[name])


_var_attrs = variable_attrs


def burgers_grid(n: int) -> np.ndarray:
    """The periodic Burgers grid ``x_i = i/n``, ``i = 0..n-1`` (float64, shape ``(n,)``)."""
    return grid_coordinates("periodic", n)


def darcy_grid(n: int) -> np.ndarray:
    """The Darcy node grid ``x_i = i/(n-1)``, ``i = 0..n-1`` on [0, 1] (float64, ``(n,)``)."""
    return grid_coordinates("nodes", n)


def _global_attrs(problem: str, attrs: Mapping[str, object], dtype: np.dtype) -> dict[str, Any]:
    plain = netcdf_attrs(attrs)
    config_json = plain.pop(ATTR, None)
    if config_json is None:
        config_json = default_record(attrs)
    out: dict[str, Any] = {
        "Conventions": CONVENTIONS,
        "title": f"neuralop_fem {problem} dataset",
        "problem": problem,
        "neuralop_fem_schema_version": SCHEMA_VERSION,
        "neuralop_fem_version": __version__,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        STORAGE_DTYPE: str(dtype),
    }
    out.update(plain)
    out["problem"] = problem
    out["neuralop_fem_schema_version"] = SCHEMA_VERSION
    out[ATTR] = config_json
    return out


def _field(values: ArrayLike, *, name: str, ndim: int) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype not in (np.float32, np.float64):
        msg = f"`{name}` must be a float32 or float64 array; got dtype {arr.dtype}."
        raise DatasetError(msg)
    if arr.ndim != ndim:
        msg = f"`{name}` must have {ndim} dimensions; got shape {arr.shape}."
        raise DatasetError(msg)
    return arr


def _per_sample(values: ArrayLike, *, name: str, n: int, dtype: DTypeLike) -> np.ndarray:
    arr = np.asarray(values)
    if arr.shape != (n,):
        msg = f"`{name}` must have shape ({n},), one entry per sample; got shape {arr.shape}."
        raise DatasetError(msg)
    if dtype is np.uint64 and arr.dtype.kind == "i" and (arr < 0).any():
        msg = f"`{name}` must be non-negative integers; got a minimum of {arr.min()}."
        raise DatasetError(msg)
    return arr.astype(dtype)


def _assemble(
    problem: str,
    fields: dict[str, tuple[tuple[str, ...], np.ndarray]],
    coords: Mapping[str, ArrayLike],
    *,
    seed: ArrayLike,
    iterations: ArrayLike,
    residual: ArrayLike,
    solve_time: ArrayLike,
    attrs: Mapping[str, object],
) -> xr.Dataset:
    n = next(iter(fields.values()))[1].shape[0]
    dtypes = {arr.dtype for _, arr in fields.values()}
    if len(dtypes) != 1:
        msg = f"the fields must share one dtype; got {sorted(str(d) for d in dtypes)}."
        raise DatasetError(msg)
    data_vars: dict[str, Any] = {
        name: (dims, arr, _var_attrs(problem, name)) for name, (dims, arr) in fields.items()
    }
    per_sample = {
        SEED: (seed, np.uint64),
        ITERATIONS: (iterations, np.int64),
        RESIDUAL: (residual, np.float64),
        SOLVE_TIME: (solve_time, np.float64),
    }
    for name, (values, dtype) in per_sample.items():
        arr = _per_sample(values, name=name, n=n, dtype=dtype)
        data_vars[name] = ((SAMPLE,), arr, _var_attrs(problem, name))
    xr_coords = {
        name: ((name,), np.asarray(values), _var_attrs(problem, name))
        for name, values in coords.items()
    }
    ds = xr.Dataset(data_vars, coords=xr_coords, attrs=_global_attrs(problem, attrs, dtypes.pop()))
    return validate(ds, source="<in-memory dataset>")


def _sample_coord(sample: ArrayLike | None, n: int) -> np.ndarray:
    if sample is None:
        return np.arange(n, dtype=np.int64)
    arr = np.asarray(sample)
    if arr.shape != (n,) or arr.dtype.kind not in "iu":
        msg = f"`sample` must be {n} integer indices; got dtype {arr.dtype}, shape {arr.shape}."
        raise DatasetError(msg)
    return arr.astype(np.int64)


def burgers_dataset(
    u0: ArrayLike,
    u: ArrayLike,
    *,
    x: ArrayLike | None = None,
    sample: ArrayLike | None = None,
    seed: ArrayLike,
    iterations: ArrayLike,
    residual: ArrayLike,
    solve_time: ArrayLike,
    attrs: Mapping[str, object],
    u_t: ArrayLike | None = None,
    time: ArrayLike | None = None,
) -> xr.Dataset:
    """Build a Burgers dataset that follows the schema.

    Parameters
    ----------
    u0, u : (n_samples, n) float array
        Initial condition and solution at the final time on the grid ``x_i = i/n``.
    x : (n,) float array, optional
        Grid; default ``burgers_grid(n)``. Must equal it (validated).
    sample : (n_samples,) int array, optional
        Global sample indices; default ``0..n_samples-1``.
    seed, iterations, residual, solve_time : (n_samples,) arrays
        Per-sample seed (uint64), time steps, error estimate and wall time (s).
    attrs : mapping
        Global attributes: must hold ``dataset_seed`` and ``source``; every physical and
        numerical parameter (``viscosity``, ``final_time``, ``grf_sigma`` ...); optional
        ``config_json`` (default: a JSON copy of ``attrs``), ``title``, ``created``. Values are
        converted with :func:`netcdf_attrs`.
    u_t : (n_samples, n_times, n) float array, optional
        Trajectory at the times ``time`` (required together).

    Returns
    -------
    xarray.Dataset
        Validated with :func:`~neuralop_fem.data.validation.validate`.
    """
    u0 = _field(u0, name=U0, ndim=2)
    u = _field(u, name=U, ndim=2)
    if u0.shape != u.shape:
        msg = f"`u` must have the shape of `u0` {u0.shape}; got {u.shape}."
        raise DatasetError(msg)
    n_samples, n = u.shape
    fields = {U0: ((SAMPLE, X), u0), U: ((SAMPLE, X), u)}
    coords = {SAMPLE: _sample_coord(sample, n_samples), X: burgers_grid(n) if x is None else x}
    if (u_t is None) != (time is None):
        msg = "`u_t` and `time` must be given together; got only one of them."
        raise DatasetError(msg)
    if u_t is not None:
        u_t = _field(u_t, name=U_T, ndim=3)
        time = np.asarray(time, dtype=np.float64)
        if u_t.shape != (n_samples, time.size, n):
            msg = f"`u_t` must have shape {(n_samples, time.size, n)}; got {u_t.shape}."
            raise DatasetError(msg)
        fields[U_T] = ((SAMPLE, TIME, X), u_t)
        coords[TIME] = time
    return _assemble(
        "burgers",
        fields,
        coords,
        seed=seed,
        iterations=iterations,
        residual=residual,
        solve_time=solve_time,
        attrs=attrs,
    )


def darcy_dataset(
    a: ArrayLike,
    u: ArrayLike,
    *,
    x: ArrayLike | None = None,
    y: ArrayLike | None = None,
    sample: ArrayLike | None = None,
    seed: ArrayLike,
    iterations: ArrayLike,
    residual: ArrayLike,
    solve_time: ArrayLike,
    attrs: Mapping[str, object],
) -> xr.Dataset:
    """Build a Darcy dataset that follows the schema.

    Parameters
    ----------
    a, u : (n_samples, n, n) float array
        Coefficient and solution of ``-div(a grad u) = f``, ``u = 0`` on the boundary, on the
        node grid ``x_i = y_i = i/(n-1)`` (or the grid ``attrs["grid"]`` names,
        :mod:`neuralop_fem.data.grids`); axis 1 is ``x``, axis 2 is ``y``.
    x, y : (n,) float array, optional
        Grid; default ``darcy_grid(n)`` (the coordinates of ``attrs["grid"]``). Must equal it
        (validated).
    sample, seed, iterations, residual, solve_time, attrs
        As in :func:`burgers_dataset` (``attrs`` with ``forcing``, ``contrast_high`` ...).
    """
    a = _field(a, name=A, ndim=3)
    u = _field(u, name=U, ndim=3)
    if a.shape != u.shape or a.shape[1] != a.shape[2]:
        msg = f"`a` and `u` must have one shape (n_samples, n, n); got {a.shape} and {u.shape}."
        raise DatasetError(msg)
    n_samples, n, _ = a.shape
    grid = dataset_grid(attrs, "darcy", source="`attrs`")
    axis = darcy_grid(n) if grid == "nodes" else grid_coordinates(grid, n)
    coords = {
        SAMPLE: _sample_coord(sample, n_samples),
        X: axis if x is None else x,
        Y: axis if y is None else y,
    }
    ds = _assemble(
        "darcy",
        {A: ((SAMPLE, X, Y), a), U: ((SAMPLE, X, Y), u)},
        coords,
        seed=seed,
        iterations=iterations,
        residual=residual,
        solve_time=solve_time,
        attrs=attrs,
    )
    if grid != "nodes":
        for dim in (X, Y):
            ds[dim].attrs["comment"] = f"{grid} grid: {GRID_CONVENTIONS[grid]}"
    return ds


def field_dataset(
    problem: str,
    inputs: ArrayLike,
    outputs: ArrayLike,
    *,
    sample: ArrayLike | None = None,
    seed: ArrayLike,
    iterations: ArrayLike,
    residual: ArrayLike,
    solve_time: ArrayLike,
    attrs: Mapping[str, object],
) -> xr.Dataset:
    """Build a dataset of any registered ``problem`` from its input and output fields.

    The builder a new problem's kit can name as its ``dataset_builder`` (with
    :func:`functools.partial` for ``problem``): the two fields of the kit's ``fields`` in
    order, on the grid of the problem's :meth:`~solvers.problems.Problem.coordinates` along
    each spatial dimension.

    Parameters
    ----------
    inputs, outputs : (n_samples, n, ...) float array
        The input and output fields, one grid point per entry of each spatial dimension.
    sample, seed, iterations, residual, solve_time, attrs
        As in :func:`burgers_dataset`.
    """
    kit = get_kit(problem)
    spec = kit.problem
    (in_name, in_dims), (out_name, out_dims) = list(kit.fields.items())[:2]
    a = _field(inputs, name=in_name, ndim=len(in_dims))
    u = _field(outputs, name=out_name, ndim=len(out_dims))
    if a.shape != u.shape:
        msg = f"`{out_name}` must have the shape of `{in_name}` {a.shape}; got {u.shape}."
        raise DatasetError(msg)
    coords: dict[str, ArrayLike] = {SAMPLE: _sample_coord(sample, a.shape[0])}
    for dim, n in zip(spec.dims, a.shape[1:], strict=True):
        coords[dim] = spec.coordinates(n)
    return _assemble(problem, {in_name: (in_dims, a), out_name: (out_dims, u)}, coords,
                     seed=seed, iterations=iterations, residual=residual,
                     solve_time=solve_time, attrs=attrs)
