"""PDEBench's HDF5 files (1D Burgers, 2D Darcy), both ways, read and written lazily.

Layout (read from PDEBench's generators and ``FNODatasetSingle``)
----------------------------------------------------------------
* 1D Burgers ``1D_Burgers_Sols_Nu{nu}.hdf5``: ``tensor`` (N, T, n), the trajectory with the
  initial condition first; ``x-coordinate`` (n), the cell centres ``(i + 1/2)/n`` of [0, 1];
  ``t-coordinate`` (T + 1), the output times (one more than ``tensor`` holds). Periodic. The
  equation is ``u_t + (u^2/2)_x = (nu/pi) u_xx`` with ``nu`` only in the file name, so this
  package's viscosity is ``nu/pi``.
* 2D Darcy ``2D_DarcyFlow_beta{beta}_Train.hdf5``: ``nu`` (N, n, n), the coefficient (two
  values, 1 and 0.1); ``tensor`` (N, 1, n, n), the solution; ``x-coordinate``, ``y-coordinate``
  (n), cell centres; the forcing ``beta`` in the file name and the attribute ``beta``.

Each problem's layout is its kit's
:class:`~neuralop_fem.problems.peer_formats.PDEBenchFormat` (the input dataset or the
trajectory, the parameter of the file name and its factor); a file is read as the problem whose
layout its datasets fit.

Import stores the values as given, without interpolation, on this package's grid of the same
size: for Burgers the half-cell shift is a translation of the periodic problem, which the
equation does not see; Darcy keeps its cell centres (the dataset's ``grid`` is
``"cell-centred"``, :mod:`neuralop_fem.data.grids`: the first and last rows are half a cell
inside the boundary, so the labels are not zero there and training sets no zero ring). The source
coordinates are kept as attributes, and export writes them back. Export writes the same keys
(with this package's coordinates for its own data), the forcing ``beta`` and the parameters
as ``neuralop_fem_*`` attributes, which an import prefers to the file name.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from ...errors import DatasetError
from ...files import atomic_path
from ...problems import PDEBenchFormat, PeerTrajectory, ProblemKit
from .. import schema as S
from ..dim_order import in_api_order
from ..io import check_target, save_dataset
from ..names import GRID
from ..safe_hdf5 import checked_dataset, open_hdf5
from ._common import (
    Field,
    build_dataset,
    check_applicable,
    check_physics,
    check_times,
    file_number,
    format_kit,
    grid_convention,
    recognise,
    trajectory_of,
)

__all__ = ["export_pdebench", "import_pdebench", "read_pdebench"]

_NUMBER = r"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"
_OWN = "neuralop_fem_"
_ATTR = "pdebench_format"
_TOOL = "PDEBench"
#: The trajectory's times (one more than ``tensor`` holds, as PDEBench writes them).
_TIMES = "t-coordinate"
#: The attribute of an imported file that keeps its ``t-coordinate`` as read.
_SOURCE_TIMES = "source_t_coordinate"


def _keys(kit: ProblemKit) -> dict[str, int]:
    """The datasets a problem's PDEBench file holds -> their number of dimensions."""
    fmt, ndim = kit.pdebench_format, kit.problem.ndim
    keys = {} if fmt.input_key is None else {fmt.input_key: 1 + ndim}
    keys["tensor"] = 2 + ndim
    keys.update({f"{dim}-coordinate": 1 for dim in kit.problem.dims})
    if fmt.trajectory is not None:
        keys[_TIMES] = 1
    return keys


@contextmanager
def _opened(path: Path) -> Iterator[Any]:
    with open_hdf5(path, what="an HDF5 file") as f:
        yield f


def _dataset(f: Any, path: Path, key: str, ndim: int) -> Any:
    import h5py

    node = f.get(key)
    if not isinstance(node, h5py.Dataset):
        msg = f"{path}: a PDEBench file must hold the dataset `{key}`; keys found: {sorted(f)}."
        raise DatasetError(msg)
    if node.ndim != ndim or node.dtype.kind != "f":
        msg = (f"{path}: dataset `{key}` must be a {ndim}-D float array; got shape "
               f"{node.shape}, dtype {node.dtype}.")
        raise DatasetError(msg)
    return checked_dataset(path, key, node)


def _coordinate(f: Any, path: Path, key: str, n: int, periodic: bool) -> tuple[np.ndarray, str]:
    node = _dataset(f, path, key, 1)
    if node.shape != (n,):
        msg = (f"{path}: `{key}` must hold the {n} points of the grid; got {node.shape[0]} "
               "values.")
        raise DatasetError(msg)
    values = np.asarray(node[()], dtype=np.float64)
    i = np.arange(n)
    options = {"cell centres x_i = (i + 1/2)/n on [0, 1] (PDEBench)": (i + 0.5) / n}
    options["periodic x_i = i/n" if periodic else "nodes x_i = i/(n-1)"] = (
        i / n if periodic else i / max(n - 1, 1))
    for name, want in options.items():
        # float32 coordinates: 1e-6 is a few units in their last place on [0, 1].
        if values.shape == want.shape and np.allclose(values, want, rtol=0, atol=1e-6):
            return values, name
    msg = (f"{path}: `{key}` must be the {n} cell centres (i + 1/2)/n of [0, 1] or this "
           f"package's grid; got {values.size} values from {values[:1]} to {values[-1:]}.")
    raise DatasetError(msg)


def _layout(kit: ProblemKit) -> str:
    grid = ", ".join(["n"] * kit.problem.ndim)
    fmt = kit.pdebench_format
    first = "" if fmt.input_key is None else f"`{fmt.input_key}` (N, {grid}), "
    steps = "T" if fmt.input_key is None else "1"
    return f"{first}`tensor` (N, {steps}, {grid}), " + ", ".join(
        f"`{k}`" for k, ndim in _keys(kit).items() if ndim == 1)


def _kit(f: Any, path: Path, problem: str | None) -> ProblemKit:
    if problem is not None:
        return format_kit(problem, _ATTR, _TOOL)

    def matches(kit: ProblemKit) -> bool:
        return all(getattr(f.get(k), "ndim", None) == ndim for k, ndim in _keys(kit).items())

    found = ", ".join(f"`{k}` {getattr(f.get(k), 'shape', '(not an array)')}"
                      for k in sorted(f)) or "no datasets"
    return recognise(path, _ATTR, _TOOL, matches=matches, layout=_layout, found=found)


def _parameter(f: Any, path: Path, fmt: PDEBenchFormat,
               given: float | None) -> tuple[float | None, str]:
    name = fmt.parameter
    if given is not None:
        return given, "given"
    if _OWN + name in f.attrs:
        value = file_number(path, f"attribute `{_OWN + name}`", f.attrs[_OWN + name])
        return value, f"attribute {_OWN + name}"
    if fmt.attribute is not None and fmt.attribute in f.attrs:
        value = file_number(path, f"attribute `{fmt.attribute}`", f.attrs[fmt.attribute])
        return value * fmt.factor, f"attribute {fmt.attribute}"
    found = re.search(re.escape(fmt.name_tag) + _NUMBER, path.name)
    if found:
        return float(found.group(1)) * fmt.factor, f"file name ({found.group(0)})"
    return None, "unknown"


def _field(node: Any, path: Path, key: str, shape: tuple[int, ...], select: Any,
           positive: bool = False) -> Field:
    # float16 is read as float32, as the .pt reader does (the schema stores 32 or 64 bits).
    dtype = np.promote_types(node.dtype, np.float32)
    return Field(path, key, shape, dtype, lambda a, b: select(node, a, b), positive=positive)


def _origins(origin: str, name: str) -> dict[str, str]:
    """Where in the file the parameter ``name`` was read (none when it was given), as
    messages name it (``attribute `beta```)."""
    if origin in ("given", "unknown"):
        return {}
    kind, _, rest = origin.partition(" ")
    return {name: f"attribute `{rest}`" if kind == "attribute" else origin}


def _read(f: Any, path: Path, *, problem: str | None, viscosity: float | None,
          forcing: float | None, trajectory: bool, lazy: bool) -> xr.Dataset:
    kit = _kit(f, path, problem)
    problem, spec, fmt = kit.name, kit.problem, kit.pdebench_format
    check_applicable(problem, {"viscosity": viscosity, "forcing": forcing})
    given = {"viscosity": viscosity, "forcing": forcing}.get(fmt.parameter)
    value, origin = _parameter(f, path, fmt, given)
    attrs: dict[str, Any] = {}
    grid = ", ".join(["n"] * spec.ndim)
    time = None
    if fmt.trajectory is not None:
        tensor = _dataset(f, path, "tensor", 2 + spec.ndim)
        n_samples, n_times, n = tensor.shape[0], tensor.shape[1], tensor.shape[-1]
        times = _dataset(f, path, _TIMES, 1)
        if n_times < 2 or n < 2 or n_samples < 1 or times.size not in (n_times, n_times + 1) \
                or len(set(tensor.shape[2:])) != 1:
            msg = (f"{path}: `tensor` (N, T, {grid}) needs N >= 1, T >= 2, n >= 2 and "
                   f"`{_TIMES}` of T or T + 1 times; got {tensor.shape} and {times.size} "
                   "times.")
            raise DatasetError(msg)
        t = np.asarray(times[()], dtype=np.float64)  # T or T + 1 values: checked above
        time = t[:n_times]
        check_times(path, _TIMES, t)
        attrs[_SOURCE_TIMES] = t  # their extra last time, which export writes back as it was
        physics = check_physics(problem, {fmt.parameter: value,
                                          fmt.trajectory.final_time: float(time[-1])},
                                path=path, origins=_origins(origin, fmt.parameter))
        shape = (n_samples, *tensor.shape[2:])
        fields = {
            spec.input_name: _field(tensor, path, "tensor[:, 0]", shape,
                                    lambda d, a, b: d[a:b, 0], positive=spec.positive_input),
            spec.output_name: _field(tensor, path, "tensor[:, -1]", shape,
                                     lambda d, a, b: d[a:b, n_times - 1]),
        }
        if trajectory and n_times > 2:
            fields[fmt.trajectory.field] = _field(tensor, path, "tensor", tensor.shape,
                                                  lambda d, a, b: d[a:b])
    else:
        inputs = _dataset(f, path, fmt.input_key, 1 + spec.ndim)
        tensor = _dataset(f, path, "tensor", 2 + spec.ndim)
        n_samples, n = inputs.shape[0], inputs.shape[1]
        shape = (n_samples, *[n] * spec.ndim)
        if tensor.shape != (n_samples, 1, *shape[1:]) or inputs.shape != shape or n < 2:
            msg = (f"{path}: `{fmt.input_key}` (N, {grid}) and `tensor` (N, 1, {grid}) must "
                   f"match; got {inputs.shape} and {tensor.shape}.")
            raise DatasetError(msg)
        physics = check_physics(problem, {fmt.parameter: value}, path=path,
                                origins=_origins(origin, fmt.parameter))
        fields = {spec.input_name: _field(inputs, path, fmt.input_key, shape,
                                          lambda d, a, b: d[a:b],
                                          positive=spec.positive_input),
                  spec.output_name: _field(tensor, path, "tensor", shape,
                                           lambda d, a, b: d[a:b, 0])}
    names = []
    for dim in spec.dims:
        values, name = _coordinate(f, path, f"{dim}-coordinate", n, spec.periodic)
        attrs[f"source_{dim}_coordinate"] = values
        names.append(name)
    # Cell centres of a bounded domain stay cell centres (grid "cell-centred": no zero
    # boundary ring in training, the cell-centred solver in `check`); on a periodic grid
    # they are a shift of ours.
    cells = not spec.periodic and names[0].startswith("cell centres")
    if cells:
        attrs[GRID] = "cell-centred"
    attrs.update(grid_convention(
        problem, source=names[0], grid="cell-centred" if cells else "nodes",
        relabelled=not cells and not names[0].startswith(("periodic", "nodes"))))
    attrs[f"{fmt.parameter}_from"] = origin
    return build_dataset(problem, fields, attrs=attrs, fmt="PDEBench HDF5",
                         source_file=path.name, keys=list(_keys(kit)), physics=physics,
                         time=time, lazy=lazy)


def read_pdebench(path: str | os.PathLike[str], *, problem: str | None = None,
                  viscosity: float | None = None, forcing: float | None = None,
                  trajectory: bool = True) -> xr.Dataset:
    """Read a PDEBench 1D Burgers or 2D Darcy HDF5 file into an in-memory schema dataset.

    For files larger than memory use :func:`import_pdebench`, which streams them.

    Parameters
    ----------
    path : path-like
    problem : {"burgers", "darcy"} or None
        None: the problem whose layout the file's datasets fit (Darcy: ``nu`` (N, n, n) and
        ``tensor`` (N, 1, n, n); Burgers: ``tensor`` (N, T, n) and ``t-coordinate``).
    viscosity : float, optional
        Burgers viscosity of this package's equation ``u_t + u u_x = viscosity u_xx``.
        Default: the ``neuralop_fem_viscosity`` attribute, else PDEBench's ``Nu`` of the file
        name divided by pi.
    forcing : float, optional
        Darcy right-hand side. Default: the attribute ``beta``, else the file name's ``beta``.
    trajectory : bool
        Keep the Burgers trajectory as ``u_t`` (with more than two times).

    Raises
    ------
    DatasetError
        Not HDF5, truncated, missing keys, mismatched shapes, unknown grids, bad values.
    """
    path = Path(path)
    with _opened(path) as f:
        return _read(f, path, problem=problem, viscosity=viscosity, forcing=forcing,
                     trajectory=trajectory, lazy=False)


def import_pdebench(path: str | os.PathLike[str], out: str | os.PathLike[str], *,
                    problem: str | None = None, dtype: str | None = None,
                    overwrite: bool = False, viscosity: float | None = None,
                    forcing: float | None = None, trajectory: bool = True) -> Path:
    """Convert a PDEBench HDF5 file to a netCDF dataset, streaming it in sample chunks.

    Parameters as :func:`read_pdebench`; ``dtype``: storage type (None keeps the file's).
    A bad value found while streaming removes the partial output.
    """
    import dask

    check_target(out, overwrite=overwrite)
    path = Path(path)
    with _opened(path) as f:
        ds = _read(f, path, problem=problem, viscosity=viscosity, forcing=forcing,
                   trajectory=trajectory, lazy=True)
        with dask.config.set(scheduler="synchronous"):  # h5py reads from one thread
            return save_dataset(ds, out, dtype=dtype or ds.attrs[S.STORAGE_DTYPE],
                                overwrite=overwrite)


def export_pdebench(data: xr.Dataset, out: str | os.PathLike[str], *,
                    dtype: str | None = None, chunk: int = 64) -> Path:
    """Write a schema dataset as a PDEBench HDF5 file, ``chunk`` samples at a time.

    Burgers: ``tensor`` is the trajectory (``u_t`` with ``u0`` first and ``u`` last where
    they are not already in it; ``[u0, u]`` without one), ``t-coordinate`` its times plus one
    more step, as PDEBench writes it (an imported file's own ``t-coordinate`` where the times
    are the ones it was read with). Darcy: ``nu`` = ``a``, ``tensor`` = ``u[:, None]``,
    attribute ``beta`` = the forcing. Coordinates: the recorded source coordinates of an
    imported PDEBench file, else this package's grid; coordinates in float64 (PDEBench's
    loader casts them to float32). Written atomically.
    """
    import h5py

    data = in_api_order(data)  # (sample, x, y) by name, whichever order it holds
    kit = format_kit(str(data.attrs["problem"]), _ATTR, _TOOL, what="the dataset's problem")
    spec, fmt = kit.problem, kit.pdebench_format
    dtype = dtype or str(data.attrs[S.STORAGE_DTYPE])
    n_samples = int(data.sizes[S.SAMPLE])
    physics = {k: data.attrs.get(k) for k in kit.physics}
    with atomic_path(out) as tmp, h5py.File(tmp, "w") as f:
        for dim in spec.dims:
            source = data.attrs.get(f"source_{dim}_coordinate")
            values = data[dim].values if source is None or np.size(source) != data.sizes[dim] \
                else np.asarray(source)
            f.create_dataset(f"{dim}-coordinate", data=np.asarray(values, dtype=np.float64))
        for name, value in physics.items():
            if isinstance(value, float | np.floating | int):
                f.attrs[_OWN + name] = float(value)
        f.attrs[_OWN + "source"] = str(data.attrs.get("source", ""))
        if fmt.trajectory is not None:
            _write_trajectory(f, data, dtype, n_samples, chunk, spec.input_name,
                              spec.output_name, fmt.trajectory)
        else:
            value = physics.get(fmt.parameter)
            if fmt.attribute is not None and isinstance(value, float | np.floating | int):
                f.attrs[fmt.attribute] = float(value) / fmt.factor
            shape = tuple(data.sizes[dim] for dim in spec.dims)
            inputs = f.create_dataset(fmt.input_key, shape=(n_samples, *shape), dtype=dtype)
            tensor = f.create_dataset("tensor", shape=(n_samples, 1, *shape), dtype=dtype)
            for a in range(0, n_samples, chunk):
                block = data.isel(sample=slice(a, a + chunk))
                inputs[a:a + chunk] = block[spec.input_name].values
                tensor[a:a + chunk, 0] = block[spec.output_name].values
    return Path(out)


def _write_trajectory(f: Any, data: xr.Dataset, dtype: str, n_samples: int, chunk: int,
                      first: str, last: str, trajectory: PeerTrajectory) -> None:
    has_t = trajectory.field in data.data_vars
    final = data.attrs.get(trajectory.final_time)
    final_time = float(final) if isinstance(final, float | np.floating | int) else 1.0
    time = data[S.TIME].values if has_t else None
    if has_t and "time_coordinate" in data.attrs:
        final_time = 1.0  # times stored as fractions of an unknown final time
    tensor = None
    t = np.zeros(0)
    for a in range(0, n_samples, chunk):
        block = data.isel(sample=slice(a, a + chunk))
        traj, t = trajectory_of(block[first].values, block[last].values,
                                block[trajectory.field].values if has_t else None, time,
                                final_time)
        if tensor is None:
            tensor = f.create_dataset("tensor", shape=(n_samples, *traj.shape[1:]), dtype=dtype)
        tensor[a:a + chunk] = traj
    source = np.asarray(data.attrs.get(_SOURCE_TIMES, []), dtype=np.float64).ravel()
    if source.size == t.size + 1 and np.array_equal(source[:-1], t):
        f.create_dataset(_TIMES, data=source)  # an imported file's times, its last one included
    else:
        f.create_dataset(_TIMES, data=np.append(t, t[-1] + (t[-1] - t[-2])))
