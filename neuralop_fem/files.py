"""Atomic file writes: the one helper every writer of the package uses.

A file is written to a fresh temporary file in the target's own directory (created with
``O_EXCL`` by :func:`tempfile.mkstemp`, so an existing file or a symbolic link planted at
some name is never opened or followed), flushed to disk (``fsync``), and renamed over the
target with :func:`os.replace` (which replaces a link at the target instead of writing
through it); the directory entry is then synced too. A write that fails or is killed leaves
the previous file untouched and, at worst, a hidden ``.NAME.*.tmp`` file that
:func:`remove_stale_temporaries` deletes.

Reading a file that a user or another program may have replaced (a run directory, a
checkpoint) goes through :func:`open_for_reading`: only a regular file is opened (a directory,
FIFO or device such as ``/dev/zero`` is refused without blocking), and an empty file or one
above a size limit is refused with a message that names it.

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
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

__all__ = [
    "ExclusiveLock",
    "atomic_path",
    "open_for_reading",
    "output_dir_problem",
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


def output_dir_problem(path: str | os.PathLike[str]) -> str | None:
    """Why a directory cannot be written (or created and written) at ``path``, or None.

    For a library call that writes its outputs at the end of a long computation, to refuse a
    folder it cannot write before the work instead of failing with ``PermissionError`` after
    it: a file in the way, or a nearest existing ancestor that is not a writable directory.

    >>> with tempfile.NamedTemporaryFile() as f:  # a file where a folder is wanted
    ...     output_dir_problem(f"{f.name}/reports")  # doctest: +ELLIPSIS
    "must be a writable directory; got '.../reports' ('...' is not a directory)"
    """
    target = Path(path)
    if target.exists() and not target.is_dir():
        return f"must be a directory; got {os.fspath(target)!r}, which is not one"
    existing = next(p for p in (target, *target.parents) if p.exists())
    if not existing.is_dir():
        return (f"must be a writable directory; got {os.fspath(target)!r} "
                f"({os.fspath(existing)!r} is not a directory)")
    if not os.access(existing, os.W_OK | os.X_OK):
        return (f"must be a writable directory; got {os.fspath(target)!r} "
                f"({os.fspath(existing)!r} is not writable)")
    return None


def _write_with(path: str | os.PathLike[str], mode: str, write: Callable[[Any], None]) -> None:
    with atomic_path(path) as tmp, open(tmp, mode) as fh:
        write(fh)


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    _write_with(path, "wb", lambda fh: fh.write(data))


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    _write_with(path, "w", lambda fh: fh.write(text))


def write_json_atomic(path: str | os.PathLike[str], obj: object, *, indent: int = 2) -> None:
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


def _open_error(path: str | os.PathLike[str], what: str, exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return f"{os.fspath(path)}: no such file; expected {what}."
    if isinstance(exc, PermissionError):
        return f"{os.fspath(path)}: permission denied; {what} must be readable."
    return f"{os.fspath(path)}: cannot be opened ({exc.strerror}); expected {what}."


def _file_kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def open_for_reading(
    path: str | os.PathLike[str], *, what: str, error: type[Exception],
    max_bytes: int | None = None,
) -> BinaryIO:
    """Open ``path`` for binary reading if it is a regular, non-empty file of bounded size.

    A symbolic link is followed (reading through it changes nothing), but its target must be
    a regular file too. The file is opened with ``O_NONBLOCK`` and checked with ``fstat`` on
    the open descriptor, so a FIFO never blocks and the checked file is the one read.

    Parameters
    ----------
    path : path-like
    what : str
        What the file should be (``"a checkpoint"``), for the messages.
    error : exception class
        Raised, with a message naming ``path``, when the file cannot be used.
    max_bytes : int, optional
        Refuse larger files.

    Returns
    -------
    BinaryIO
        The open file (the caller closes it).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise error(_open_error(path, what, exc)) from None
    info = os.fstat(fd)
    msg = None
    if not stat.S_ISREG(info.st_mode):
        msg = f"{os.fspath(path)}: is {_file_kind(info.st_mode)}; expected {what} (a regular file)."
    elif info.st_size == 0:
        msg = f"{os.fspath(path)}: is empty; expected {what}."
    elif max_bytes is not None and info.st_size > max_bytes:
        msg = (f"{os.fspath(path)}: is {info.st_size:,} bytes; {what} must be at most "
               f"{max_bytes:,} bytes.")
    if msg is not None:
        os.close(fd)
        raise error(msg)
    return os.fdopen(fd, "rb")


class ExclusiveLock:
    """An exclusive advisory lock on ``path``, taken at once or refused (any platform).

    Guards a file or directory against a second process writing it at the same time (two
    ``generate`` runs on one ``--out``, two trainings in one run directory). The lock is the
    operating system's file lock (``flock`` on POSIX, ``msvcrt.locking`` on Windows, through
    the ``filelock`` package), so it dies with its process and a killed run never blocks the
    next one; :meth:`release` deletes the lock file while still holding it (where the system
    allows deleting an open file).

    Parameters
    ----------
    path
        The lock file (created). A symbolic link there is refused (:class:`OSError`, as
        ``O_NOFOLLOW`` would), so the lock never creates or truncates a file elsewhere.
    busy
        The exception raised when another process holds the lock; its message says what is
        busy and what to do.
    """

    def __init__(self, path: str | os.PathLike[str], *, busy: Exception) -> None:
        import errno

        import filelock

        self.path = Path(path)
        if self.path.is_symlink():
            raise OSError(errno.ELOOP, "a lock file must not be a symbolic link",
                          os.fspath(self.path))
        self._lock: filelock.BaseFileLock | None = filelock.FileLock(os.fspath(self.path),
                                                                      timeout=0)
        try:
            self._lock.acquire()
        except filelock.Timeout:
            self._lock = None
            raise busy from None

    def release(self) -> None:
        """Delete the lock file and release the lock (idempotent)."""
        if self._lock is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()  # still held: no other process can be inside
        self._lock.release(force=True)
        self._lock = None

    def __enter__(self) -> ExclusiveLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
