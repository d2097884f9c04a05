"""The record of a training run (``run.json``) as typed, frozen values.

:class:`RunRecord` holds every field the package writes into ``run.json``, each with its type;
the nested JSON objects have records of their own: :class:`DataRecord` (the dataset's
provenance), :class:`Normalizers` and :class:`Splits`; :attr:`RunRecord.environment` groups the
versions, code commit and hardware (:class:`Environment`). The JSON format on disk is unchanged:
:meth:`RunRecord.from_dict` and :meth:`RunRecord.to_dict` round-trip a file exactly (a field
absent stays absent, a null stays null, a field this version does not know is kept), and
:func:`migrate` brings the field names of older or hand-written files (``problem``,
``dataset``, ``split``, ``dataset_path``, ``val_error``, ``test_error`` and the
``metrics`` / ``result`` / ``results`` sub-objects) to today's before they are checked.

The values are the validated contents of the file (:mod:`.validation` checks them first); the
JSON objects a reader takes whole (the model and training configurations, the OOD reference,
the precision, versions and hardware) stay mappings.
"""

from __future__ import annotations

import copy
import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..errors import RunDirectoryError
from .train_config import TrainConfig, added_defaults

__all__ = ["RUN_FORMAT", "STATUSES", "DataRecord", "Environment", "Normalizers", "RunRecord",
           "Splits", "migrate"]

RUN_FORMAT = "neuralop_fem.training.run/1"
#: ``status`` values: written at the start, while computing the test errors, at the end, when
#: ``fit`` stopped early on purpose (``max_epochs_this_call``), and when the divergence guard
#: gave up (:mod:`neuralop_fem.training.divergence`).
STATUSES = ("running", "finishing", "finished", "interrupted", "diverged")


def _plain(value: Any) -> Any:
    """A JSON value of a record field: tuples back to lists, mappings to dicts (copies)."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True, kw_only=True)
class _JsonRecord:
    """A JSON object as a frozen dataclass whose field names are its keys.

    ``nulls``: the fields written as ``null`` when None (the others are left out when None);
    ``extra``: keys this version does not know, kept and written back after the known ones.
    Subclasses name the fields that are sub-records in ``_NESTED``.
    """

    _NESTED: ClassVar[dict[str, Any]] = {}

    nulls: frozenset[str] = field(default=frozenset(), repr=False)
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def _keys(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls) if f.name not in ("nulls", "extra"))

    @classmethod
    def _from_mapping(cls, obj: Mapping[str, Any]) -> Any:
        keys = cls._keys()
        values: dict[str, Any] = {}
        for key in keys:
            if key not in obj or obj[key] is None:
                continue
            value = obj[key]
            nested = cls._NESTED.get(key)
            if nested is not None:
                if not isinstance(value, Mapping):  # unchecked field of a hand-written file
                    continue
                value = nested.from_dict(value)
            elif isinstance(value, list):
                value = tuple(copy.deepcopy(value))
            else:
                value = copy.deepcopy(value)
            values[key] = value
        nulls = frozenset(k for k in keys if k in obj and obj[k] is None)
        extra = {k: copy.deepcopy(v) for k, v in obj.items() if k not in keys}
        return cls(**values, nulls=nulls, extra=extra)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the record (fresh plain dicts and lists)."""
        out: dict[str, Any] = {}
        for key in self._keys():
            value = getattr(self, key)
            if value is None:
                if key in self.nulls:
                    out[key] = None
                continue
            out[key] = value.to_dict() if isinstance(value, _JsonRecord) else _plain(value)
        out.update(_plain(self.extra))
        return out


@dataclass(frozen=True, kw_only=True)
class DataRecord(_JsonRecord):
    """The dataset a run trained on (``run.json``'s ``data``; written by
    :func:`neuralop_fem.data.provenance.dataset_provenance`).

    Attributes
    ----------
    path : str or None
        Absolute path of the file at training time (None: an in-memory dataset, or removed when
        the run was packed into the zoo).
    problem : str or None
        The data problem (``burgers``, ``darcy``, ...).
    n_samples : int or None
        Samples in the file.
    grid : tuple of int or None
        Grid points along each axis of the file.
    config_json : str or None
        The ``generate`` settings as recorded in the file's attributes (JSON text).
    attrs : mapping or None
        The file's scalar attributes.
    file_name : str or None
        The file's name, kept when the path is removed (zoo entries).
    """

    path: str | None = None
    problem: str | None = None
    n_samples: int | None = None
    grid: tuple[int, ...] | None = None
    config_json: str | None = None
    attrs: Mapping[str, Any] | None = None
    file_name: str | None = None

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> DataRecord:
        """The record of a validated ``data`` object."""
        return cls._from_mapping(obj)  # type: ignore[no-any-return]

    @property
    def settings_attrs(self) -> dict[str, Any]:
        """``{"config_json": ...}``, the attribute from which
        :func:`~neuralop_fem.data.provenance.generation_settings` reads the ``generate``
        settings (empty when none were recorded)."""
        return {} if self.config_json is None else {"config_json": self.config_json}


@dataclass(frozen=True, kw_only=True)
class Normalizers(_JsonRecord):
    """Which normalisers and Dirichlet edges the model applies (``run.json``'s
    ``normalizers``): input and output normalised, any edge pinned, (first, last) edges."""

    input: bool | None = None
    output: bool | None = None
    dirichlet: bool | None = None
    dirichlet_edges: tuple[bool, ...] | None = None

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> Normalizers:
        """The record of a validated ``normalizers`` object."""
        return cls._from_mapping(obj)  # type: ignore[no-any-return]


@dataclass(frozen=True, kw_only=True)
class Splits(_JsonRecord):
    """Sample indices (into the training file) of the training, validation and test splits."""

    train: tuple[int, ...] = ()
    val: tuple[int, ...] = ()
    test: tuple[int, ...] = ()

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> Splits:
        """The record of a validated ``splits`` object."""
        return cls._from_mapping(obj)  # type: ignore[no-any-return]

    def sizes(self) -> dict[str, int]:
        """``{"train": n, "val": n, "test": n}``."""
        return {"train": len(self.train), "val": len(self.val), "test": len(self.test)}


@dataclass(frozen=True)
class Environment:
    """Where a run trained: package ``versions``, the ``code`` commit (``{"commit",
    "dirty"}``) and the ``hardware`` (CPU model, core count, threads, GPU); each None when the
    record lacks it."""

    versions: Mapping[str, Any] | None
    code: Mapping[str, Any] | None
    hardware: Mapping[str, Any] | None


@dataclass(frozen=True, kw_only=True)
class RunRecord(_JsonRecord):
    """The contents of ``run.json``, typed (field names are the file's keys).

    Attributes
    ----------
    format : str or None
        :data:`RUN_FORMAT` (absent in files written before it was recorded).
    status : str or None
        One of :data:`STATUSES`.
    preset : str or None
        The preset the run was started from.
    task : str or None
        The learning problem (a name of :data:`solvers.problems.PROBLEMS`).
    model_family, model_config, n_parameters
        The architecture, its configuration (``ModelConfig.to_dict()``) and size.
    train_config : mapping or None
        ``TrainConfig.to_dict()`` as recorded (:attr:`config` parses it).
    data : DataRecord or None
        The dataset's provenance.
    resolution, coarse_resolution, output_resolution : int or None
        The training grid, the coarse grid of a two-grid model, the output grid.
    normalizers : Normalizers or None
    splits : Splits or None
    ood_reference : mapping or None
        The out-of-distribution reference of the training inputs
        (:meth:`neuralop_fem.data.ood.OODReference.from_dict`).
    sample_counts : mapping or None
        Samples per split.
    device, precision, world_size
        Where and how the run computed (``precision``: the AMP choice and the float32 parts).
    versions, code, hardware : mapping or None
        See :attr:`environment`.
    code_history : tuple of mapping or None
        ``{"commit", "dirty", "from_epoch"}`` for each commit the run trained under.
    peak_lr : float or None
    epochs_completed, best_epoch : int or None
    rollbacks : tuple of mapping or None
        The epochs undone by the divergence guard (:class:`~.validation.Rollback`).
    wall_time_s, best_val_rel_l2 : float or None
    test_rel_l2_best, test_rel_l2_final, val_rel_l2_final, bf16_output_deviation : float or None
        The results of a finished run.
    warnings : tuple of str or None
        What the trainer found doubtful about the run.
    """

    _NESTED: ClassVar[dict[str, Any]] = {
        "data": DataRecord, "normalizers": Normalizers, "splits": Splits}
    #: The fields the trainer writes into every ``run.json``, null when unknown (pass as
    #: ``nulls``); the results and warnings follow only once the run has them.
    TRAINER_FIELDS: ClassVar[frozenset[str]] = frozenset((
        "format", "status", "preset", "task", "model_family", "model_config", "n_parameters",
        "train_config", "data", "resolution", "coarse_resolution", "output_resolution",
        "normalizers", "splits", "ood_reference", "sample_counts", "device", "precision",
        "world_size", "versions", "code", "hardware", "code_history", "peak_lr",
        "epochs_completed", "rollbacks", "wall_time_s", "best_epoch", "best_val_rel_l2"))

    format: str | None = None
    status: str | None = None
    preset: str | None = None
    task: str | None = None
    model_family: str | None = None
    model_config: Mapping[str, Any] | None = None
    n_parameters: int | None = None
    train_config: Mapping[str, Any] | None = None
    data: DataRecord | None = None
    resolution: int | None = None
    coarse_resolution: int | None = None
    output_resolution: int | None = None
    normalizers: Normalizers | None = None
    splits: Splits | None = None
    ood_reference: Mapping[str, Any] | None = None
    sample_counts: Mapping[str, int] | None = None
    device: str | None = None
    precision: Mapping[str, Any] | None = None
    world_size: int | None = None
    versions: Mapping[str, Any] | None = None
    code: Mapping[str, Any] | None = None
    hardware: Mapping[str, Any] | None = None
    code_history: tuple[Mapping[str, Any], ...] | None = None
    peak_lr: float | None = None
    epochs_completed: int | None = None
    rollbacks: tuple[Mapping[str, Any], ...] | None = None
    wall_time_s: float | None = None
    best_epoch: int | None = None
    best_val_rel_l2: float | None = None
    test_rel_l2_best: float | None = None
    test_rel_l2_final: float | None = None
    val_rel_l2_final: float | None = None
    bf16_output_deviation: float | None = None
    warnings: tuple[str, ...] | None = None

    # -- construction and the JSON form ---------------------------------------------------

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> RunRecord:
        """The record of a parsed ``run.json`` (validated, :func:`migrate`-d: see
        :meth:`~neuralop_fem.runs.RunDir.read`, which does both)."""
        return cls._from_mapping(obj)  # type: ignore[no-any-return]

    def replace(self, **changes: Any) -> RunRecord:
        """A copy with ``changes`` (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)

    # -- typed views ----------------------------------------------------------------------

    @property
    def environment(self) -> Environment:
        """The versions, code commit and hardware of the run."""
        return Environment(self.versions, self.code, self.hardware)

    @property
    def config(self) -> TrainConfig:
        """The recorded training configuration (validated when the file was read).

        Raises
        ------
        RunDirectoryError
            If the record has no ``train_config``.
        """
        if self.train_config is None:
            msg = "run.json: field `train_config` is missing."
            raise RunDirectoryError(msg)
        return TrainConfig.from_dict(dict(self.train_config))

    @property
    def trained_config(self) -> TrainConfig:
        """The training configuration the run trained with: :attr:`config`, where settings
        added after the run was recorded take the values such a run used
        (:func:`~.train_config.added_defaults`: ``amp`` ``"none"``, not today's default).

        Raises
        ------
        RunDirectoryError
            If the record has no ``train_config``.
        """
        recorded = dict(self.config.to_dict() if self.train_config is None else
                        self.train_config)
        return TrainConfig.from_dict({**added_defaults(recorded), **recorded})

    @property
    def train_setting(self) -> Mapping[str, Any]:
        """``train_config`` as recorded, empty when absent."""
        return self.train_config or {}

    @property
    def data_path(self) -> str | None:
        """The recorded path of the training data (None when not recorded)."""
        return None if self.data is None else self.data.path

    @property
    def test_indices(self) -> tuple[int, ...]:
        """The test split (empty when no splits are recorded)."""
        return () if self.splits is None else self.splits.test

    @property
    def out_resolution(self) -> int | None:
        """The output grid: ``output_resolution``, else the training ``resolution``."""
        return self.output_resolution or self.resolution

    def require(self, names: tuple[str, ...], *, source: str | os.PathLike[str]) -> None:
        """Refuse a record without each of ``names`` (a reader that needs them).

        Raises
        ------
        RunDirectoryError
            Naming ``source`` and the first missing field, listing the fields present.
        """
        present = self.to_dict()
        missing = [name for name in names if present.get(name) is None]
        if missing:
            msg = (f"{source}: field `{missing[0]}` is missing; this run.json has "
                   f"{', '.join(sorted(map(str, present))) or 'no fields'}.")
            raise RunDirectoryError(msg)


#: Field names of older or hand-written files -> today's (top level).
_RENAMED = {"problem": "task", "dataset": "data", "split": "splits",
            "val_error": "best_val_rel_l2", "test_error": "test_rel_l2_best"}
#: Sub-objects of older files whose fields now sit at the top level.
_FLATTENED = ("metrics", "result", "results")


def migrate(info: Mapping[str, Any]) -> dict[str, Any]:
    """``info`` (a parsed ``run.json``) with today's field names.

    A field already present under today's name wins; the older one is then dropped.
    ``dataset_path`` becomes ``data.path``; the fields of ``metrics`` / ``result`` /
    ``results`` objects move to the top level. A file written by this version is returned
    unchanged (a copy).
    """
    out = dict(info)
    for old in _FLATTENED:
        if isinstance(out.get(old), Mapping):
            for key, value in out.pop(old).items():
                out.setdefault(_RENAMED.get(key, key), value)
    for old, new in _RENAMED.items():
        nested = new in RunRecord._NESTED
        if old in out and (not nested or isinstance(out[old], Mapping)):
            value = out.pop(old)
            if out.get(new) is None:
                out[new] = value
    path = out.pop("dataset_path", None)
    if path is not None:
        data = dict(out["data"]) if isinstance(out.get("data"), Mapping) else {}
        if data.get("path") is None:
            data["path"] = path
        out["data"] = data
    return out
