"""Atomic file writes: the one helper every writer of the package uses.

A file is written to a fresh temporary file in the target's own directory (created with
``O_EXCL`` by :func:`tempfile.mkstemp`, so an existing file or a symbolic link planted at
some name is never opened or followed), flushed to disk (``fsync``), and renamed over the
target with :func:`os.replace` (which replaces a link at the target instead of writing
through it); the directory entry is then synced too. A write that fails or is killed leaves
the previous file untouched and, at worst, a hidden ``.NAME.*.tmp`` file that
:func:`remove_stale_temporaries` deletes.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> write_json_atomic(d / "run.json", {"epochs": 3})
>>> (d / "run.json").read_text()
'{\\n  "epochs": 3\\n}\\n'
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "atomic_path",
    "remove_stale_temporaries",
    "write_bytes_atomic",
    "write_json_atomic",
    "write_text_atomic",
]

_SUFFIX = ".tmp"


def _umask_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_directory(directory: Path) -> None:
    with contextlib.suppress(OSError):  # not every file system syncs directories
        _fsync_path(directory)


#: Free bytes below which a failed write is taken for a full disk (a write that fails with
#: ENOSPC leaves less than one block free).
_FULL_BYTES = 1 << 20


def _disk_full(directory: Path) -> bool:
    try:
        st = os.statvfs(directory)
    except (OSError, AttributeError):  # no statvfs on Windows
        return False
    blocks = st.f_bfree if hasattr(os, "geteuid") and os.geteuid() == 0 else st.f_bavail
    return blocks * st.f_frsize < _FULL_BYTES


def _translate(exc: BaseException, target: Path, tmp: Path) -> OSError | None:
    """An OSError naming ``target`` for a failed write, or None to re-raise ``exc`` as is.

    An OSError without a file name (zipfile, netCDF) or naming the temporary file gets
    ``target``; another exception on a full disk becomes ``OSError(ENOSPC)``.
    """
    if isinstance(exc, OSError):
        if exc.errno is not None and exc.filename in (None, os.fspath(tmp)):
            return OSError(exc.errno, exc.strerror or str(exc), os.fspath(target))
        return None
    if isinstance(exc, Exception) and _disk_full(target.parent):
        return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), os.fspath(target))
    return None


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path to write; on success it replaces ``path`` atomically.

    The temporary file already exists (empty, mode from the umask); writers that take a file
    name (``to_netcdf``, ``savefig``, ``torch.save``) write to it. If the block raises, the
    temporary file is removed and ``path`` is left as it was.

    Raises
    ------
    OSError
        When the directory of ``path`` does not exist or is not writable, or the disk is full.
        Writers that report a full disk otherwise (``torch.save`` raises ``RuntimeError``)
        are translated to ``OSError(ENOSPC)`` naming ``path``.
    """
    target = Path(path)
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=_SUFFIX)
    os.close(fd)
    tmp = Path(name)
    try:
        os.chmod(tmp, _umask_mode())
        yield tmp
        _fsync_path(tmp)
        os.replace(tmp, target)
    except BaseException as exc:
        translated = _translate(exc, target, tmp)
        with contextlib.suppress(OSError):
            tmp.unlink()
        if translated is not None:
            raise translated from exc
        raise
    _fsync_directory(target.parent)


def _write_with(path: str | os.PathLike[str], mode: str, write: Callable[[Any], None]) -> None:
    with atomic_path(path) as tmp, open(tmp, mode) as fh:
        write(fh)


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    _write_with(path, "wb", lambda fh: fh.write(data))


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    _write_with(path, "w", lambda fh: fh.write(text))


def write_json_atomic(path: str | os.PathLike[str], obj: Any, *, indent: int = 2) -> None:
    """Write ``obj`` as JSON (a trailing newline) to ``path`` atomically."""
    write_text_atomic(path, json.dumps(obj, indent=indent) + "\n")


def remove_stale_temporaries(directory: str | os.PathLike[str], name: str) -> list[Path]:
    """Delete the temporary files a killed :func:`atomic_path` of ``directory/name`` left.

    Only regular files named ``.NAME.*.tmp`` are removed (links are left alone). Returns the
    paths removed.
    """
    removed = []
    for entry in Path(directory).glob(f".{name}.*{_SUFFIX}"):
        if entry.is_file() and not entry.is_symlink():
            with contextlib.suppress(OSError):
                entry.unlink()
                removed.append(entry)
    return removed
