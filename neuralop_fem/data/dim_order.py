"""The order of the dimensions: ``(sample, [time,] x, y)`` in Python, ``(sample, [time,] y, x)``
in files.

The Python API returns every field as ``(sample, [time,] x[, y])`` (the solver contract;
docs/data_format.md). Files store the spatial dimensions the other way round,
``(sample, [time,] y, x)``: CF conventions recommend the order ``(..., T, Z, Y, X)``, and
xarray's default plot draws the last dimension horizontally, so
``xr.open_dataset(path).u.isel(sample=0).plot()`` puts x on the horizontal axis. Both
directions transpose by dimension name, so a file written in either order (files of earlier
releases are ``(sample, x, y)``) reads the same.

>>> import numpy as np, xarray as xr
>>> ds = xr.Dataset({"u": (("sample", "x", "y"), np.zeros((1, 3, 4)))})
>>> in_file_order(ds)["u"].dims
('sample', 'y', 'x')
>>> in_api_order(in_file_order(ds))["u"].dims
('sample', 'x', 'y')
>>> ds["u"].encoding["chunksizes"] = (1, 3, 4)  # as a file's variable records them
>>> in_file_order(ds)["u"].encoding["chunksizes"]
(1, 4, 3)
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TypeVar

import xarray as xr

from .names import SAMPLE, TIME, X, Y

__all__ = ["api_dims", "file_dims", "in_api_order", "in_file_order"]

#: Leading dimensions, in this order, before any other and the spatial ones.
_LEADING = (SAMPLE, TIME)
#: The spatial dimensions in the Python API's order (files reverse it).
_SPATIAL = (X, Y)

_Obj = TypeVar("_Obj", xr.Dataset, xr.DataArray)


def _ordered(dims: Iterable[Hashable], spatial: tuple[str, ...]) -> tuple[Hashable, ...]:
    dims = tuple(dims)
    rest = [d for d in dims if d not in _LEADING and d not in _SPATIAL]
    return (*(d for d in _LEADING if d in dims), *rest, *(d for d in spatial if d in dims))


def api_dims(dims: Iterable[Hashable]) -> tuple[Hashable, ...]:
    """``dims`` in the Python API's order: sample, time, others, then x, y.

    >>> api_dims(("y", "x", "sample"))
    ('sample', 'x', 'y')
    """
    return _ordered(dims, _SPATIAL)


def file_dims(dims: Iterable[Hashable]) -> tuple[Hashable, ...]:
    """``dims`` in the order of files (CF's ``(..., T, Y, X)``): sample, time, others, y, x.

    >>> file_dims(("sample", "time", "x"))
    ('sample', 'time', 'x')
    >>> file_dims(("sample", "x", "y"))
    ('sample', 'y', 'x')
    """
    return _ordered(dims, _SPATIAL[::-1])


def _transposed(obj: _Obj, order: tuple[Hashable, ...]) -> _Obj:
    """``obj`` transposed by name; a variable's on-disk ``chunksizes`` follow its dims."""
    out = obj.transpose(*order)
    variables = out.variables if isinstance(out, xr.Dataset) else {out.name: out.variable}
    before = obj.variables if isinstance(obj, xr.Dataset) else {obj.name: obj.variable}
    for name, var in variables.items():
        old = before[name].dims
        chunks = var.encoding.get("chunksizes")
        if old != var.dims and chunks is not None and len(chunks) == len(old):
            size = dict(zip(old, chunks, strict=True))
            var.encoding = {**var.encoding, "chunksizes": tuple(size[d] for d in var.dims)}
    return out


def in_api_order(obj: _Obj) -> _Obj:
    """A dataset or DataArray with every variable's dims in the API order (by name; a
    no-op on data already in it)."""
    return _transposed(obj, api_dims(obj.dims))


def in_file_order(obj: _Obj) -> _Obj:
    """A dataset or DataArray with every variable's dims in the order of files (by name)."""
    return _transposed(obj, file_dims(obj.dims))
