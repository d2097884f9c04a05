"""The on-disk state of an unfinished generation run: ``FILE.nc.partial/``.

Layout::

    FILE.nc.partial/
        manifest.json                      what is being generated (written once, atomically)
        chunk-0000000000-0000000016.npz    samples [0, 16): fields and per-sample diagnostics
        chunk-0000000016-0000000032.npz    ...

Each chunk is written to a hidden temporary name, flushed to disk and renamed into place with
:func:`os.replace`, so a chunk file either holds a complete result or does not exist, whenever
the run is killed (SIGKILL included). Chunk boundaries are multiples of the chunk size in the
global sample index, so they do not depend on the number of workers.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, BinaryIO, TypedDict

import numpy as np
from numpy.typing import NDArray

from ...files import atomic_path

__all__ = ["FLOAT_PATHS", "Manifest", "PartialRun", "chunk_bounds", "partial_dir"]

_MANIFEST = "manifest.json"
#: The chunk entry holding, as JSON text, the kernel choices of the process that solved it
#: (absent from chunks written by earlier releases).
FLOAT_PATHS = "float_paths"
_CHUNK_RE = re.compile(r"^chunk-(\d{10})-(\d{10})\.npz$")


def partial_dir(out: Path) -> Path:
    """The directory holding the unfinished run of ``out`` (``out`` + ``.partial``)."""
    return out.with_name(out.name + ".partial")


def chunk_bounds(start: int, stop: int, chunk_size: int) -> list[tuple[int, int]]:
    """Split ``[start, stop)`` at the multiples of ``chunk_size``.

    >>> chunk_bounds(5, 17, 4)
    [(5, 8), (8, 12), (12, 16), (16, 17)]
    """
    edges = [start, *range((start // chunk_size + 1) * chunk_size, stop, chunk_size), stop]
    return [(a, b) for a, b in zip(edges, edges[1:], strict=False) if b > a]


class Manifest(TypedDict):
    """What a run generates (``manifest.json``, JSON): the settings of the file (``problem``,
    ``resolution``, ``dataset_seed``, ``dtype`` and the config's fields), the samples
    ``[start, stop)`` of this run and the solver that computes them (``device``: the torch
    device of a torch solver, None for the numpy solvers)."""

    format: int
    settings: dict[str, Any]
    chunk_size: int
    start: int
    stop: int
    append: bool
    solver_class: str
    solver_config: dict[str, Any]
    neuralop_fem_version: str
    device: str | None


def _atomic_write(path: Path, write: Callable[[BinaryIO], object]) -> None:
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        write(fh)


class PartialRun:
    """Read and write the chunks and manifest of one unfinished run.

    Parameters
    ----------
    directory
        ``FILE.nc.partial``; created by :meth:`create`.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    @property
    def manifest_path(self) -> Path:
        return self.directory / _MANIFEST

    def exists(self) -> bool:
        """True if the directory holds a manifest (an unfinished run was started)."""
        return self.manifest_path.is_file()

    def read_manifest(self) -> dict[str, Any]:
        """The manifest as written by :meth:`create` (of this or an earlier release)."""
        return json.loads(self.manifest_path.read_text(encoding="utf-8"))

    def create(self, manifest: Manifest) -> None:
        """Start a fresh run: (re)create the directory and write the manifest atomically."""
        self.remove()
        self.directory.mkdir(parents=True)
        text = json.dumps(dict(manifest), indent=2, sort_keys=True).encode()
        _atomic_write(self.manifest_path, lambda fh: fh.write(text))

    def remove(self) -> None:
        """Delete the directory and everything in it (no error if absent)."""
        if self.directory.exists():
            shutil.rmtree(self.directory)

    def chunk_path(self, start: int, stop: int) -> Path:
        return self.directory / f"chunk-{start:010d}-{stop:010d}.npz"

    def completed(self) -> set[tuple[int, int]]:
        """``(start, stop)`` of every chunk on disk; stray temporary files are deleted."""
        done: set[tuple[int, int]] = set()
        for entry in self.directory.iterdir():
            match = _CHUNK_RE.match(entry.name)
            if match:
                done.add((int(match.group(1)), int(match.group(2))))
            elif entry.name.startswith(".") and entry.name.endswith(".tmp"):
                entry.unlink(missing_ok=True)  # left by a killed run
        return done

    def write_chunk(self, start: int, stop: int,
                    arrays: Mapping[str, NDArray[np.generic]]) -> Path:
        """Persist the result of samples ``[start, stop)`` atomically; return its path."""
        path = self.chunk_path(start, stop)
        _atomic_write(path, lambda fh: np.savez(fh, **arrays))
        return path

    def read_float_paths(self, start: int, stop: int) -> dict[str, Any] | None:
        """The kernel choices recorded with one chunk, None if it records none."""
        with np.load(self.chunk_path(start, stop)) as data:
            if FLOAT_PATHS not in data.files:
                return None
            return json.loads(str(data[FLOAT_PATHS]))

    def read_chunk(
        self, start: int, stop: int, names: Iterable[str] | None = None
    ) -> dict[str, NDArray[np.generic]]:
        """The arrays of one chunk (all, or only ``names``)."""
        with np.load(self.chunk_path(start, stop)) as data:
            keys = data.files if names is None else list(names)
            return {k: data[k] for k in keys}
