"""neuraloperator's ``.pt`` dictionaries, both ways.

Layout (read from neuraloperator's ``PTDataset`` and its shipped files)
----------------------------------------------------------------------
A ``torch.save`` of a dict; ``PTDataset`` reads ``x`` (input) and ``y`` (output), sample first,
without a channel axis, and casts ``x`` to float32:

* Darcy ``darcy_{train,test}_{16,32}.pt``: ``x`` (N, n, n) bool, the two phases of the
  coefficient; ``y`` (N, n, n) float32, the solution. Their models see the phases as 1.0 and
  0.0 and place the samples at ``x_i = i/n`` (their grid embedding: ``linspace(0, 1, n + 1)[:-1]``),
  so the far boundary ``x = 1`` is not a sample point. The forcing is not recorded.
* Burgers ``burgers_{train,test}_16.pt``: ``x`` (N, n) float64, the initial condition; ``y``
  (N, T, n) float64, the trajectory with ``y[:, 0] == x``; ``visc`` (1, 1), the viscosity. The
  older ``burgers_lowres.pt`` names them ``input`` and ``output``. Times are not recorded.

Mapping to the schema: ``x`` is the problem's input variable, ``y`` its output (the last time
of a trajectory, which is also kept as ``u_t``). Boolean phases become ``phase_values``
(high for True, low for False; the coefficient must be > 0). The values are stored as given on
this package's grid of the same size (the relabelling is recorded in the attributes). Export
writes ``x`` and ``y`` as tensors (``x`` as booleans again for a dataset imported from
booleans whose coefficient still takes only the two phase values, and for a generated
dataset whose two phases are :data:`DEFAULT_PHASE_VALUES`), plus ``visc`` and ``t``
(the trajectory times) for Burgers, which ``PTDataset`` ignores.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from solvers.problems import get_problem

from ...errors import DatasetError, InputError
from ...peer_presets import NEURALOP_PHASE_VALUES
from .. import schema as S
from ..dim_order import in_api_order
from ._common import Field, build_dataset, check_physics, grid_convention, trajectory_of
from .safe_torch import load_plain

__all__ = ["DEFAULT_PHASE_VALUES", "export_neuralop", "import_neuralop", "read_neuralop"]

#: Coefficient values given to the True and False phases of a boolean ``x``. Their ratio, 20,
#: matched the labels of neuraloperator's 16 x 16 set best among 5, 10, 20, 50 and 1000 when
#: solved with this package's solver (docs/data_from_other_tools.md); their forcing is unknown.
#: The same values as ``generate --like neuralop-darcy`` (:mod:`neuralop_fem.peer_presets`).
DEFAULT_PHASE_VALUES = NEURALOP_PHASE_VALUES

#: Accepted (input, output) key pairs, newest first.
KEYS = (("x", "y"), ("input", "output"))

_SOURCE_GRID = {
    True: "periodic x_i = i/n on [0, 1) (neuraloperator's grid embedding)",
    False: "x_i = i/n, i = 0..n-1 on [0, 1) per axis (neuraloperator's grid embedding; the "
           "boundary x = 1 is not a sample point)",
}


def _keys(path: Path, data: dict[str, Any]) -> tuple[str, str]:
    for pair in KEYS:
        if all(k in data for k in pair):
            return pair
    msg = (f"{path}: a neuraloperator file must hold the keys 'x' and 'y' (or 'input' and "
           f"'output'); keys found: {sorted(data)}.")
    raise DatasetError(msg)


def _array(path: Path, data: dict[str, Any], key: str) -> np.ndarray:
    value = data[key]
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "biuf":
        msg = f"{path}: key `{key}` must be a bool or real tensor; got {type(value).__name__}."
        raise DatasetError(msg)
    return value


def _scalar(path: Path, data: dict[str, Any], key: str) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    arr = np.asarray(value, dtype=np.float64) if not isinstance(value, str) else np.array([])
    if arr.size != 1:
        msg = f"{path}: key `{key}` must be one number; got {value!r}."
        raise DatasetError(msg)
    return float(arr.ravel()[0])


def _problem(path: Path, x: np.ndarray, problem: str | None) -> str:
    guess = {2: "burgers", 3: "darcy"}.get(x.ndim)
    if problem is None:
        if guess is None:
            msg = (f"{path}: input `x` must have shape (N, n) (Burgers) or (N, n, n) (Darcy); "
                   f"got {x.shape}.")
            raise DatasetError(msg)
        return guess
    known = ("burgers", "darcy")  # the problems of neuraloperator's files
    if problem not in known:
        msg = f"`problem` must be one of {known} (the data problems); got {problem!r}."
        raise InputError(msg)
    return problem


def read_neuralop(path: str | os.PathLike[str], *, problem: str | None = None,
                  viscosity: float | None = None, final_time: float | None = None,
                  forcing: float | None = None,
                  phase_values: tuple[float, float] = DEFAULT_PHASE_VALUES) -> xr.Dataset:
    """Read a neuraloperator ``.pt`` dict into a schema dataset (in memory).

    Parameters
    ----------
    path : path-like
        The ``.pt`` file; read with :func:`~neuralop_fem.data.peers.safe_torch.load_plain`.
    problem : {"burgers", "darcy"} or None
        None: Burgers for a 2-D ``x`` (N, n), Darcy for a 3-D one (N, n, n).
    viscosity : float, optional
        Burgers viscosity; default the file's ``visc`` (an error if both are given and differ).
    final_time : float, optional
        Burgers: the time of ``y[:, -1]``. Unknown: the trajectory times are stored as
        fractions of it (``time_coordinate`` says so) and ``final_time`` as unknown.
    forcing : float, optional
        Darcy right-hand side (not in the files).
    phase_values : (float, float)
        Darcy coefficient of the True and False phases of a boolean ``x`` (both > 0).

    Raises
    ------
    DatasetError
        A file refused by ``load_plain``; missing keys, mismatched shapes, bad values.
    InputError
        Bad parameters.
    """
    path = Path(path)
    data = load_plain(path)
    kx, ky = _keys(path, data)
    x, y = _array(path, data, kx), _array(path, data, ky)
    problem = _problem(path, x, problem)
    spec = get_problem(problem)
    n_samples = x.shape[0]
    shape_ok = (x.ndim == 1 + spec.ndim and len(set(x.shape[1:])) == 1 and x.shape[-1] >= 2
                and n_samples >= 1)
    traj = problem == "burgers" and y.ndim == 3
    want_y = (n_samples, y.shape[1], *x.shape[1:]) if traj else x.shape
    if not shape_ok or y.shape != want_y or y.dtype.kind != "f":
        grid = ", ".join(["n"] * spec.ndim)
        msg = (f"{path}: a {problem} file must hold `{kx}` (N, {grid}) and float `{ky}` of "
               f"{'(N, T, n) or ' if problem == 'burgers' else ''}the same shape; got `{kx}` "
               f"{x.shape} {x.dtype}, `{ky}` {y.shape} {y.dtype}.")
        raise DatasetError(msg)
    attrs: dict[str, Any] = grid_convention(problem, source=_SOURCE_GRID[spec.periodic],
                                            relabelled=not spec.periodic)
    physics: dict[str, float | None] = {"forcing": forcing}
    if problem == "burgers":
        visc = _scalar(path, data, "visc")
        if viscosity is not None and visc is not None and viscosity != visc:
            msg = f"`viscosity` {viscosity!r} contradicts the file's `visc` {visc!r}."
            raise InputError(msg)
        physics = {"viscosity": visc if viscosity is None else viscosity,
                   "final_time": final_time}
    physics = check_physics(problem, physics)
    fields: dict[str, np.ndarray] = {}
    time = None
    if problem == "burgers":
        fields = {S.U0: x, S.U: y[:, -1] if traj else y}
        if traj:
            if not np.array_equal(y[:, 0], x):
                msg = (f"{path}: `{ky}[:, 0]` must equal `{kx}` (the trajectory starts at the "
                       "initial condition); it does not.")
                raise DatasetError(msg)
            fields[S.U_T] = y
            time = _times(path, data, y.shape[1], physics["final_time"], attrs)
    else:
        a = x
        if x.dtype == np.bool_:
            high, low = (float(v) for v in phase_values)
            if not (high > 0 and low > 0 and np.isfinite([high, low]).all()):
                msg = f"`phase_values` must be two finite numbers > 0; got {phase_values!r}."
                raise InputError(msg)
            a = np.where(x, high, low).astype(y.dtype)
            attrs.update(neuralop_phase_high=high, neuralop_phase_low=low,
                         neuralop_input="boolean phases: True -> neuralop_phase_high, "
                                        "False -> neuralop_phase_low")
        fields = {S.A: a, S.U: y}
        points = np.arange(x.shape[1]) / x.shape[1]
        attrs.update(source_x_coordinate=points, source_y_coordinate=points)
    dtype = np.result_type(*(v.dtype for v in fields.values() if v.dtype.kind == "f"))
    peer = {k: _memory(path, kx if k in (S.U0, S.A) else ky, v, dtype,
                       positive=spec.positive_input and k == S.A)
            for k, v in fields.items()}
    return build_dataset(problem, peer, attrs=attrs, fmt="neuraloperator .pt",
                         source_file=path.name, keys=sorted(data), physics=physics, time=time,
                         lazy=False)


def _memory(path: Path, key: str, values: np.ndarray, dtype: np.dtype, *,
            positive: bool) -> Field:
    arr = values.astype(dtype, copy=False)
    return Field(path, key, arr.shape, np.dtype(dtype), lambda a, b: arr[a:b], positive=positive)


def _times(path: Path, data: dict[str, Any], n_times: int, final_time: float | None,
           attrs: dict[str, Any]) -> np.ndarray:
    t = data.get("t")
    if isinstance(t, np.ndarray) and t.shape == (n_times,) and t.dtype.kind == "f":
        return t.astype(np.float64)
    if final_time is None:
        attrs["time_coordinate"] = ("fraction of the final time, which the file does not "
                                    "record (evenly spaced outputs assumed)")
        return np.linspace(0.0, 1.0, n_times)
    return np.linspace(0.0, final_time, n_times)


def import_neuralop(path: str | os.PathLike[str], out: str | os.PathLike[str], *,
                    problem: str | None = None, dtype: str | None = None,
                    overwrite: bool = False, viscosity: float | None = None,
                    final_time: float | None = None, forcing: float | None = None,
                    phase_values: tuple[float, float] = DEFAULT_PHASE_VALUES) -> Path:
    """Convert a neuraloperator ``.pt`` file to a netCDF dataset (see :func:`read_neuralop`).

    ``dtype``: storage type (None keeps the file's float type).
    """
    from ..io import check_target, save_dataset

    check_target(out, overwrite=overwrite)
    ds = read_neuralop(path, problem=problem, viscosity=viscosity, final_time=final_time,
                       forcing=forcing, phase_values=phase_values)
    return save_dataset(ds, out, dtype=dtype or ds.attrs[S.STORAGE_DTYPE], overwrite=overwrite)


def export_neuralop(data: xr.Dataset, out: str | os.PathLike[str], *,
                    dtype: str | None = None) -> Path:
    """Write a schema dataset as a neuraloperator ``.pt`` dict (``x``, ``y``; see the module).

    Parameters
    ----------
    data : xarray.Dataset
        A validated dataset (read whole: the format is one pickle).
    out : path-like
        Target file, written atomically.
    dtype : {"float32", "float64"} or None
        Float type of the tensors (None: the dataset's storage type).
    """
    import io

    import torch

    from ...files import write_bytes_atomic

    data = in_api_order(data)  # (sample, x, y) by name, whichever order it holds
    problem = str(data.attrs["problem"])
    dtype = dtype or str(data.attrs[S.STORAGE_DTYPE])
    spec = get_problem(problem)
    x = np.asarray(data[spec.input_name].values, dtype=dtype)
    out_dict: dict[str, Any] = {}
    if problem == "burgers":
        y, t = _burgers_trajectory(data, dtype)
        out_dict.update(t=torch.from_numpy(t))
        visc = data.attrs.get("viscosity")
        if isinstance(visc, float | np.floating):
            out_dict["visc"] = torch.tensor([[float(visc)]], dtype=torch.float64)
    else:
        y = np.asarray(data[spec.output_name].values, dtype=dtype)
        high, low = data.attrs.get("neuralop_phase_high"), data.attrs.get("neuralop_phase_low")
        if high is None and (data.attrs.get("contrast_high"), data.attrs.get("contrast_low")) \
                == DEFAULT_PHASE_VALUES:
            # Generated with the phases an import maps booleans to (generate --like
            # neuralop-darcy): their boolean x, read back by default.
            high, low = DEFAULT_PHASE_VALUES
        if high is not None and low is not None:
            raw = data[spec.input_name].values
            high, low = np.asarray([high, low], dtype=raw.dtype)
            if np.isin(raw, [high, low]).all():
                x = raw == high
    out_dict = {"x": torch.from_numpy(np.ascontiguousarray(x)),
                "y": torch.from_numpy(np.ascontiguousarray(y)), **out_dict}
    buffer = io.BytesIO()
    torch.save(out_dict, buffer)
    write_bytes_atomic(out, buffer.getvalue())
    return Path(out)


def _burgers_trajectory(data: xr.Dataset, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    final = data.attrs.get("final_time")
    final_time = float(final) if isinstance(final, float | np.floating | int) else 1.0
    u_t = data[S.U_T].values if S.U_T in data.data_vars else None
    time = data[S.TIME].values if S.U_T in data.data_vars else None
    if time is not None and "time_coordinate" in data.attrs:
        final_time = 1.0
    traj, t = trajectory_of(data[S.U0].values, data[S.U].values, u_t, time, final_time)
    return np.asarray(traj, dtype=dtype), t
