"""HDF5 files from elsewhere, opened so that what is read comes from the file itself.

An HDF5 file can make a reader return bytes that are not in it, or numbers that were never
written, without running any code:

* *external storage* (``H5Pset_external``): a dataset whose values are the bytes of another
  file on the reader's machine (``/etc/passwd``, a key file) at a given offset;
* *external links* and *virtual datasets*: objects whose values live in another HDF5 file;
* *unwritten storage*: a dataset that declares ``(10**6, n)`` values but whose chunks (or
  contiguous block) were never written reads back as its fill value, zeros by default;
* *compressed chunks* far larger than their stored bytes (a small file that inflates to
  gigabytes).

:func:`open_hdf5` opens a file read-only and refuses every external link (and a soft link
can then only point inside the file); :func:`checked_dataset` refuses a dataset with
external storage, a virtual layout, an unknown filter, storage that cannot hold its declared
size, chunks never written, or chunks beyond :data:`MAX_CHUNK_BYTES`. Each refusal is one
:class:`~neuralop_fem.errors.DatasetError` naming the file and the dataset. The readers of
PDEBench files, MATLAB v7.3 files and this package's own netCDF-4 files use them.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import DatasetError
from ..safe_text import printable

__all__ = [
    "MAX_CHUNK_BYTES",
    "MAX_INFLATION",
    "MAX_OBJECTS",
    "check_links",
    "check_stored",
    "checked_dataset",
    "open_hdf5",
]

#: Largest chunk (uncompressed bytes) read: a read of one sample inflates its whole chunk.
MAX_CHUNK_BYTES = 256 << 20
#: Largest ratio of declared to stored bytes of a compressed dataset. zlib (deflate) cannot
#: exceed 1032:1; the other filters HDF5 ships (lzf, szip, scale-offset, n-bit) compress less.
MAX_INFLATION = 1100
#: Most links followed while checking a file (PDEBench and MATLAB files hold a handful).
MAX_OBJECTS = 100_000

#: Filters of the HDF5 library and h5py: deflate, shuffle, Fletcher-32, szip, n-bit,
#: scale-offset, lzf.
_FILTERS = {1: "deflate", 2: "shuffle", 3: "fletcher32", 4: "szip", 5: "nbit",
            6: "scaleoffset", 32000: "lzf"}
_COMPRESSING = {1, 4, 5, 6, 32000}


def _name(path: Path | str) -> str:
    return printable(os.fspath(path), limit=300)


@contextmanager
def open_hdf5(path: str | os.PathLike[str], *, what: str = "an HDF5 file") -> Iterator[Any]:
    """An ``h5py.File`` opened read-only, its links checked (:func:`check_links`).

    Raises
    ------
    DatasetError
        No such file; not HDF5 or truncated (naming ``what`` the file should be); an
        external link.
    """
    import h5py

    path = Path(path)
    if not path.is_file():
        msg = f"{_name(path)}: no such file."
        raise DatasetError(msg)
    try:
        f = h5py.File(path, "r")
    except Exception as exc:  # OSError for truncated or non-HDF5 files
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        msg = (f"{_name(path)}: cannot be read as {what} (truncated or not HDF5?): "
               f"{printable(first, limit=200)}")
        raise DatasetError(msg) from None
    try:
        check_links(f, path)
        yield f
    finally:
        f.close()


def check_links(f: Any, path: Path) -> None:
    """Refuse an HDF5 file holding an external or user-defined link anywhere.

    Walks every group reached through hard links (each once; at most :data:`MAX_OBJECTS`
    links). Soft links stay: without external links their targets are inside the file.
    """
    import h5py

    seen: set[Any] = set()
    stack = [f]
    count = 0
    while stack:
        group = stack.pop()
        for name in group:
            count += 1
            if count > MAX_OBJECTS:
                msg = (f"{_name(path)}: holds more than {MAX_OBJECTS} objects; a data file of "
                       "this package's formats holds a few.")
                raise DatasetError(msg)
            link = group.get(name, getlink=True)
            where = printable(f"{group.name.rstrip('/')}/{name}", limit=200)
            if isinstance(link, h5py.ExternalLink):
                msg = (f"{_name(path)}: `{where}` is an external link to "
                       f"{printable(link.filename, limit=200)!s}; refused: its values would "
                       "come from another file. Copy the data into the file itself.")
                raise DatasetError(msg)
            if isinstance(link, h5py.SoftLink):
                continue
            if not isinstance(link, h5py.HardLink):
                msg = f"{_name(path)}: `{where}` is a user-defined link; refused."
                raise DatasetError(msg)
            obj = group.get(name)
            if isinstance(obj, h5py.Group) and obj.id not in seen:  # ids hash by object
                seen.add(obj.id)
                stack.append(obj)


def check_stored(path: Path, names: Iterable[str], *, what: str) -> None:
    """Open the HDF5 file ``path`` (:func:`open_hdf5`) and check each root dataset of
    ``names`` with :func:`checked_dataset` (a netCDF-4 file's variables, say)."""
    import h5py

    with open_hdf5(path, what=what) as f:
        for name in names:
            node = f.get(name)
            if isinstance(node, h5py.Dataset):
                checked_dataset(path, name, node)


def checked_dataset(path: Path, key: str, node: Any) -> Any:
    """``node`` (an ``h5py.Dataset``) once its values are known to be stored in the file.

    Raises
    ------
    DatasetError
        Naming the file and ``key``: external storage, a virtual dataset, a filter outside
        :data:`_FILTERS`, a chunk above :data:`MAX_CHUNK_BYTES`, chunks never written, a
        contiguous block smaller than the declared size, or compressed chunks declaring more
        than :data:`MAX_INFLATION` times their stored bytes.
    """
    import h5py

    where = f"{_name(path)}: dataset `{printable(key, limit=200)}`"
    if node.external:
        target = printable(node.external[0][0], limit=200)
        msg = (f"{where} keeps its values in another file ({target}, HDF5 external storage); "
               "refused: any file readable here could be copied into the output.")
        raise DatasetError(msg)
    if node.is_virtual:
        msg = f"{where} is a virtual dataset (values from other files); refused."
        raise DatasetError(msg)
    plist = node.id.get_create_plist()
    filters = [plist.get_filter(i)[0] for i in range(plist.get_nfilters())]
    unknown = [f for f in filters if f not in _FILTERS]
    if unknown:
        msg = (f"{where} uses HDF5 filter {unknown[0]}; only "
               f"{', '.join(_FILTERS.values())} are read.")
        raise DatasetError(msg)
    itemsize = node.dtype.itemsize
    declared = math.prod(node.shape) * itemsize
    stored = node.id.get_storage_size()
    layout = plist.get_layout()
    if declared == 0 or layout == h5py.h5d.COMPACT:
        return node
    if layout == h5py.h5d.CHUNKED:
        chunk_bytes = math.prod(node.chunks) * itemsize
        if chunk_bytes > MAX_CHUNK_BYTES:
            msg = (f"{where} has chunks of {chunk_bytes:,} bytes {node.chunks}; the limit is "
                   f"{MAX_CHUNK_BYTES:,} (each read inflates a whole chunk).")
            raise DatasetError(msg)
        expected = math.prod(math.ceil(s / c) for s, c in zip(node.shape, node.chunks,
                                                               strict=True))
        written = node.id.get_num_chunks()
        if written < expected:
            first = _first_missing(node, expected)
            msg = (f"{where} declares shape {node.shape} but only {written} of its {expected} "
                   f"chunks were written (the first missing one starts at index {first}); "
                   "unwritten values would read as fill values. Refused: the file is "
                   "incomplete.")
            raise DatasetError(msg)
        if any(f in _COMPRESSING for f in filters) and declared > MAX_INFLATION * stored:
            msg = (f"{where} declares {declared:,} bytes stored in {stored:,}, more than "
                   f"{MAX_INFLATION} times: no compression reaches that. Refused.")
            raise DatasetError(msg)
        return node
    if stored < declared:
        msg = (f"{where} declares shape {node.shape} ({declared:,} bytes) but stores "
               f"{stored:,} bytes; unwritten values would read as fill values. Refused: the "
               "file is incomplete.")
        raise DatasetError(msg)
    return node


def _first_missing(node: Any, expected: int) -> tuple[int, ...] | str:
    """The start index of the first chunk never written (searched among the first
    10000 chunks in storage order), else ``"unknown"``."""
    written = {node.id.get_chunk_info(i).chunk_offset
               for i in range(min(node.id.get_num_chunks(), 10_000))}
    grid = [range(0, s, c) for s, c in zip(node.shape, node.chunks, strict=True)]
    for i in range(min(expected, 10_000)):
        offset, rest = [], i
        for axis in reversed(grid):
            offset.append(axis[rest % len(axis)])
            rest //= len(axis)
        start = tuple(reversed(offset))
        if start not in written:
            return start
    return "unknown"
