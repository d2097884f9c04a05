"""Assembling the chunks of a finished generation run into one dataset file.

The fields are concatenated lazily (one dask block per chunk file, plus the existing file when
appending) and streamed to the netCDF file by :func:`neuralop_fem.data.save_dataset`, which
writes a temporary file and renames it into place; memory stays at a few chunks whatever the
dataset size.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import dask
import dask.array as da
import numpy as np
import xarray as xr

from solvers.problems import get_problem

from ...errors import ConfigError, DatasetError
from ...problems import get_kit
from .. import schema as S
from ..io import load_dataset, save_dataset
from ..provenance import ATTR, generation_record, read_record
from .store import FLOAT_PATHS, Manifest, PartialRun, chunk_bounds

__all__ = ["assemble"]

_DIAGNOSTICS = (S.SEED, S.ITERATIONS, S.RESIDUAL, S.SOLVE_TIME)


def _field_names(problem: str, first: dict[str, Any]) -> list[str]:
    kit = get_kit(problem)
    return list(kit.fields) + [n for n in kit.optional_fields if n in first]


def _template(problem: str, first: dict[str, Any], attrs: dict[str, Any], time: Any) -> xr.Dataset:
    """A one-sample dataset built by the schema builder: the source of every attribute."""
    one = {k: v[:1] for k, v in first.items() if k != FLOAT_PATHS}
    diag = {S.SEED: one["seed"], S.ITERATIONS: one["iterations"], S.RESIDUAL: one["residual"],
            S.SOLVE_TIME: one["solve_time"]}
    spec = get_problem(problem)
    extra = {"u_t": one["u_t"], "time": time} if "u_t" in one else {}
    return get_kit(problem).builder()(one[spec.input_name], one[spec.output_name], attrs=attrs,
                                      **diag, **extra)


def _file_attrs(manifest: Manifest, source: str,
                float_paths: list[dict[str, Any] | None] | None = None) -> dict[str, Any]:
    settings = manifest["settings"]
    plain = {k: v for k, v in settings.items() if k != "problem"}
    if plain.get("output_times") is None:
        plain.pop("output_times", None)
    record = generation_record(
        settings=settings, n_samples=manifest["stop"], chunk_size=manifest["chunk_size"],
        solver_class=manifest["solver_class"], solver_config=manifest["solver_config"],
        version=manifest["neuralop_fem_version"], float_paths=float_paths,
    )
    return {
        **plain,
        "source": source,
        "solver_class": manifest["solver_class"],
        "solver_config": manifest["solver_config"],
        "chunk_size": manifest["chunk_size"],
        ATTR: record,
    }


def check_storable(manifest: Manifest) -> None:
    """Raise :class:`~neuralop_fem.errors.ConfigError` now if the attributes the finished file
    would record cannot be stored in netCDF (checked before any sample is solved)."""
    try:
        S.netcdf_attrs(_file_attrs(manifest, "check"))
    except (DatasetError, TypeError, ValueError, OverflowError) as exc:
        msg = f"the generation settings cannot be stored in the dataset file: {exc}"
        raise ConfigError(msg) from None


def assemble(partial: PartialRun, manifest: Manifest, *, out: Path, source: str) -> Path:
    """Write ``out`` from the chunks in ``partial``.

    When appending, the samples ``0 .. manifest["start"] - 1`` of the existing ``out`` come
    first; the chunks hold the samples from ``start`` on.
    """
    settings = manifest["settings"]
    problem = settings["problem"]
    chunks = chunk_bounds(manifest["start"], manifest["stop"], manifest["chunk_size"])
    first = partial.read_chunk(*chunks[0])
    time = None
    if "u_t" in first:
        times = settings["output_times"]
        time = np.asarray(times, dtype=np.float64)
    names = _field_names(problem, first)

    diagnostics = {k: [] for k in ("seed", "iterations", "residual", "solve_time")}
    blocks: dict[str, list[Any]] = {name: [] for name in names}
    existing = None
    paths: list[dict[str, Any] | None] = []
    if manifest["append"]:
        existing = load_dataset(out)
        paths = list(read_record(existing.attrs, source=str(out)).get("float_paths") or [None])
        kept = existing.isel({S.SAMPLE: slice(0, manifest["start"])})
        for name in names:
            blocks[name].append(kept[name].data.astype(np.float64))
        for name in diagnostics:
            diagnostics[name].append(np.asarray(kept[name].values))
    for a, b in chunks:
        entry = partial.read_float_paths(a, b)
        if entry not in paths:
            paths.append(entry)
        diag = partial.read_chunk(a, b, diagnostics)
        for name in diagnostics:
            diagnostics[name].append(diag[name])
        for name in names:
            shape = (b - a, *first[name].shape[1:])
            load = dask.delayed(_load_one, pure=True)(partial.chunk_path(a, b), name)
            blocks[name].append(da.from_delayed(load, shape=shape, dtype=np.float64))

    template = _template(problem, first, _file_attrs(manifest, source, paths), time)
    n_total = manifest["stop"]
    data_vars: dict[str, Any] = {}
    for name in names:
        data_vars[name] = (template[name].dims, da.concatenate(blocks[name], axis=0),
                           template[name].attrs)
    for name, parts in diagnostics.items():
        values = np.concatenate(parts).astype(template[name].dtype)
        data_vars[name] = ((S.SAMPLE,), values, template[name].attrs)
    coords: dict[str, Any] = {S.SAMPLE: ((S.SAMPLE,), np.arange(n_total, dtype=np.int64),
                                         template[S.SAMPLE].attrs)}
    for name in template.coords:
        if name != S.SAMPLE:
            coords[name] = ((name,), template[name].values, template[name].attrs)
    ds = xr.Dataset(data_vars, coords=coords, attrs=template.attrs)
    try:
        save_dataset(ds, out, dtype=settings["dtype"], overwrite=True)
    finally:
        if existing is not None:
            existing.close()
    return out


#: Dask's threaded scheduler reads the chunks; ``np.load`` parses each array header with
#: ``ast.literal_eval``, and CPython 3.11 (seen on 3.11.7) can raise a spurious "SystemError: AST
#: constructor recursion depth mismatch" when two threads build ASTs at once. Chunk reads are
#: therefore one at a time (they are file reads; the netCDF writer serialises its side anyway).
_READ_LOCK = threading.Lock()


def _load_one(path: Path, name: str) -> np.ndarray:
    with _READ_LOCK, np.load(path) as data:
        return np.asarray(data[name], dtype=np.float64)
