"""Packing a finished training run into the zoo (:func:`add_to_zoo`, ``neuralop-fem zoo add``).

One call per model: the run's selected model is evaluated on its test split at each requested
resolution, and its weights (safetensors), its run record and its model card are written to
``entries/NAME/`` (or another zoo directory) in one atomic step.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from solvers.problems import get_problem

from .._version import __version__
from ..data import load_dataset
from ..data.provenance import generation_settings, variables_checksum
from ..errors import ConfigError, RunDirectoryError
from ..evaluation import evaluate_run
from ..files import write_text_atomic
from ..runs import DataRecord, RunDir, RunRecord, Splits, write_json
from ..runs.operator import load_run, operator_payload
from ..runs.weights import file_sha256, save_weights
from . import CARD, CARD_MD, ENTRIES, WEIGHTS, entry_dir, read_entry_card
from .card import CARD_FORMAT, generate_command, render_markdown, train_command

__all__ = ["add_to_zoo", "read_verdict", "replace_verdict"]

_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
#: Attributes of a ``compare`` report's ``comparison.nc`` kept in the card's fair verdict.
_VERDICT_TEXT = ("verdict", "verdict_break_even", "verdict_batch1", "verdict_batch1_break_even",
                 "verdict_all_cores", "verdict_all_cores_break_even", "fair_all_cores_left_out",
                 "reference", "fair_status", "fair_where", "fair_bracket")
_VERDICT_NUMBERS = ("n_samples", "fair_error", "fair_speedup", "fair_batch1_speedup",
                    "fair_all_cores_speedup")


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        msg = (f"`name` must be 1-64 lower-case letters, digits and '-', starting with a letter "
               f"or digit (e.g. 'burgers-galerkin'); got {name!r}.")
        raise ConfigError(msg)
    return name


def _data_record(data: Path, record: RunRecord) -> dict[str, Any]:
    """Seed, size, grid, settings, checksum and generate command of the training file, which
    must be the file the run recorded (same generation settings and sample count); the
    checksum is the one the reproduction rows record
    (:func:`~neuralop_fem.data.provenance.variables_checksum` of the problem's fields)."""
    recorded = record.data or DataRecord()
    with load_dataset(data) as ds:  # the cheap checks before the pass over the values
        generated = generation_settings(ds.attrs, source=str(data))
        n_samples = int(ds.sizes["sample"])
        if generated is None:
            msg = (f"`data` must be a file written by `neuralop-fem generate` (the card says "
                   f"how to regenerate it); {data} records no generation settings.")
            raise ConfigError(msg)
        theirs = generation_settings(recorded.settings_attrs, source="run.json") \
            if recorded.config_json else None
        if (theirs is not None and theirs.get("settings") != generated["settings"]) or \
                (recorded.n_samples is not None and recorded.n_samples != n_samples):
            msg = (f"`data` must be the run's training file ({recorded.n_samples} "
                   f"samples, the generation settings of run.json); {data} holds other data.")
            raise ConfigError(msg)
        problem = str(ds.attrs.get("problem"))
        entry = get_problem(problem)
        names = [entry.input_name, entry.output_name]
        checksum = variables_checksum(ds, names)
    settings = generated["settings"]
    return {
        "file_name": data.name, "problem": problem, "n_samples": n_samples,
        "resolution": int(settings["resolution"]), "dataset_seed": int(settings["dataset_seed"]),
        "settings": settings, "checksum_variables": names, "checksum": checksum,
        "generate_command": generate_command(settings, n_samples, data.name),
    }


def read_verdict(report: str | os.PathLike[str], run_dir: Path) -> dict[str, Any]:
    """The fair verdict of a ``neuralop-fem compare`` report directory of this run."""
    import xarray as xr

    path = Path(report) / "comparison.nc"
    if not path.is_file():
        msg = f"`report` must be a report directory of `neuralop-fem compare`; {path} is missing."
        raise ConfigError(msg)
    with xr.open_dataset(path) as ds:
        attrs = dict(ds.attrs)
    source = str(attrs.get("run_dir", ""))
    if not source or not os.path.exists(source) or not os.path.samefile(source, run_dir):
        msg = (f"`report` must be a comparison of the run {run_dir}; {path} compares "
               f"{source or 'an unrecorded run'}.")
        raise ConfigError(msg)
    if "verdict" not in attrs:
        msg = f"`report` must hold the fair verdict (compare without --no-ladder); {path} has none."
        raise ConfigError(msg)
    out: dict[str, Any] = {k: str(attrs[k]) for k in _VERDICT_TEXT if attrs.get(k)}
    for key in _VERDICT_NUMBERS:
        if key in attrs:
            value = float(attrs[key])
            out[key] = None if not math.isfinite(value) else \
                int(value) if key == "n_samples" else value
    return out


def _summary(record: RunRecord, data: dict[str, Any]) -> str:
    problem = get_problem(str(record.task))
    physics = [f"{k} = {data['settings'][k]:.6g}" for k in problem.physics
               if isinstance(data["settings"].get(k), int | float)]
    noise = record.config.noise or 0
    extra = [f"input noise {noise:g}"] if problem.inverse and noise else []
    grid = record.resolution
    out = record.out_resolution
    where = f"n = {grid}" if out == grid else f"n = {grid} -> {out}"
    return (f"`{record.preset}` surrogate of {problem.summary.rstrip('.')} "
            f"({', '.join([*physics, *extra])}), trained at {where}.")


def _evaluations(run_dir: Path, data: Path, resolutions: Sequence[int],
                 device: str | None) -> list[dict[str, Any]]:
    out = []
    for n in resolutions:
        result = evaluate_run(run_dir, data, resolution=int(n), indices="test", device=device)
        out.append({
            "resolution": int(result["resolution"]), "transfer": str(result["transfer"]),
            "rel_l2_mean": float(result["rel_l2"].mean()),
            "rel_h1_mean": float(result["rel_h1"].mean()),
            "rel_l2": [float(v) for v in result["rel_l2"]],
            "rel_h1": [float(v) for v in result["rel_h1"]],
        })
    return out


def add_to_zoo(
    run_dir: str | os.PathLike[str],
    *,
    name: str,
    data: str | os.PathLike[str],
    resolutions: Sequence[int] | None = None,
    report: str | os.PathLike[str] | None = None,
    root: str | os.PathLike[str] | None = None,
    overwrite: bool = False,
    device: str | None = None,
) -> Path:
    """Pack the finished run ``run_dir`` into the zoo as ``name``; return its directory.

    Parameters
    ----------
    run_dir : path
        A finished training run (``run.json`` status ``"finished"``, ``best.pt``).
    name : str
        The zoo name (``zoo:NAME``, ``Surrogate.pretrained(NAME)``), e.g. ``"burgers-fno"``.
    data : path
        The run's training file (written by ``generate``; checked against the run's record):
        the test split is evaluated on it, and the card records its checksum.
    resolutions : sequence of int, optional
        Grids the test split is evaluated on (default: the training resolution); each must
        be reachable from the file's grid (e.g. 512, 2048 and 8192 for Burgers from 8192).
    report : path, optional
        A ``neuralop-fem compare`` report directory of this run: its fair verdict goes into
        the card.
    root : path, optional
        The zoo directory (default: the package's ``entries``).
    overwrite : bool
        Replace an entry of the same name.
    device : str, optional
        Device of the evaluation (default: CUDA if available, else CPU).

    Raises
    ------
    ConfigError
        A bad name, an existing entry without ``overwrite``, an unfinished run, data that is not
        the run's generated training file, or a report of another run.
    RunDirectoryError
        A missing or damaged run file.
    """
    name = _check_name(name)
    base = ENTRIES if root is None else Path(root)
    target = base / name
    if target.exists() and not overwrite:
        msg = (f"the zoo already holds {name!r} ({target}); pass overwrite=True (--overwrite) "
               "to replace it.")
        raise ConfigError(msg)
    run_dir, data = Path(run_dir), Path(data)
    run = RunDir(run_dir)
    record = run.read()
    if record.status != "finished":
        msg = (f"`run_dir` must hold a finished run; {run.run_json} has status "
               f"{record.status!r} (finish it by running the same train command again).")
        raise ConfigError(msg)
    described = (("preset", record.preset), ("task", record.task),
                 ("resolution", record.resolution), ("splits", record.splits),
                 ("train_config", record.train_config), ("model_config", record.model_config))
    for key, value in described:
        if value is None:
            msg = f"{run.run_json}: field `{key}` is missing; cannot describe the model."
            raise RunDirectoryError(msg)
    data_record = _data_record(data, record)
    n_list = [int(record.resolution)] if not resolutions else [int(n) for n in resolutions]
    errors = _evaluations(run_dir, data, n_list, device)
    verdict = None if report is None else read_verdict(report, run_dir)
    operator, _ = load_run(run)

    base.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=base))
    try:
        save_weights(operator_payload(operator), tmp / WEIGHTS)
        trained = record.data or DataRecord()
        packed = dataclasses.replace(trained, path=None, file_name=data_record["file_name"],
                                     nulls=trained.nulls | {"path"})
        RunDir(tmp).write(record.replace(data=packed))
        card = _card(name, record, data_record, errors, verdict, tmp / WEIGHTS)
        write_json(card, tmp / CARD)
        outside = None if base.resolve() == ENTRIES else str(base.resolve())
        write_text_atomic(tmp / CARD_MD, render_markdown(card, zoo_dir=outside))
        tmp.chmod(0o755)  # package data: readable by everyone (mkdtemp makes it private)
        for path in tmp.iterdir():
            path.chmod(0o644)
        if target.exists():
            shutil.rmtree(target)
        tmp.rename(target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def _card(name: str, record: RunRecord, data: dict[str, Any], errors: list[dict[str, Any]],
          verdict: dict[str, Any] | None, weights: Path) -> dict[str, Any]:
    splits = record.splits or Splits()
    return {
        "format": CARD_FORMAT,
        "name": name,
        "summary": _summary(record, data),
        "problem": record.task,
        "preset": record.preset,
        "model_family": record.model_family,
        "n_parameters": int(record.n_parameters or 0),
        "weights": {"file": WEIGHTS, "format": "safetensors", "bytes": weights.stat().st_size,
                    "sha256": file_sha256(weights)},
        "data": data,
        "train_command": train_command(record, data["file_name"], f"runs/{name}"),
        "code": _plain(record.code),
        "code_history": None if record.code_history is None else
        [dict(entry) for entry in record.code_history],
        "training": {
            "resolution": int(record.resolution or 0),
            "output_resolution": int(record.out_resolution or 0),
            "epochs": int(record.config.epochs), "epochs_completed": record.epochs_completed,
            "best_epoch": record.best_epoch, "best_val_rel_l2": record.best_val_rel_l2,
            "test_rel_l2_best": record.test_rel_l2_best,
            "wall_time_s": record.wall_time_s, "device": record.device,
            "amp": record.trained_config.amp, "precision": _plain(record.precision),
            "rollbacks": [dict(r) for r in record.rollbacks or ()],
            "hardware": _plain(record.hardware), "versions": _plain(record.versions),
            "split_sizes": splits.sizes(),
        },
        "test": {"indices": list(splits.test), "errors": errors},
        "fair_verdict": verdict,
        "packed": {"neuralop_fem_version": __version__},
    }


def _plain(value: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A mapping of the run record as a plain dict (None stays None)."""
    return None if value is None else dict(value)


def replace_verdict(name: str, report: str | os.PathLike[str],
                    root: str | os.PathLike[str] | None = None) -> Path:
    """Replace the fair verdict of the zoo model ``name`` by that of ``report``, a
    ``neuralop-fem compare zoo:NAME`` report directory (``compare DIR/NAME`` for another zoo),
    and write its card again (``card.json``, ``card.md``); weights, run record and test errors
    stay as they are. Returns the entry's directory.

    Raises
    ------
    ConfigError
        An unknown name, or a report that is not a comparison of this entry with a verdict.
    """
    target = entry_dir(_check_name(name), root)
    card = read_entry_card(target)
    if card is None:
        msg = f"the zoo entry {target} has no readable {CARD}; pack it again with `zoo add`."
        raise ConfigError(msg)
    card = {**card, "fair_verdict": read_verdict(report, target)}
    write_json(card, target / CARD)
    outside = None if target.parent.resolve() == ENTRIES.resolve() else str(
        target.parent.resolve())
    write_text_atomic(target / CARD_MD, render_markdown(card, zoo_dir=outside))
    return target
