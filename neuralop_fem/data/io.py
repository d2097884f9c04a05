"""Save and load neuralop_fem datasets as netCDF4 files.

Files are written with the netCDF4 engine (HDF5 storage), field variables chunked by sample,
zlib-compressed with the shuffle filter and Fletcher-32 checksums (a corrupted chunk raises on
read instead of returning wrong numbers). A save goes to a temporary file in the target
directory and is renamed into place with :func:`os.replace`, so a killed run never leaves a
file that looks complete. Loading is lazy (dask-backed) and validates the schema first;
:func:`read_values` reads a lazy variable and turns a damaged chunk (netCDF/HDF5 raise
``RuntimeError`` or ``OSError`` when its checksum fails) into a
:class:`~neuralop_fem.errors.DatasetError` naming the file and the variable.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from ..errors import DatasetError, InputError
from ..files import atomic_path, open_for_reading
from . import schema as S
from .dim_order import api_dims, in_file_order
from .provenance import field_names
from .safe_hdf5 import check_stored
from .validation import validate

__all__ = [
    "CHUNK_BYTES",
    "as_storage_dtype",
    "check_target",
    "is_netcdf_file",
    "load_dataset",
    "read_values",
    "reading",
    "save_dataset",
    "source_of",
    "verify_dataset",
]

#: Target size in bytes of one on-disk chunk of a field variable (whole samples per chunk).
CHUNK_BYTES = 1 << 20

_DTYPES = ("float32", "float64")

#: Signatures of netCDF classic / 64-bit offset / CDF-5 and netCDF-4 (HDF5) files.
_NETCDF_MAGIC = (b"CDF\x01", b"CDF\x02", b"CDF\x05", b"\x89HDF\r\n\x1a\n")


def is_netcdf_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` starts with a netCDF signature (classic, 64-bit offset, CDF-5 or
    netCDF-4/HDF5), read from its first 8 bytes only; a path that is not a readable regular
    file raises :class:`~neuralop_fem.errors.DatasetError`."""
    with open_for_reading(path, what="a netCDF dataset", error=DatasetError) as fh:
        return fh.read(8).startswith(_NETCDF_MAGIC)


def as_storage_dtype(ds: xr.Dataset, dtype: str) -> xr.Dataset:
    """Return ``ds`` with its field variables cast to ``dtype`` and the attribute updated.

    Coordinates and diagnostics keep their schema dtypes (float64/int64/uint64).

    Parameters
    ----------
    ds : xarray.Dataset
        A dataset that follows the schema.
    dtype : {"float64", "float32"}
    """
    if dtype not in _DTYPES:
        msg = f"`dtype` must be one of {_DTYPES}; got {dtype!r}."
        raise InputError(msg)
    names = [n for n in field_names(ds) if n in ds.data_vars]
    out = ds.copy()
    for name in names:
        out[name] = ds[name].astype(dtype)
    out.attrs[S.STORAGE_DTYPE] = dtype
    return out


def _encoding(ds: xr.Dataset) -> dict[str, dict[str, Any]]:
    enc: dict[str, dict[str, Any]] = {}
    for name, var in ds.variables.items():
        if name in ds.coords:
            # Coordinates have no missing values: no _FillValue (cleaner ncdump, CF).
            enc[str(name)] = {"_FillValue": None}
            continue
        e: dict[str, Any] = {"zlib": True, "complevel": 1, "shuffle": True, "fletcher32": True}
        if var.dims and var.dims[0] == S.SAMPLE and var.ndim > 1:
            per_sample = int(np.prod(var.shape[1:])) * var.dtype.itemsize
            k = max(1, min(var.shape[0], CHUNK_BYTES // max(per_sample, 1)))
            e["chunksizes"] = (k, *var.shape[1:])
        elif var.dims:
            e["chunksizes"] = tuple(var.shape)
        if var.dtype.kind in "iu":
            e["_FillValue"] = None
        enc[str(name)] = e
    return enc


def save_dataset(
    ds: xr.Dataset, path: str | os.PathLike[str], *, dtype: str = "float64", overwrite: bool = False
) -> Path:
    """Write a dataset to a netCDF4 file, atomically.

    Parameters
    ----------
    ds : xarray.Dataset
        Must follow the schema (checked with :func:`~neuralop_fem.data.validation.validate`).
        May be lazy (dask-backed, e.g. from :func:`load_dataset`). Its fields are written
        ``(sample, [time,] y, x)``, CF's order, whatever their order in ``ds``
        (:mod:`~neuralop_fem.data.dim_order`).
    path : path-like
        Target file; its directory must exist.
    dtype : {"float64", "float32"}
        Storage type of the field variables; recorded in the ``storage_dtype`` attribute.
    overwrite : bool
        Replace an existing file; without it an existing ``path`` is an error.

    Returns
    -------
    pathlib.Path
        The written file.

    Raises
    ------
    InputError
        ``path`` exists and ``overwrite`` is False, its directory does not exist, or a bad dtype.
    DatasetError
        ``ds`` does not follow the schema.
    """
    path = check_target(path, overwrite=overwrite)
    if dtype not in _DTYPES:
        msg = f"`dtype` must be one of {_DTYPES}; got {dtype!r}."
        raise InputError(msg)
    validate(ds, source="dataset to save")
    out = in_file_order(as_storage_dtype(ds, dtype))
    for var in out.variables.values():
        var.encoding = {}
    with atomic_path(path) as tmp:
        out.to_netcdf(tmp, mode="w", format="NETCDF4", engine="netcdf4", encoding=_encoding(out))
    return path


def check_target(path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Check that a dataset can be written at ``path``; return it as a :class:`~pathlib.Path`.

    Raises
    ------
    InputError
        ``path`` is a directory or another non-regular file (a device, a FIFO), exists and
        ``overwrite`` is False, or its directory does not exist.
    """
    path = Path(path)
    if path.is_dir():
        msg = f"`path` must be a file name; got {path}, which is a directory."
        raise InputError(msg)
    if path.exists() and not path.is_file():  # a device or FIFO is never replaced
        msg = f"`path` must be a file name; got {path}, which is not a regular file."
        raise InputError(msg)
    if path.exists() and not overwrite:
        msg = (f"`path` must not exist (pass overwrite=True to replace it); got existing file "
               f"{path}.")
        raise InputError(msg)
    if not path.parent.is_dir():
        msg = f"`path` must be in an existing directory; got {path} ({path.parent} does not exist)."
        raise InputError(msg)
    return path


def source_of(ds: xr.Dataset) -> str:
    """The file a dataset was opened from (``"<in-memory dataset>"`` if none)."""
    return str(ds.encoding.get("source", "<in-memory dataset>"))


@contextmanager
def reading(ds: xr.Dataset, name: str, where: str = "") -> Iterator[None]:
    """Turn a read error of variable ``name`` of ``ds`` into a :class:`DatasetError`.

    netCDF4/HDF5 raise ``RuntimeError`` ("NetCDF: HDF error") or ``OSError`` when a chunk
    fails its Fletcher-32 checksum or cannot be decompressed; the message names the file, the
    variable and ``where`` (e.g. ``"samples 4..7"``).
    """
    try:
        yield
    except (OSError, RuntimeError) as exc:
        place = f" ({where})" if where else ""
        msg = (f"{source_of(ds)}: variable `{name}`{place} cannot be read: the file is corrupt or "
               f"truncated (a damaged chunk fails its checksum): {exc}")
        raise DatasetError(msg) from exc


def _describe(dim: str, sel: Any) -> str:
    if isinstance(sel, slice):
        start = 0 if sel.start is None else sel.start
        stop = "end" if sel.stop is None else sel.stop - 1
        return f"{dim} {start}..{stop}"
    values = np.atleast_1d(np.asarray(sel))
    if values.size == 1:
        return f"{dim} {values[0]}"
    return f"{dim} {values.min()}..{values.max()} ({values.size} positions)"


def read_values(ds: xr.Dataset, name: str, **isel: Any) -> np.ndarray:
    """The values of ``ds[name].isel(**isel)`` as a numpy array (reads lazy data).

    Raises
    ------
    DatasetError
        When the file is damaged where the values are stored (see :func:`reading`).
    """
    where = ", ".join(_describe(k, v) for k, v in isel.items())
    with reading(ds, name, where):
        return np.asarray(ds[name].isel(isel).values)


def verify_dataset(ds: xr.Dataset, *, first: Sequence[str] = (),
                   on_block: Callable[[str, np.ndarray], None] | None = None) -> int:
    """Read every value of a (lazily opened) dataset, one on-disk chunk at a time.

    Each chunk's Fletcher-32 checksum is verified by the read, so this finds a damaged file
    that opens fine because only data (not metadata) is corrupt. Memory stays at one chunk.
    The variables ``first`` are read first, in that order, then the others; ``on_block(name,
    values)`` sees every block read (e.g. a
    :class:`~neuralop_fem.data.provenance.ValuesDigest`), in sample order per variable.

    Returns
    -------
    int
        The number of blocks read.

    Raises
    ------
    DatasetError
        Naming the file, the variable and the samples of the first damaged chunk.
    """
    blocks = 0
    names = [*first, *(str(n) for n in ds.data_vars if str(n) not in first)]
    for name in names:
        var = ds[name]
        if var.dims[:1] != (S.SAMPLE,):
            values = read_values(ds, name)
            if on_block is not None:
                on_block(name, values)
            blocks += 1
            continue
        chunks = var.encoding.get("chunksizes") or (var.shape[0],)
        step = max(int(chunks[0]), 1)
        for start in range(0, var.shape[0], step):
            values = read_values(ds, name, sample=slice(start, min(start + step, var.shape[0])))
            if on_block is not None:
                on_block(name, values)
            blocks += 1
    return blocks


def load_dataset(
    path: str | os.PathLike[str],
    *,
    chunks: int | Mapping[str, int] | None = None,
) -> xr.Dataset:
    """Open a neuralop_fem netCDF file lazily and validate it.

    Parameters
    ----------
    path : path-like
    chunks : int, mapping or None
        dask chunking. None (default): the file's own chunks (whole samples, ~1 MiB);
        an int: that many samples per chunk; a mapping: passed to xarray as is.

    Returns
    -------
    xarray.Dataset
        dask-backed: nothing but coordinates is read until asked (``.load()``, ``.values``).
        Fields in the API's order ``(sample, [time,] x, y)``, whichever order the file
        stores (transposed by name, :mod:`~neuralop_fem.data.dim_order`).

    Raises
    ------
    DatasetError
        ``"<path>: <what is wrong>"`` if the file does not exist, is not netCDF, is truncated
        or corrupt, or does not follow the schema (see
        :func:`~neuralop_fem.data.validation.validate`).
    """
    path = Path(path)
    if not path.is_file():
        msg = f"{path}: no such file."
        raise DatasetError(msg)
    rechunk: dict[str, int] | None = None
    xr_chunks: Any = {}
    if chunks is None:
        pass
    elif isinstance(chunks, int | np.integer) and not isinstance(chunks, bool):
        if chunks < 1:
            msg = f"`chunks` must be >= 1 samples; got {chunks}."
            raise InputError(msg)
        # Rechunk after opening: the per-sample vectors are stored as one chunk.
        rechunk = {S.SAMPLE: int(chunks)}
    elif isinstance(chunks, Mapping):
        xr_chunks = dict(chunks)
    else:
        msg = f"`chunks` must be None, an int or a mapping; got {chunks!r}."
        raise InputError(msg)
    try:
        # chunks=None: lazily indexed arrays, wrapped below so that every read is guarded.
        ds = xr.open_dataset(path, engine="netcdf4", chunks=None, decode_timedelta=False)
    except Exception as exc:  # netCDF4/HDF5 raise OSError, RuntimeError, AttributeError ...
        msg = f"{path}: cannot be read as a netCDF4 file (not netCDF, truncated or corrupt): {exc}"
        raise DatasetError(msg) from exc
    try:
        validate(ds, source=str(path))
        _check_stored(path, ds)
        ds = _guard_reads(ds, path)
    except BaseException:
        ds.close()
        raise
    if xr_chunks:
        ds = ds.chunk(xr_chunks)
    return ds if rechunk is None else ds.chunk(rechunk)


def _check_stored(path: Path, ds: xr.Dataset) -> None:
    """Refuse a file whose variables declare more values than it stores.

    netCDF returns the fill value for values never written (a file declaring 10**6 samples
    with 6 written reads as 6 samples and 999 994 of NaN, and its chunks pass their
    checksums: none exist to check). A netCDF-4 file is checked through HDF5
    (:func:`~neuralop_fem.data.safe_hdf5.check_stored`: every chunk written, no external
    storage or links); a classic one, which stores every value uncompressed, must be at least
    as large as its variables.
    """
    names = [str(n) for n in ds.variables]
    with open_for_reading(path, what="a netCDF dataset", error=DatasetError) as fh:
        hdf5 = fh.read(8) == _NETCDF_MAGIC[-1]
        size = os.fstat(fh.fileno()).st_size
    if hdf5:
        check_stored(path, names, what="a netCDF4 (HDF5) file")
        return
    declared = sum(math.prod(v.shape) * v.dtype.itemsize for v in ds.variables.values())
    if declared > size:
        msg = (f"{path}: its variables declare {declared:,} bytes but the file holds "
               f"{size:,}: it is truncated, or declares samples that were never written.")
        raise DatasetError(msg)


class _GuardedReader:
    """A lazily opened netCDF variable as dask reads it: each read of a block goes through
    :meth:`__getitem__`, which turns the netCDF/HDF5 error of a damaged or missing chunk
    (``RuntimeError: NetCDF: HDF error``, ``OSError``) into a :class:`DatasetError` naming the
    file, the variable and the samples. Any computation on a dataset from
    :func:`load_dataset` (``.values``, ``.load()``, ``.mean()``, a re-save) reads through it.
    It shows the variable with dims ``dims`` (the API's order), whatever the file's order:
    keys and values are transposed by dimension name."""

    def __init__(self, variable: xr.Variable, *, name: str, source: str,
                 dims: tuple[Any, ...]) -> None:
        self._variable = variable
        self._name = name
        self._source = source
        self._dims = dims
        self.shape = tuple(variable.sizes[d] for d in dims)
        self.dtype = variable.dtype
        self.ndim = variable.ndim

    def __getitem__(self, key: Any) -> np.ndarray:
        key = key if isinstance(key, tuple) else (key,)
        if any(k is Ellipsis for k in key):
            at = next(i for i, k in enumerate(key) if k is Ellipsis)
            key = (*key[:at], *(slice(None),) * (self.ndim - len(key) + 1), *key[at + 1:])
        by_dim = dict(zip(self._dims, (*key, *(slice(None),) * (self.ndim - len(key))),
                          strict=True))
        try:
            values = self._variable[tuple(by_dim[d] for d in self._variable.dims)]
            return np.asarray(values.transpose(*(d for d in self._dims if d in values.dims))
                              .values)
        except (OSError, RuntimeError) as exc:
            where = ""
            if self._variable.dims[:1] == (S.SAMPLE,) and key:
                where = f" ({_describe(S.SAMPLE, _block_start(key[0]))})"
            msg = (f"{self._source}: variable `{self._name}`{where} cannot be read: the file is "
                   f"corrupt or truncated (a damaged chunk fails its checksum): {exc}")
            raise DatasetError(msg) from exc


def _block_start(sel: Any) -> Any:
    """A one-sample slice as that sample's index (dask asks ``slice(k, k + 1)`` for ``isel``)."""
    if isinstance(sel, slice) and sel.start is not None and sel.stop == sel.start + 1:
        return sel.start
    return sel


def _guard_reads(ds: xr.Dataset, path: Path) -> xr.Dataset:
    """``ds`` (opened with ``chunks=None``) with every data variable a dask array of the
    file's own chunks that reads through :class:`_GuardedReader`, its dims in the API's
    order (:func:`~neuralop_fem.data.dim_order.api_dims`)."""
    import dask.array as da
    from dask.base import tokenize

    stamp = path.stat().st_mtime_ns
    guarded = {}
    for name, var in ds.data_vars.items():
        dims = api_dims(var.dims)  # the file may store (sample, y, x): read by name
        stored = dict(zip(var.dims, var.encoding.get("chunksizes") or var.shape, strict=True))
        chunks = tuple(stored[d] for d in dims)
        reader = _GuardedReader(var.variable, name=str(name), source=str(path), dims=dims)
        token = tokenize(str(path.resolve()), stamp, str(name), chunks, dims)
        data = da.from_array(reader, chunks=chunks, name=f"neuralop-fem-read-{token}",
                             lock=False, meta=np.empty((0,) * var.ndim, dtype=var.dtype))
        encoding = dict(var.encoding)
        if "chunksizes" in encoding:
            encoding["chunksizes"] = chunks
        guarded[name] = xr.Variable(dims, data, var.attrs, encoding)
    out = ds.copy()
    for name, variable in guarded.items():
        out[name] = variable
    out.set_close(ds.close)  # closing the result closes the file
    return out
