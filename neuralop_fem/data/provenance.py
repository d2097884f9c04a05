"""The provenance record of a dataset: one owner of the ``config_json`` attribute.

Every dataset file carries, beside its plain attributes, a JSON copy of what produced it in
the global attribute ``config_json``. Three producers write it and several readers read it;
this module is the only place that knows its layout:

* :func:`generation_record` (written by ``generate``): ``{"settings": {...every generation
  setting, problem included...}, "n_samples", "chunk_size", "solver_class",
  "solver_config", "neuralop_fem_version", "float_paths"}``;
* :func:`import_record` (written by ``import-mat``): ``{"problem", "source_file", "format",
  "keys", "physics"}``, where ``physics`` maps each parameter of :func:`physics_options` to
  the value given to ``import-mat`` or None (unknown: the legacy files do not record them);
* :func:`default_record` (datasets built by hand with :func:`~neuralop_fem.data.save_dataset`):
  a JSON copy of the attributes.

Readers: :func:`read_record` (the parsed dict, or ``{}``), :func:`generation_settings` (the
settings of a generated file, or None), :func:`unknown_physics` (the physical parameters an
imported file lacks) and :func:`solver_from_record` (the classical solver that produced the
labels, rebuilt; it refuses, naming the missing parameters, rather than guess them), and
:func:`dataset_provenance`, the dataset section of a training run's ``run.json``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from solvers.problems import get_problem

from ..errors import DatasetError
from ..problems import data_problems, get_kit
from ..safe_documents import parse_json

if TYPE_CHECKING:  # pragma: no cover
    import xarray as xr

    from solvers.contract import Solver

__all__ = [
    "ATTR",
    "ValuesDigest",
    "dataset_provenance",
    "default_record",
    "field_names",
    "generation_record",
    "generation_settings",
    "import_record",
    "physics_options",
    "read_record",
    "require_physics",
    "solver_from_record",
    "unknown_physics",
    "variables_checksum",
]

#: The global attribute that holds the record.
ATTR = "config_json"


def physics_options(problem: str) -> dict[str, str]:
    """The physical parameters of data problem ``problem`` that a reference solver needs (its
    kit's ``physics``), each with the ``neuralop-fem import-mat`` option that supplies it
    (``generate`` always records them)::

        >>> physics_options("burgers")
        {'viscosity': '--viscosity', 'final_time': '--final-time'}
    """
    return {name: "--" + name.replace("_", "-") for name in get_kit(problem).physics}


def _dumps(record: Mapping[str, object]) -> str:
    return json.dumps(dict(record), sort_keys=True, default=str)


def generation_record(*, settings: Mapping[str, object], n_samples: int, chunk_size: int,
                      solver_class: str, solver_config: Mapping[str, object], version: str,
                      float_paths: Sequence[Mapping[str, object] | None] | None = None) -> str:
    """The ``config_json`` text of a file written by ``generate``.

    ``float_paths``: the distinct kernel choices of the processes that solved the samples
    (:func:`neuralop_fem.data.float_paths.float_paths`; None for samples written by an earlier
    release), in the order met.
    """
    return _dumps({
        "settings": dict(settings), "n_samples": int(n_samples), "chunk_size": int(chunk_size),
        "solver_class": solver_class, "solver_config": dict(solver_config),
        "neuralop_fem_version": version, "float_paths": list(float_paths or []),
    })


def import_record(*, problem: str, source_file: str, layout: str, keys: list[str],
                  physics: Mapping[str, float | None]) -> str:
    """The ``config_json`` text of a file converted by ``import-mat``.

    ``physics`` maps every parameter of ``physics_options(problem)`` to its value, None if
    unknown.
    """
    values = {name: physics.get(name) for name in physics_options(problem)}
    return _dumps({"problem": problem, "source_file": source_file, "format": layout,
                   "keys": list(keys), "physics": values})


def default_record(attrs: Mapping[str, object]) -> str:
    """The ``config_json`` text of a dataset built by hand: a JSON copy of its attributes."""
    return _dumps(attrs)


def read_record(attrs: Mapping[str, object], *, source: str = "<dataset>") -> dict[str, Any]:
    """The parsed record of a dataset's attributes; ``{}`` when there is none.

    Raises
    ------
    DatasetError
        If ``config_json`` is present but not a JSON object (a damaged file), naming ``source``.
    """
    text = attrs.get(ATTR)
    if text is None:
        return {}
    # Bounded (nesting, duplicate keys): the attribute is the file's (safe_documents).
    record = parse_json(str(text), source=f"{source}: attribute `{ATTR}`", error=DatasetError)
    if not isinstance(record, dict):
        msg = f"{source}: attribute `{ATTR}` must be a JSON object; got {type(record).__name__}."
        raise DatasetError(msg)
    return record


def generation_settings(attrs: Mapping[str, object], *,
                        source: str = "<dataset>") -> dict[str, Any] | None:
    """``{"settings", "chunk_size", ...}`` of a file written by ``generate``; None otherwise."""
    record = read_record(attrs, source=source)
    settings = record.get("settings")
    if not isinstance(settings, dict) or "problem" not in settings:
        return None
    return record


def _is_import(record: Mapping[str, object]) -> bool:
    return "source_file" in record and "format" in record


def unknown_physics(attrs: Mapping[str, object], problem: str, *,
                    source: str = "<dataset>") -> list[str]:
    """The physical parameters (:func:`physics_options`) an imported dataset does not record.

    Empty for a file written by ``generate`` or by hand, and for an import that was given
    every parameter (``import-mat --viscosity ... --final-time ...`` / ``--forcing ...``).
    """
    record = read_record(attrs, source=source)
    if not _is_import(record):
        return []
    physics = record.get("physics")
    physics = physics if isinstance(physics, dict) else {}
    return [name for name in physics_options(get_problem(problem).data_problem)
            if physics.get(name) is None]


def require_physics(attrs: Mapping[str, object], problem: str, *,
                    source: str = "<dataset>") -> None:
    """Raise unless every physical parameter of the dataset is known (:func:`unknown_physics`).

    Raises
    ------
    DatasetError
        Naming the missing parameters and the import command and options that supply them.
    """
    missing = unknown_physics(attrs, problem, source=source)
    if missing:
        raise _refuse_unknown(read_record(attrs, source=source), problem, missing, source)


def _refuse_unknown(record: Mapping[str, object], problem: str, missing: list[str],
                    source: str) -> DatasetError:
    data_problem = get_problem(problem).data_problem
    options = " ".join(f"{physics_options(data_problem)[m]} VALUE" for m in missing)
    name = record.get("source_file", "FILE.mat")
    msg = (f"{source}: the {data_problem} data were imported from {name!r} without "
           f"{', '.join(missing)}, so the classical solver that produced the labels is unknown "
           f"and none is picked with default values. Re-import the file with "
           f"`neuralop-fem {_importer(record)} {name} --problem {data_problem} {options} "
           "--out FILE.nc` and use that file.")
    return DatasetError(msg)


def _importer(record: Mapping[str, object]) -> str:
    """The command that imports a file of ``record``'s ``format`` (as the importers record
    it): ``import neuralop``, ``import pdebench``, else ``import-mat``."""
    fmt = str(record.get("format", ""))
    for prefix, command in (("neuraloperator", "import neuralop"),
                            ("PDEBench", "import pdebench")):
        if fmt.startswith(prefix):
            return command
    return "import-mat"


def solver_from_record(attrs: Mapping[str, object], problem: str, *,
                       source: str = "<dataset>") -> Solver | None:
    """The classical solver that produced a dataset's labels, rebuilt from its provenance.

    * A file written by ``generate``: its recorded solver class and settings (only the solver
      classes of ``problem``'s registry entry are rebuilt, so a tampered record cannot name an
      arbitrary class); for a problem learned from another's data (``darcy-inverse``), the
      problem's default solver with the recorded physical parameters.
    * A file converted by ``import-mat``: the problem's default solver with the physical
      parameters given to ``import-mat``.
    * Anything else (a dataset built by hand): None (the caller falls back to the problem's
      default solver).

    Raises
    ------
    DatasetError
        For an imported file that lacks a physical parameter (:func:`unknown_physics`): the
        message names the parameters and the ``import-mat`` options that supply them; for
        recorded settings the solver class does not accept (an unknown keyword, a value of
        the wrong type or range: the record was altered), naming them: a solver other than
        the one that produced the labels is never substituted.
    """
    record = read_record(attrs, source=source)
    spec = get_problem(problem)
    if _is_import(record):
        require_physics(attrs, problem, source=source)
        return _build(spec.solver_class(), record["physics"], source=source, field="physics")
    name, config = record.get("solver_class"), record.get("solver_config")
    if not isinstance(name, str) or not isinstance(config, dict):
        return None
    for short in spec.solvers:
        cls = spec.solver_class(short)
        if cls.__name__ == name:
            return _build(cls, config, source=source, field="solver_config")
    settings = record.get("settings")
    if isinstance(settings, dict):
        physics = {k: settings[k] for k in get_kit(spec.data_problem).physics if k in settings}
        return _build(spec.solver_class(), physics, source=source, field="settings")
    return None


def _build(cls: type, config: Mapping[str, object], *, source: str, field: str) -> Solver:
    """``cls(**config)``; a DatasetError naming the record's ``field`` if it is refused."""
    import dataclasses

    valid = [f.name for f in dataclasses.fields(cls) if f.init] if dataclasses.is_dataclass(cls) \
        else []
    unknown = sorted(str(k) for k in config if valid and k not in valid)
    if unknown:
        msg = (f"{source}: the provenance record `{ATTR}` ({field}) gives {cls.__name__} the "
               f"unknown setting(s) {unknown}; it takes {', '.join(valid)}. The record was "
               "altered, or written by another version: the solver that produced the labels "
               "cannot be rebuilt.")
        raise DatasetError(msg)
    try:
        return cls(**config)
    except (TypeError, ValueError) as exc:
        msg = (f"{source}: the provenance record `{ATTR}` ({field}) cannot rebuild "
               f"{cls.__name__}: {exc}")
        raise DatasetError(msg) from None


def dataset_provenance(data: xr.Dataset, path: str | os.PathLike[str] | None) -> dict[str, Any]:
    """The dataset section of a training run's ``run.json``: path, problem, size, attributes.

    Parameters
    ----------
    data : xarray.Dataset
        A validated dataset.
    path : path or None
        Its file (recorded as an absolute path), None for an in-memory dataset.
    """
    attrs: dict[str, Any] = {}
    for key, value in data.attrs.items():
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, str | int | float | bool):
            attrs[str(key)] = value
    return {
        "path": None if path is None else os.path.abspath(os.fspath(path)),
        "problem": data.attrs.get("problem"),
        "n_samples": int(data.sizes["sample"]),
        "grid": [int(data.sizes[d]) for d in ("x", "y") if d in data.sizes],
        ATTR: data.attrs.get(ATTR),
        "attrs": attrs,
    }


def field_names(data: xr.Dataset) -> list[str]:
    """The field variables of ``data``'s problem that it holds (e.g. ``a`` and ``u``, plus a
    stored trajectory), in schema order; not the per-sample diagnostics such as wall times."""
    problem = str(data.attrs.get("problem"))
    if problem not in data_problems():
        return []
    kit = get_kit(problem)
    known = list(kit.fields) + list(kit.optional_fields)
    return [v for v in known if v in data.data_vars]


def variables_checksum(data: xr.Dataset, names: list[str] | tuple[str, ...] | None = None, *,
                       chunk: int = 64) -> str:
    """SHA-256 of a dataset's field values: ``"sha256:<hex>"``.

    Over ``names`` (default: the problem's fields, e.g. ``a`` and ``u``, plus a stored
    trajectory; not the per-sample diagnostics such as wall times), each variable's name and
    its values as little-endian float64 in C order, read ``chunk`` samples at a time (lazily
    opened files are never loaded whole). Two files hold the same samples exactly when their
    checksums agree, whatever their chunking or compression. A dataset regenerated (same seed
    and settings) where numpy and BLAS choose the same kernels
    (:mod:`~neuralop_fem.data.float_paths`) reproduces it bit for bit; on another CPU the last
    bits may differ, which
    :func:`~neuralop_fem.data.fingerprint.values_sketch` tells apart from other data.
    """
    if names is None:
        names = field_names(data)
    digest = ValuesDigest(names)
    n = int(data.sizes["sample"])
    for name in names:
        for start in range(0, n, chunk):
            digest.add(name, np.asarray(data[name].isel(sample=slice(start, start + chunk)).values))
    return digest.checksum()


class ValuesDigest:
    """The SHA-256 of :func:`variables_checksum`, fed block by block.

    ``add(name, block)`` takes the blocks of each variable of ``names`` in sample order, one
    variable after the other in the order of ``names``; blocks of other variables are ignored.
    Any split into blocks gives the same checksum, so a reader that goes through a file chunk
    by chunk anyway (``neuralop-fem info``) computes it in the same pass.
    """

    def __init__(self, names: list[str] | tuple[str, ...]) -> None:
        import hashlib

        self._names = list(names)
        self._next = 0  # index in names of the variable expected next
        self._current: str | None = None
        self._digest = hashlib.sha256()

    def add(self, name: str, block: np.ndarray) -> None:
        """Feed the next block of values of ``name``."""
        if name not in self._names:
            return
        if name != self._current:
            if self._next >= len(self._names) or self._names[self._next] != name:
                msg = (f"blocks must come variable by variable in the order {self._names}; "
                       f"got {name!r} after {self._current!r}.")
                raise ValueError(msg)
            self._digest.update(name.encode())
            self._current, self._next = name, self._next + 1
        self._digest.update(np.ascontiguousarray(block, dtype="<f8").tobytes())

    def checksum(self) -> str:
        """``"sha256:<hex>"`` of what was fed; every variable must have been."""
        if self._next != len(self._names):
            msg = f"variables {self._names[self._next:]} were not fed to the checksum."
            raise ValueError(msg)
        return f"sha256:{self._digest.hexdigest()}"
