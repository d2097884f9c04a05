"""Import the legacy FNO / Galerkin Transformer benchmark ``.mat`` files into the schema.

Supported layouts
-----------------
* MATLAB v5/v7 (``scipy.io.loadmat``): arrays as MATLAB shows them.
* MATLAB v7.3 (HDF5, read with ``h5py``): MATLAB writes column-major arrays, so an array
  MATLAB shows as ``(N, n)`` is stored as an HDF5 dataset of shape ``(n, N)``; it is
  transposed back (all axes reversed) on reading.

Files
-----
* Burgers ``burgers_data_R10.mat``: keys ``a`` (initial conditions) and ``u`` (solution at
  t = 1), shape ``(N, n)`` on the periodic grid ``x_i = i/n`` (no duplicated endpoint).
* Darcy ``piececonst_r421_N1024_smooth*.mat``: keys ``coeff`` and ``sol``, shape
  ``(N, n, n)`` on the node grid ``x_i = i/(n-1)``; array axis 1 -> ``x``, axis 2 -> ``y``.

Seeds and solver diagnostics are unknown for these files: ``seed`` holds
:data:`~neuralop_fem.data.schema.SEED_UNKNOWN`, ``iterations`` holds -1, ``residual`` and
``solve_time`` hold NaN; each of these variables carries a ``comment`` saying so, and the
global attributes ``dataset_seed = -1`` and ``diagnostics_known = 0``.

The physical parameters (Burgers ``viscosity`` and ``final_time``, Darcy ``forcing``) are not
in these files either. Given to :func:`import_mat` (``--viscosity``, ``--final-time``,
``--forcing``), they are recorded as plain attributes, as ``generate`` records them, and
``physics_known = 1``; left out, the attribute holds ``"unknown"``, ``physics_known = 0``, and
rebuilding the reference solver from the provenance refuses
(:func:`~neuralop_fem.data.provenance.solver_from_record`) instead of using defaults.

Every value must be finite (and the Darcy coefficient > 0); a file that cannot be parsed,
misses a key, has the wrong shapes or bad values raises a
:class:`~neuralop_fem.errors.DatasetError` naming the file and the key.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from solvers.problems import get_problem

from ..errors import DatasetError, InputError
from ..problems import data_problems, get_kit, kit_table
from ..safe_text import printable
from . import schema as S
from .io import check_target, save_dataset
from .provenance import ATTR, import_record, physics_options
from .safe_hdf5 import MAX_INFLATION, checked_dataset, open_hdf5

__all__ = ["LEGACY_KEYS", "import_mat", "read_mat"]

#: The keys (input, solution) of the legacy files: each problem kit's ``mat_keys`` (a live view).
LEGACY_KEYS = kit_table("mat_keys")

_UNKNOWN = "unknown: imported from a legacy .mat file that does not record it"


def _is_hdf5(path: Path) -> bool:
    import h5py

    return bool(h5py.is_hdf5(path))


def _read_v73(path: Path, keys: tuple[str, ...]) -> tuple[dict[str, np.ndarray], list[str]]:
    import h5py

    # External storage or links, virtual datasets and unwritten chunks are refused
    # (safe_hdf5): what is read comes from the file itself.
    with open_hdf5(path, what="a MATLAB v7.3 (HDF5) file") as f:
        try:
            found = sorted(k for k in f if not k.startswith("#")
                           and isinstance(f.get(k), h5py.Dataset))
            missing = [k for k in keys if k not in found]
            if missing:
                return {}, found
            nodes = {k: checked_dataset(path, k, f[k]) for k in keys}
            # Column-major MATLAB storage: reverse every axis to get MATLAB's shape.
            return {k: np.transpose(node[()]) for k, node in nodes.items()}, found
        except DatasetError:
            raise
        except Exception as exc:  # h5py raises OSError, KeyError, RuntimeError ... on damage
            msg = (f"{path}: cannot be read as a MATLAB v7.3 (HDF5) file (truncated or "
                   f"corrupt?): {printable(exc, limit=200)}")
            raise DatasetError(msg) from exc


def _read_v5(path: Path, keys: tuple[str, ...]) -> tuple[dict[str, np.ndarray], list[str]]:
    import scipy.io

    try:
        listed = scipy.io.whosmat(path)
        found = sorted(name for name, _, _ in listed)
        _check_declared(path, listed)
        missing = [k for k in keys if k not in found]
        if missing:
            # whosmat stops quietly where a truncated file ends: read every variable, so that
            # a cut-off file is reported as such and not as one without the keys.
            scipy.io.loadmat(path)
            return {}, found
        data = scipy.io.loadmat(path, variable_names=list(keys))
    except DatasetError:
        raise
    except Exception as exc:  # scipy raises MatReadError, ValueError, zlib.error ... on junk
        msg = (f"{path}: cannot be read as a MATLAB .mat file (v5 or v7.3; truncated or "
               f"corrupt?): {printable(exc, limit=200)}")
        raise DatasetError(msg) from exc
    return {k: np.asarray(data[k]) for k in keys}, found


def _check_declared(path: Path, listed: list[tuple[str, tuple[int, ...], str]]) -> None:
    """Refuse a v5 file whose variables declare more bytes than compression can explain
    (:data:`~neuralop_fem.data.safe_hdf5.MAX_INFLATION` times the file's size): reading it
    would inflate a small file to any size."""
    size = path.stat().st_size
    declared = sum(math.prod(shape) * 8 for _, shape, _ in listed)  # at most 8 bytes a value
    if declared > MAX_INFLATION * size:
        name, shape, _ = max(listed, key=lambda v: math.prod(v[1]))
        msg = (f"{path}: key `{printable(name, limit=100)}` declares shape {shape}, more values "
               f"than a {size:,}-byte file can hold even compressed; refused.")
        raise DatasetError(msg)


def _check(path: Path, problem: str, arrays: dict[str, np.ndarray], found: list[str]) -> None:
    keys = LEGACY_KEYS[problem]
    spatial = get_problem(problem).ndim
    ndim = 1 + spatial
    want = "(N, " + ", ".join(["n"] * spatial) + ")"
    shapes = {k: arrays[k].shape for k in keys}
    first, second = (arrays[k] for k in keys)
    ok = (
        first.ndim == ndim
        and first.shape == second.shape
        and first.shape[0] >= 1
        and all(s >= 2 for s in first.shape[1:])
        and len(set(first.shape[1:])) == 1
    )
    if not ok:
        msg = (
            f"{path}: keys {list(keys)} of a {problem} file must be arrays of one shape {want}; "
            f"got shapes {shapes} (keys found: {found})."
        )
        raise DatasetError(msg)
    for k in keys:
        if arrays[k].dtype not in (np.float32, np.float64):
            msg = f"{path}: key `{k}` must hold float32 or float64 values; got {arrays[k].dtype}."
            raise DatasetError(msg)
        positive = get_problem(problem).positive_input and k == keys[0]
        _check_values(path, k, arrays[k], positive=positive)


def _check_values(path: Path, key: str, values: np.ndarray, *, positive: bool) -> None:
    bad = ~np.isfinite(values)
    what = "finite (no NaN or infinity)"
    if not bad.any() and positive:
        bad = values <= 0
        what = "> 0 everywhere (a permeability)"
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        msg = (f"{path}: key `{key}` must be {what}; got {int(bad.sum())} of {values.size} "
               f"values that are not, the first {float(values[first])!r} at index {first} "
               f"(0-based, sample first).")
        raise DatasetError(msg)


def _physics(problem: str, given: Mapping[str, float | None]) -> dict[str, float | None]:
    """The physical parameters of ``problem`` from ``given``; a parameter of another problem
    or a bad value is an :class:`InputError`."""
    allowed = physics_options(problem)
    for name, value in given.items():
        if value is None:
            continue
        if name not in allowed:
            owner = next(k for k in data_problems() if name in physics_options(k))
            msg = f"`{name}` applies to {owner} files only; got {name}={value!r} for {problem}."
            raise InputError(msg)
        ok = isinstance(value, int | float) and math.isfinite(value)
        if not ok or (name != "forcing" and value <= 0):
            bound = "a finite number" + ("" if name == "forcing" else " > 0")
            msg = f"`{name}` must be {bound}; got {value!r}."
            raise InputError(msg)
    return {name: None if given.get(name) is None else float(given[name]) for name in allowed}


def read_mat(path: str | os.PathLike[str], *, problem: str, viscosity: float | None = None,
             final_time: float | None = None, forcing: float | None = None) -> xr.Dataset:
    """Read a legacy benchmark ``.mat`` file into an in-memory schema dataset.

    Parameters
    ----------
    path : path-like
        MATLAB v5 or v7.3 file.
    problem : {"burgers", "darcy"}
    viscosity, final_time : float, optional
        Burgers: the viscosity nu > 0 and final time T > 0 the labels were computed with.
    forcing : float, optional
        Darcy: the constant right-hand side f.

    Returns
    -------
    xarray.Dataset
        Valid under :func:`~neuralop_fem.data.validation.validate`, fields in the file's float
        type, ``source = "imported from <file name>"``.

    Raises
    ------
    InputError
        Unknown ``problem``; a physical parameter of the other problem or a bad value.
    DatasetError
        Missing, empty, truncated or corrupt file, not a MATLAB file, missing keys, wrong
        shapes, non-finite values (or a coefficient <= 0); names the file and the key.
    """
    if problem not in LEGACY_KEYS:
        msg = f"`problem` must be one of {tuple(LEGACY_KEYS)}; got {problem!r}."
        raise InputError(msg)
    physics = _physics(problem, {"viscosity": viscosity, "final_time": final_time,
                                 "forcing": forcing})
    path = Path(path)
    if not path.is_file():
        msg = f"{path}: no such file."
        raise DatasetError(msg)
    keys = LEGACY_KEYS[problem]
    hdf5 = _is_hdf5(path)
    arrays, found = _read_v73(path, keys) if hdf5 else _read_v5(path, keys)
    if not arrays:
        msg = (
            f"{path}: a {problem} file must hold the keys {list(keys)}; keys found: {found}."
        )
        raise DatasetError(msg)
    # float16 is read as float32, as the .pt and PDEBench readers do.
    arrays = {k: v.astype(np.float32) if v.dtype == np.float16 else v for k, v in arrays.items()}
    _check(path, problem, arrays, found)
    first, second = (arrays[k] for k in keys)
    if first.dtype != second.dtype:
        second = second.astype(np.result_type(first, second))
        first = first.astype(second.dtype)
    n_samples = first.shape[0]
    layout = "MATLAB v7.3 (HDF5)" if hdf5 else "MATLAB v5"
    attrs: dict[str, Any] = {
        "title": f"neuralop_fem {problem} dataset imported from {path.name}",
        "source": f"imported from {path.name}",
        "dataset_seed": -1,
        "diagnostics_known": 0,
        "legacy_format": layout,
        "legacy_keys": ",".join(found),
        ATTR: import_record(problem=problem, source_file=path.name, layout=layout,
                            keys=list(keys), physics=physics),
        "physics_known": int(all(v is not None for v in physics.values())),
        **{name: "unknown" if value is None else value for name, value in physics.items()},
    }
    diagnostics = {
        "seed": np.full(n_samples, S.SEED_UNKNOWN, dtype=np.uint64),
        "iterations": np.full(n_samples, S.ITERATIONS_UNKNOWN, dtype=np.int64),
        "residual": np.full(n_samples, np.nan),
        "solve_time": np.full(n_samples, np.nan),
    }
    builder = get_kit(problem).builder()
    ds = builder(first, second, attrs=attrs, **diagnostics)
    for name in S.DIAGNOSTICS:
        ds[name].attrs["comment"] = _UNKNOWN
    return ds


def import_mat(
    path: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    problem: str,
    dtype: str | None = None,
    overwrite: bool = False,
    viscosity: float | None = None,
    final_time: float | None = None,
    forcing: float | None = None,
) -> Path:
    """Convert a legacy ``.mat`` file to a neuralop_fem netCDF file.

    Parameters
    ----------
    path, out : path-like
        Source ``.mat`` and target ``.nc``.
    problem : {"burgers", "darcy"}
    dtype : {"float64", "float32"} or None
        Storage type; None keeps the file's type.
    overwrite : bool
        Replace an existing ``out``.
    viscosity, final_time, forcing : float, optional
        The physical parameters of the labels; see :func:`read_mat`.

    Raises
    ------
    InputError
        ``out`` exists (without ``overwrite``) or its directory does not (checked before the
        file is read); see also :func:`read_mat`.
    DatasetError
        See :func:`read_mat`.
    """
    check_target(out, overwrite=overwrite)
    ds = read_mat(path, problem=problem, viscosity=viscosity, final_time=final_time,
                  forcing=forcing)
    return save_dataset(ds, out, dtype=dtype or ds.attrs[S.STORAGE_DTYPE], overwrite=overwrite)
