"""Shared pieces of the peer formats (private): lazy fields, value checks, dataset assembly.

A peer file is turned into a schema dataset without loading it whole: each field is a
:class:`Field` (a reader of sample ranges that checks the values it reads), wrapped in a dask
array of whole-sample chunks, so :func:`~neuralop_fem.data.io.save_dataset` streams it chunk by
chunk into the netCDF file. The structure (variables, attributes, coordinates) comes from the
schema builders, run on the first sample only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from solvers.checks import plain
from solvers.problems import get_problem

from ...errors import DatasetError, InputError
from ...problems import ProblemKit, data_problems, get_kit, kits
from ...safe_text import clipped_repr, printable
from .. import schema as S
from ..provenance import ATTR, import_record, physics_options
from ..validation import validate

__all__ = [
    "CHUNK_BYTES",
    "Field",
    "build_dataset",
    "check_applicable",
    "check_physics",
    "check_times",
    "check_values",
    "file_number",
    "format_kit",
    "grid_convention",
    "recognise",
    "trajectory_of",
]

#: Bytes of one chunk read from a peer file (whole samples).
CHUNK_BYTES = 16 << 20

_UNKNOWN = "unknown: imported from a {fmt} file that does not record it"


@dataclass(frozen=True)
class Field:
    """One field of a peer file, read lazily in sample ranges and checked on reading.

    Parameters
    ----------
    path, key
        The file and the key (for messages).
    shape
        Shape of the field, sample axis first.
    dtype
        Float type of the values returned.
    read
        ``read(start, stop) -> ndarray`` of samples ``start..stop-1`` (``stop - start`` rows).
    positive
        Whether every value must be > 0 (a coefficient).
    """

    path: Path
    key: str
    shape: tuple[int, ...]
    dtype: np.dtype
    read: Callable[[int, int], np.ndarray]
    positive: bool = False

    # The array protocol dask's ``from_array`` needs.
    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __getitem__(self, index: tuple[slice, ...]) -> np.ndarray:
        index = index if isinstance(index, tuple) else (index,)
        first = index[0] if index else slice(None)
        start, stop, _ = first.indices(self.shape[0])
        values = self.block(start, stop)
        return values[(slice(None), *index[1:])]

    def block(self, start: int, stop: int) -> np.ndarray:
        """Samples ``start..stop-1``, checked (finite; > 0 for a coefficient)."""
        try:
            values = np.asarray(self.read(start, stop))
        except DatasetError:
            raise
        except Exception as exc:  # h5py/torch raise OSError, KeyError, RuntimeError on damage
            msg = (f"{self.path}: key `{self.key}` cannot be read at samples {start}..{stop - 1} "
                   f"(truncated or corrupt file?): {exc}")
            raise DatasetError(msg) from None
        values = values.astype(self.dtype, copy=False)
        check_values(self.path, self.key, values, positive=self.positive, offset=start)
        return values

    def lazy(self) -> Any:
        """A dask array of whole-sample chunks of about :data:`CHUNK_BYTES`."""
        import dask.array as da

        per_sample = max(1, int(np.prod(self.shape[1:])) * self.dtype.itemsize)
        k = max(1, min(self.shape[0], CHUNK_BYTES // per_sample))
        chunks = (k, *self.shape[1:])
        return da.from_array(self, chunks=chunks, asarray=True, lock=False, fancy=False,
                             name=f"peer-{self.path.name}-{self.key}-{id(self)}")


def _mapped(attribute: str) -> list[ProblemKit]:
    return [k for k in kits() if getattr(k, attribute) is not None]


def layout_name(kit: ProblemKit) -> str:
    """``"1D Burgers"``, ``"2D Darcy"``: how messages name a problem's files."""
    return f"{kit.problem.ndim}D {kit.name.capitalize()}"


def format_kit(problem: str, attribute: str, tool: str, *, what: str = "`problem`"
               ) -> ProblemKit:
    """The kit of ``problem``, which must map ``tool``'s files (its ``attribute``, e.g.
    ``"neuralop_format"``); else an :class:`InputError` listing the problems that do."""
    names = tuple(k.name for k in _mapped(attribute))
    if problem not in names:
        msg = (f"{what} must be one of {names} (the problems with a {tool} layout); got "
               f"{problem!r}.")
        raise InputError(msg)
    return get_kit(problem)


def recognise(path: Path, attribute: str, tool: str, *, matches: Callable[[ProblemKit], bool],
              layout: Callable[[ProblemKit], str], found: str) -> ProblemKit:
    """The one kit whose mapping of ``tool``'s files (``attribute``) ``matches`` the file.

    Raises
    ------
    DatasetError
        When none matches (the message gives each problem's ``layout`` and what the file
        holds, ``found``) or several do (``problem`` must then be given).
    """
    candidates = _mapped(attribute)
    hits = [k for k in candidates if matches(k)]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        layouts = " or ".join(f"{layout_name(k)} ({layout(k)})" for k in candidates)
        msg = f"{path}: not a {tool} {layouts} file; it holds {found}."
    else:
        names = ", ".join(repr(k.name) for k in hits)
        msg = (f"{path}: the file ({found}) fits the {tool} layouts of several problems "
               f"({names}); pass `problem` to choose one.")
    raise DatasetError(msg)


def check_values(path: Path, key: str, values: np.ndarray, *, positive: bool,
                 offset: int = 0) -> None:
    """Raise :class:`DatasetError` for a non-finite value (or one <= 0 if ``positive``)."""
    bad = ~np.isfinite(values)
    what = "finite (no NaN or infinity)"
    if not bad.any() and positive:
        bad = values <= 0
        what = "> 0 everywhere (a coefficient)"
    if bad.any():
        first = np.argwhere(bad)[0]
        index = (int(first[0]) + offset, *(int(i) for i in first[1:]))
        msg = (f"{path}: key `{key}` must be {what}; got {plain(values[tuple(first)])} at "
               f"index {index} (0-based, sample first).")
        raise DatasetError(msg)


def check_times(path: Path, key: str, times: np.ndarray) -> None:
    """Refuse output times that are not finite and strictly increasing from 0.

    Raises
    ------
    DatasetError
        Naming the file, ``key`` and the first time out of order (``[0, 2, 1]``: the third).
    """
    t = np.asarray(times, dtype=np.float64).ravel()
    bad = ~np.isfinite(t)
    if bad.any():
        i = int(np.argmax(bad))
        msg = f"{path}: `{key}` must hold finite times; got {float(t[i])!r} at index {i}."
        raise DatasetError(msg)
    if t.size == 0 or t[0] != 0.0:
        msg = f"{path}: `{key}` must start at time 0; got {clipped_repr(t[:1].tolist())}."
        raise DatasetError(msg)
    steps = np.diff(t) <= 0
    if steps.any():
        i = int(np.argmax(steps)) + 1
        msg = (f"{path}: `{key}` must be strictly increasing; got {float(t[i - 1])!r} then "
               f"{float(t[i])!r} at index {i}.")
        raise DatasetError(msg)


def check_applicable(problem: str, given: Mapping[str, object]) -> None:
    """Refuse a parameter given for a file of ``problem`` that belongs to another problem (a
    ``--viscosity`` for a Darcy file, say), instead of dropping it unread.

    Raises
    ------
    InputError
        Naming the parameter, the problem it applies to and the file's problem.
    """
    allowed = physics_options(get_problem(problem).data_problem)
    for name, value in given.items():
        if value is not None and name not in allowed:
            owner = next((k for k in data_problems() if name in physics_options(k)), "other")
            msg = (f"`{name}` applies to {owner} files only; got {name}={value!r} for a "
                   f"{problem} file.")
            raise InputError(msg)


def file_number(path: Path, where: str, value: object) -> float:
    """``value``, read from the file at ``path`` (``where``: ``"attribute `beta`"``, ``"key
    `visc`"``), as one finite float; else a :class:`DatasetError` naming the file, the place
    and the value (a string, a dict, an array of several numbers, a NaN)."""
    arr: np.ndarray | None = None
    if isinstance(value, bytes | np.bytes_):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str | dict | list | tuple | bool | np.bool_):
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            arr = None
    if arr is None or arr.size != 1:
        shown = f"{arr.size} numbers {printable(plain(arr), limit=200)}" if arr is not None \
            else clipped_repr(value)
        msg = f"{path}: {where} must be one number; got {shown}."
        raise DatasetError(msg)
    number = float(arr.ravel()[0])
    if not math.isfinite(number):
        msg = f"{path}: {where} must be a finite number; got {number!r}."
        raise DatasetError(msg)
    return number


def check_physics(problem: str, given: Mapping[str, float | None], *,
                  path: Path | None = None, origins: Mapping[str, str] | None = None
                  ) -> dict[str, float | None]:
    """The physical parameters of ``problem`` (:func:`physics_options`), None where unknown.

    ``origins`` names, for a value read from the file at ``path`` rather than given by the
    caller, where in the file it came from (``"key `visc`"``): a bad one is then a
    :class:`DatasetError` about the file, not an :class:`InputError` about an argument that
    was never given.
    """
    allowed = physics_options(get_problem(problem).data_problem)
    origins = origins or {}
    out: dict[str, float | None] = {}
    for name in allowed:
        value = given.get(name)
        if value is None:
            out[name] = None
            continue
        ok = isinstance(value, int | float | np.floating) and not isinstance(value, bool) \
            and math.isfinite(float(value))
        if not ok or (name != "forcing" and float(value) <= 0):
            bound = "a finite number" + ("" if name == "forcing" else " > 0")
            if name in origins:
                msg = (f"{path}: {origins[name]} gives the {name.replace('_', ' ')} "
                       f"{clipped_repr(value)}; it must be {bound}.")
                raise DatasetError(msg)
            msg = f"`{name}` must be {bound}; got {clipped_repr(value)}."
            raise InputError(msg)
        out[name] = float(value)
    return out


def grid_convention(problem: str, *, source: str, relabelled: bool,
                    grid: str = "nodes") -> dict[str, str]:
    """Attributes stating the grid of the peer file and of the stored dataset (``grid``: the
    stored dataset's grid convention when it is not the problem's own, e.g. "cell-centred")."""
    spec = get_problem(problem)
    ours = ("periodic x_i = i/n on [0, 1), no duplicated end point" if spec.periodic
            else "nodes x_i = i/(n-1) on [0, 1], boundary included" if grid == "nodes"
            else "cell centres x_i = (i + 1/2)/n on [0, 1]" if grid == "cell-centred"
            else f"{grid} (solvers.grids)")
    attrs = {"grid_convention": ours, "source_grid": source}
    if relabelled:
        attrs["grid_relabelled"] = (
            "the values are stored as given, without interpolation, at the coordinates of "
            "this dataset's grid; the source grid is shifted or scaled against it")
    return attrs


#: Relative tolerance (of the final time) under which two times of a peer's file are one.
TIME_RTOL = 1e-6


def trajectory_of(u0: np.ndarray, u: np.ndarray, u_t: np.ndarray | None,
                  time: np.ndarray | None, final_time: float
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The full trajectory (``t = 0`` first, the final time last) and its times.

    ``u_t`` at ``time`` gets ``u0`` prepended when ``time[0]`` is not 0 and ``u`` appended
    when ``time[-1]`` is not ``final_time``, each up to :data:`TIME_RTOL` of ``final_time``;
    without ``u_t`` the trajectory is ``[u0, u]`` at ``[0, T]``.
    """
    if u_t is None or time is None:
        return np.stack([u0, u], axis=1), np.array([0.0, final_time])
    parts, times = [u_t], [np.asarray(time, dtype=np.float64)]
    # Times equal up to the round-off of their storage are one time: a peer's times are often
    # float32 or sums of steps (1e-7 relative at worst), output frames lie far further apart
    # than 1e-6 of the final time, so a stored 0.99999994 is the final time, not a frame before.
    tol = TIME_RTOL * abs(final_time)
    if abs(times[0][0]) > tol:
        parts.insert(0, u0[:, None])
        times.insert(0, np.array([0.0]))
    if abs(times[-1][-1] - final_time) > tol:
        parts.append(u[:, None])
        times.append(np.array([final_time]))
    t = np.concatenate(times)
    t[0], t[-1] = 0.0, final_time  # the stored ends, up to round-off: the exact ones
    return np.concatenate(parts, axis=1), t


def build_dataset(problem: str, fields: Mapping[str, Field], *, attrs: Mapping[str, object],
                  fmt: str, source_file: str, keys: list[str],
                  physics: Mapping[str, float | None], time: np.ndarray | None = None,
                  lazy: bool = True) -> xr.Dataset:
    """A schema dataset of ``problem`` whose fields read ``fields`` (lazily with ``lazy``).

    ``fields`` maps schema names (``u0``, ``u``, ``u_t`` / ``a``, ``u``) to peer fields; the
    diagnostics are unknown (sentinels, with a comment); ``physics`` is recorded as
    ``import-mat`` records it (None: unknown).
    """
    names = list(get_kit(problem).fields)
    dtype = np.result_type(*(f.dtype for f in fields.values()))
    n = fields[names[0]].shape[0]
    first = {k: f.block(0, 1).astype(dtype) for k, f in fields.items()}
    extra = {}
    if S.U_T in fields:
        extra = {"u_t": first[S.U_T], "time": time}
    plain: dict[str, Any] = {
        "title": f"neuralop_fem {problem} dataset imported from {source_file}",
        "source": f"imported from {source_file}",
        "dataset_seed": -1,
        "diagnostics_known": 0,
        "peer_format": fmt,
        "peer_keys": ",".join(keys),
        ATTR: import_record(problem=problem, source_file=source_file, layout=fmt, keys=keys,
                            physics=physics),
        "physics_known": int(all(v is not None for v in physics.values())),
        **{k: "unknown" if v is None else v for k, v in physics.items()},
        **attrs,
    }
    one = np.zeros(1)
    skeleton = get_kit(problem).builder()(
        first[names[0]], first[names[1]], attrs=plain,
        seed=np.full(1, S.SEED_UNKNOWN, dtype=np.uint64),
        iterations=np.full(1, S.ITERATIONS_UNKNOWN), residual=one + np.nan,
        solve_time=one + np.nan, **extra)
    data_vars: dict[str, Any] = {}
    for name, var in skeleton.data_vars.items():
        if name in fields:
            values = fields[name].lazy() if lazy else fields[name].block(0, n)
            data_vars[name] = (var.dims, values.astype(dtype), var.attrs)
        else:
            attrs_ = dict(var.attrs, comment=_UNKNOWN.format(fmt=fmt))
            data_vars[name] = (var.dims, np.full(n, var.values[0], dtype=var.dtype), attrs_)
    coords = {name: (c.dims, np.arange(n, dtype=np.int64) if name == S.SAMPLE else c.values,
                     c.attrs) for name, c in skeleton.coords.items()}
    ds = xr.Dataset(data_vars, coords=coords, attrs=skeleton.attrs)
    return validate(ds, source=source_file)
