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

Mapping to the schema (each problem's is its kit's
:class:`~neuralop_fem.problems.peer_formats.NeuralopFormat`; a file is read as the problem
whose layout its arrays fit): ``x`` is the problem's input variable, ``y`` its output (the last
time of a trajectory, which is also kept as ``u_t``). Boolean phases become ``phase_values``
(high for True, low for False; the coefficient must be > 0). The values are stored as given on
this package's grid of the same size (the relabelling is recorded in the attributes). Export
writes ``x`` and ``y`` as tensors (``x`` as booleans again for a dataset imported from
booleans whose coefficient still takes only the two phase values, and for a generated
dataset whose two phases are :data:`DEFAULT_PHASE_VALUES`), plus ``visc`` and ``t``
(the trajectory times, where the final time is known) for Burgers, which ``PTDataset``
ignores; an import reads ``t`` back as the times, its last one the final time.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from ...errors import DatasetError, InputError
from ...files import write_bytes_atomic
from ...problems import NeuralopFormat, PeerTrajectory, ProblemKit
from ...problems.peer_presets import NEURALOP_PHASE_VALUES
from .. import schema as S
from ..dim_order import in_api_order
from ..io import check_target, save_dataset
from ._common import (
    Field,
    build_dataset,
    check_applicable,
    check_physics,
    check_times,
    check_values,
    file_number,
    format_kit,
    grid_convention,
    recognise,
    trajectory_of,
)
from .safe_torch import load_plain

__all__ = ["DEFAULT_PHASE_VALUES", "export_neuralop", "import_neuralop", "read_neuralop"]

#: Coefficient values given to the True and False phases of a boolean Darcy ``x`` (the Darcy
#: kit's ``neuralop_format.phase_values``). Their ratio, 20, matched the labels of
#: neuraloperator's 16 x 16 set best among 5, 10, 20, 50 and 1000 when solved with this
#: package's solver (docs/data_from_other_tools.md); their forcing is unknown. The same values
#: as ``generate --like neuralop-darcy`` (:mod:`neuralop_fem.problems.peer_presets`).
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
    return None if value is None else file_number(path, f"key `{key}`", value)


_ATTR = "neuralop_format"
_TOOL = "neuraloperator"


def _layout(kit: ProblemKit) -> str:
    grid = ", ".join(["n"] * kit.problem.ndim)
    steps = f" or (N, T, {grid})" if kit.neuralop_format.trajectory else ""
    return f"`x` (N, {grid}), `y` (N, {grid}){steps}"


def _fits(kit: ProblemKit, x: np.ndarray, y: np.ndarray) -> bool:
    """Whether ``x`` and ``y`` have the dimensionality of ``kit``'s layout."""
    ndim = 1 + kit.problem.ndim
    return x.ndim == ndim and (y.ndim == ndim or (y.ndim == ndim + 1
                                                  and kit.neuralop_format.trajectory is not None))


def _kit(path: Path, keys: tuple[str, str], x: np.ndarray, y: np.ndarray,
         problem: str | None) -> ProblemKit:
    if problem is not None:
        return format_kit(problem, _ATTR, _TOOL)
    kx, ky = keys
    found = f"`{kx}` {x.shape} {x.dtype}, `{ky}` {y.shape} {y.dtype}"
    return recognise(path, _ATTR, _TOOL, matches=lambda k: _fits(k, x, y), layout=_layout,
                     found=found)


def read_neuralop(path: str | os.PathLike[str], *, problem: str | None = None,
                  viscosity: float | None = None, final_time: float | None = None,
                  forcing: float | None = None,
                  phase_values: tuple[float, float] | None = None) -> xr.Dataset:
    """Read a neuraloperator ``.pt`` dict into a schema dataset (in memory).

    Each problem's layout is its kit's
    :class:`~neuralop_fem.problems.peer_formats.NeuralopFormat`.

    Parameters
    ----------
    path : path-like
        The ``.pt`` file; read with :func:`~neuralop_fem.data.peers.safe_torch.load_plain`.
    problem : {"burgers", "darcy"} or None
        None: the problem whose layout the arrays fit (Burgers for a 2-D ``x`` (N, n), Darcy
        for a 3-D one (N, n, n)).
    viscosity : float, optional
        Burgers viscosity; default the file's ``visc`` (an error if both are given and differ).
    final_time : float, optional
        Burgers: the time of ``y[:, -1]``; default the last of the file's times ``t``
        (written by :func:`export_neuralop`). Unknown: the trajectory times are stored as
        fractions of it (``time_coordinate`` says so) and ``final_time`` as unknown.
    forcing : float, optional
        Darcy right-hand side (not in the files).
    phase_values : (float, float), optional
        Darcy coefficient of the True and False phases of a boolean ``x`` (both > 0);
        default :data:`DEFAULT_PHASE_VALUES`.

    Raises
    ------
    DatasetError
        A file refused by ``load_plain``; missing keys, mismatched shapes, bad values; arrays
        that fit no problem's layout.
    InputError
        Bad parameters, or a parameter of another problem than the file's.
    """
    path = Path(path)
    data = load_plain(path)
    kx, ky = _keys(path, data)
    x, y = _array(path, data, kx), _array(path, data, ky)
    kit = _kit(path, (kx, ky), x, y, problem)
    problem, spec, fmt = kit.name, kit.problem, kit.neuralop_format
    check_applicable(problem, {"viscosity": viscosity, "final_time": final_time,
                               "forcing": forcing})
    if phase_values is not None and fmt.phase_values is None:
        msg = (f"`phase_values` applies to darcy files (boolean phases) only; got "
               f"{phase_values!r} for a {problem} file.")
        raise InputError(msg)
    n_samples = x.shape[0]
    shape_ok = (x.ndim == 1 + spec.ndim and len(set(x.shape[1:])) == 1 and x.shape[-1] >= 2
                and n_samples >= 1)
    traj = fmt.trajectory is not None and y.ndim == x.ndim + 1
    want_y = (n_samples, y.shape[1], *x.shape[1:]) if traj else x.shape
    if not shape_ok or y.shape != want_y or y.dtype.kind != "f":
        grid = ", ".join(["n"] * spec.ndim)
        steps = f"(N, T, {grid}) or " if fmt.trajectory is not None else ""
        msg = (f"{path}: a {problem} file must hold `{kx}` (N, {grid}) and float `{ky}` of "
               f"{steps}the same shape; got `{kx}` {x.shape} {x.dtype}, `{ky}` {y.shape} "
               f"{y.dtype}.")
        raise DatasetError(msg)
    attrs: dict[str, Any] = grid_convention(problem, source=_SOURCE_GRID[spec.periodic],
                                            relabelled=not spec.periodic)
    given: dict[str, float | None] = {"viscosity": viscosity, "final_time": final_time,
                                      "forcing": forcing}
    origins: dict[str, str] = {}  # the parameters read from the file, and where
    for key, name in fmt.scalars.items():
        value = _scalar(path, data, key)
        if given.get(name) is not None and value is not None and given[name] != value:
            msg = f"`{name}` {given[name]!r} contradicts the file's `{key}` {value!r}."
            raise InputError(msg)
        if given.get(name) is None and value is not None:
            given[name], origins[name] = value, f"key `{key}`"
    times = _file_times(path, data, y.shape[1]) if traj else None
    if times is not None:  # our export's `t`, which ends at the final time
        name, last = fmt.trajectory.final_time, float(times[-1])
        if given.get(name) is not None and given[name] != last:
            msg = f"`{name}` {given[name]!r} contradicts the file's `t`, which ends at {last!r}."
            raise InputError(msg)
        given[name], origins[name] = last, "key `t`"
    physics = check_physics(problem, given, path=path, origins=origins)
    for key, values in ((kx, x), (ky, y)):  # a NaN is named as one, before any comparison
        check_values(path, key, values, positive=False)
    a = x
    if x.dtype == np.bool_ and fmt.phase_values is not None:
        high, low = (float(v) for v in (phase_values or fmt.phase_values))
        if not (high > 0 and low > 0 and np.isfinite([high, low]).all()):
            msg = f"`phase_values` must be two finite numbers > 0; got {phase_values!r}."
            raise InputError(msg)
        a = np.where(x, high, low).astype(y.dtype)
        attrs.update(neuralop_phase_high=high, neuralop_phase_low=low,
                     neuralop_input="boolean phases: True -> neuralop_phase_high, "
                                    "False -> neuralop_phase_low")
    fields: dict[str, np.ndarray] = {spec.input_name: a,
                                     spec.output_name: y[:, -1] if traj else y}
    time = None
    if traj:
        if not np.array_equal(y[:, 0], x):
            msg = (f"{path}: `{ky}[:, 0]` must equal `{kx}` (the trajectory starts at the "
                   "initial condition); it does not.")
            raise DatasetError(msg)
        fields[fmt.trajectory.field] = y
        time = _times(path, data, y.shape[1], physics[fmt.trajectory.final_time], attrs)
    if not spec.periodic:
        points = np.arange(x.shape[1]) / x.shape[1]
        attrs.update({f"source_{dim}_coordinate": points for dim in spec.dims})
    dtype = np.result_type(*(v.dtype for v in fields.values() if v.dtype.kind == "f"))
    peer = {k: _memory(path, kx if k == spec.input_name else ky, v, dtype,
                       positive=spec.positive_input and k == spec.input_name)
            for k, v in fields.items()}
    return build_dataset(problem, peer, attrs=attrs, fmt="neuraloperator .pt",
                         source_file=path.name, keys=sorted(data), physics=physics, time=time,
                         lazy=False)


def _memory(path: Path, key: str, values: np.ndarray, dtype: np.dtype, *,
            positive: bool) -> Field:
    arr = values.astype(dtype, copy=False)
    return Field(path, key, arr.shape, np.dtype(dtype), lambda a, b: arr[a:b], positive=positive)


def _file_times(path: Path, data: dict[str, Any], n_times: int) -> np.ndarray | None:
    """The times ``t`` of the trajectory (written by :func:`export_neuralop`), checked
    (finite, strictly increasing from 0), or None."""
    t = data.get("t")
    if isinstance(t, np.ndarray) and t.shape == (n_times,) and t.dtype.kind == "f":
        check_times(path, "t", t)
        return t.astype(np.float64)
    return None


def _times(path: Path, data: dict[str, Any], n_times: int, final_time: float | None,
           attrs: dict[str, Any]) -> np.ndarray:
    t = _file_times(path, data, n_times)
    if t is not None:
        return t
    if final_time is None:
        attrs["time_coordinate"] = ("fraction of the final time, which the file does not "
                                    "record (evenly spaced outputs assumed)")
        return np.linspace(0.0, 1.0, n_times)
    return np.linspace(0.0, final_time, n_times)


def import_neuralop(path: str | os.PathLike[str], out: str | os.PathLike[str], *,
                    problem: str | None = None, dtype: str | None = None,
                    overwrite: bool = False, viscosity: float | None = None,
                    final_time: float | None = None, forcing: float | None = None,
                    phase_values: tuple[float, float] | None = None) -> Path:
    """Convert a neuraloperator ``.pt`` file to a netCDF dataset (see :func:`read_neuralop`).

    ``dtype``: storage type (None keeps the file's float type).
    """
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

    data = in_api_order(data)  # (sample, x, y) by name, whichever order it holds
    kit = format_kit(str(data.attrs["problem"]), _ATTR, _TOOL, what="the dataset's problem")
    spec, fmt = kit.problem, kit.neuralop_format
    dtype = dtype or str(data.attrs[S.STORAGE_DTYPE])
    x = np.asarray(data[spec.input_name].values, dtype=dtype)
    out_dict: dict[str, Any] = {}
    if fmt.trajectory is not None:
        y, t = _trajectory(data, dtype, spec.input_name, spec.output_name, fmt.trajectory)
        final = data.attrs.get(fmt.trajectory.final_time)
        if isinstance(final, float | np.floating | int) and "time_coordinate" not in data.attrs:
            out_dict.update(t=torch.from_numpy(t))  # times known: import reads them back
    else:
        y = np.asarray(data[spec.output_name].values, dtype=dtype)
    for key, name in fmt.scalars.items():
        value = data.attrs.get(name)
        if isinstance(value, float | np.floating):
            out_dict[key] = torch.tensor([[float(value)]], dtype=torch.float64)
    if fmt.phase_values is not None:
        booleans = _phases(data, spec.input_name, fmt)
        if booleans is not None:
            x = booleans
    out_dict = {"x": torch.from_numpy(np.ascontiguousarray(x)),
                "y": torch.from_numpy(np.ascontiguousarray(y)), **out_dict}
    buffer = io.BytesIO()
    torch.save(out_dict, buffer)
    write_bytes_atomic(out, buffer.getvalue())
    return Path(out)


def _phases(data: xr.Dataset, name: str, fmt: NeuralopFormat) -> np.ndarray | None:
    """The boolean phases of input ``name`` (True: the high phase), or None when it takes other
    values than the two phases recorded by an import or by ``generate``."""
    high, low = data.attrs.get("neuralop_phase_high"), data.attrs.get("neuralop_phase_low")
    if high is None and fmt.phase_attrs is not None \
            and tuple(data.attrs.get(a) for a in fmt.phase_attrs) == fmt.phase_values:
        # Generated with the phases an import maps booleans to (generate --like
        # neuralop-darcy): their boolean x, read back by default.
        high, low = fmt.phase_values
    if high is None or low is None:
        return None
    raw = data[name].values
    high, low = np.asarray([high, low], dtype=raw.dtype)
    return raw == high if np.isin(raw, [high, low]).all() else None


def _trajectory(data: xr.Dataset, dtype: str, first: str, last: str,
                trajectory: PeerTrajectory) -> tuple[np.ndarray, np.ndarray]:
    final = data.attrs.get(trajectory.final_time)
    final_time = float(final) if isinstance(final, float | np.floating | int) else 1.0
    kept = trajectory.field in data.data_vars
    u_t = data[trajectory.field].values if kept else None
    time = data[S.TIME].values if kept else None
    if time is not None and "time_coordinate" in data.attrs:
        final_time = 1.0
    traj, t = trajectory_of(data[first].values, data[last].values, u_t, time, final_time)
    return np.asarray(traj, dtype=dtype), t
