"""Recording a finished run as a row of ``reproduction.json``, and checking a dataset file.

:func:`build_row` evaluates a finished run on its test split (refusing an unfinished run, other
data than the run's, or a scale its mode does not have) and builds its row;
:func:`merge_rows` adds rows to a results file and rewrites its markdown; :func:`check_data`
says whether a (regenerated) file holds the data of recorded rows.
"""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from solvers.problems import get_problem

from ..environment import environment_record
from ..errors import ConfigError, DatasetError, RunDirectoryError
from ..evaluation import evaluate_run
from ..runs import DataRecord, RunDir, RunRecord, training_preset
from ..runs.rerun_commands import changes, train_command
from .entries import spec_of
from .goals import load_goals
from .identity import data_matches, record_identical, same_values_checksum
from .results import write_results
from .rows import (
    SCALE_FIELDS,
    dataset_record,
    row_key,
    run_scale,
    scale_shortfalls,
    upgrade_legacy,
)
from .tables import markdown

__all__ = ["MODES", "QUICK", "REDUCED", "build_row", "check_data", "check_recordable",
           "check_scale", "load_results", "merge_rows", "mode_of", "save_results"]

#: The modes of a row: the paper's scale, a CPU-sized Darcy scale, a tiny smoke run.
MODES = ("paper", "reduced", "quick")
#: Tiny settings of the ``quick`` mode (a smoke run of every step, not a reproduction) common
#: to every problem; the grids and dataset sizes are each problem's
#: (:class:`~neuralop_fem.problems.QuickScale` of its reproduction entry).
QUICK: dict[str, Any] = {
    "split": {"n_train": 20, "n_val": 5, "n_test": 5},
    "epochs": 2,
    "model": {"transformer1d": {"d_model": 16, "num_layers": 2, "d_ff": 32, "freq_dim": 8,
                                "modes": 4, "decoder_ff": 8},
              "transformer2d": {"d_model": 12, "num_layers": 1, "d_ff": 16, "freq_dim": 8,
                                "modes": 3, "decoder_ff": 8},
              "fno1d": {"width": 8, "modes": 4, "projection": 16, "num_layers": 2},
              "fno2d": {"width": 8, "modes": 3, "projection": 16, "num_layers": 2}},
}
#: The ``reduced`` mode: a CPU-sized Darcy configuration, labelled as such in the results
#: (for the problems whose reproduction entry sets ``reduced``).
#: lr_max 5e-4: with 64 steps per epoch the one-cycle warm-up is only 384 steps, and at the
#: paper's 1e-3 the first reduced run blew up at the peak (epoch 7) and never recovered.
REDUCED = {"n_train": 256, "n_val": 50, "n_test": 100, "epochs": 20, "resolution": 85,
           "lr_max": 5e-4}


def mode_of(task: str, *, quick: bool, reduced: bool) -> str:
    """The row's mode: ``quick``, ``reduced`` (where the problem's reproduction entry sets
    ``reduced``: the Darcy tasks) or ``paper``."""
    if quick:
        return "quick"
    return "reduced" if reduced and spec_of(task).reduced else "paper"


def noise_of(task: str, noise: float) -> float | None:
    """The noise level that tells runs apart: the inverse problem's, None for the others."""
    return float(noise) if get_problem(task).inverse else None


def check_recordable(record: RunRecord, run_dir: Path, data_row: dict[str, Any]) -> None:
    """Refuse to record a run that has not finished, or a dataset other than the run's.

    The dataset must have been generated with the settings and sample count of the data the run
    was trained on (its path may differ: a file regenerated from the recorded seed is fine).

    Raises
    ------
    RunDirectoryError
        The run has not finished.
    ConfigError
        The dataset is not the one the run was trained on.
    """
    if record.status != "finished":
        msg = (f"RUN_DIR {run_dir}: the run has not finished (status {record.status!r}; "
               f"run.json counts {record.epochs_completed} of {record.config.epochs} "
               "epochs at the end of its last training call); finish it with its train "
               "command first")
        raise RunDirectoryError(msg)
    trained = record.data or DataRecord()
    if trained.problem not in (None, data_row["problem"]):
        msg = (f"--data {data_row['path']}: a {data_row['problem']} dataset, but the run "
               f"{run_dir} was trained on {trained.problem} data")
        raise ConfigError(msg)
    config_json = trained.config_json
    settings = json.loads(config_json).get("settings") if config_json else None
    if settings is None or data_row["settings"] is None:
        return
    # Keys one side lacks were added to the generator later: compare the common ones.
    given = data_row["settings"]
    differ = [f"{k}: {given[k]!r} (trained on {settings[k]!r})"
              for k in sorted(set(settings) & set(given)) if settings[k] != given[k]]
    if trained.n_samples not in (None, data_row["n_samples"]):
        differ.append(f"n_samples: {data_row['n_samples']} (trained on {trained.n_samples})")
    if differ:
        msg = (f"--data {data_row['path']}: not the data the run {run_dir} was trained on; "
               f"it differs in {'; '.join(differ)}")
        raise ConfigError(msg)


def check_scale(record: RunRecord, run_dir: Path, mode: str) -> None:
    """Refuse a row whose mode (``paper``, ``reduced``) claims a scale the run did not have:
    fewer epochs or training samples, or another grid, than the preset (with :data:`REDUCED`
    for ``reduced``). Smaller runs are recorded with ``--quick``, which says so."""
    if mode == "quick":
        return
    preset = training_preset(str(record.preset))
    if mode == "reduced":
        preset = preset.replace(**REDUCED)
    claimed = {k: getattr(preset, k) for k in SCALE_FIELDS}
    short = scale_shortfalls(record, claimed)
    if short:
        msg = (f"RUN_DIR {run_dir}: not a {mode}-scale run of {record.preset}: "
               f"{', '.join(short)}; a {mode} row must have the {mode} scale (record a smaller "
               "run with --quick, which labels it so)")
        raise ConfigError(msg)


def build_row(run_dir: Path, data: Path, *, label: str, quick: bool, reduced: bool,
              eval_device: str | None, reproduce: str | None,
              training_commit: str | None = None) -> dict[str, Any]:
    """Evaluate a finished run on its test split and build its row.

    A run is evaluated on the paper's grids of its problem (its reproduction entry's
    ``eval_grids``, Burgers: 512, 2048 and 8192; in the quick mode its training grid and the
    ``quick.eval_n`` grids the data reach), else on its training grid. ``reproduce``: the
    command that reruns everything (None for a run trained by hand); ``training_commit``:
    the code commit of a run whose run.json predates recording it.

    Raises
    ------
    ConfigError
        The run's problem has no reproduction entry; and the errors of
        :func:`check_recordable` and :func:`check_scale`.
    """
    record = RunDir(run_dir).read()
    task = str(record.task)
    spec = spec_of(task, where=f"RUN_DIR {run_dir}")
    data_row = dataset_record(Path(data))
    check_recordable(record, run_dir, data_row)
    mode = mode_of(task, quick=quick, reduced=reduced)
    check_scale(record, run_dir, mode)
    if quick:  # the training grid, and the quick grids the data reach
        extra = spec.quick.eval_n
        if extra:
            reachable = get_problem(task).reachable(int(data_row["resolution"]))
            extra = tuple(n for n in extra if n in reachable)
        resolutions = tuple(sorted({record.resolution, *extra}))
    else:
        resolutions = spec.eval_grids or (record.resolution,)
    errors, commands = {}, []
    for n in resolutions:
        res = evaluate_run(run_dir, data, resolution=n, indices="test", device=eval_device)
        errors[str(n)] = {"rel_l2": res["summary"]["rel_l2"], "rel_h1": res["summary"]["rel_h1"],
                          "output_resolution": res["output_resolution"],
                          "zero_shot": n != record.resolution}
        commands.append(f"neuralop-fem evaluate {shlex.quote(str(run_dir))} --data "
                        f"{shlex.quote(str(data))} --resolution {n}")
    preset = str(record.preset)
    model_config, train_config = dict(record.model_config or {}), dict(record.train_setting)
    model_changes, train_changes = changes(preset, model_config, train_config)
    config = record.config
    seed = int(config.seed)
    noise = noise_of(task, config.noise)
    key = row_key(preset, Path(data).stem, mode, seed, label=label, noise=noise)
    code = dict(record.code or {"commit": training_commit, "dirty": None,
                                "source": "--training-commit" if training_commit else None})
    if record.code_history:  # a resumed run: every commit it trained under, from which epoch
        code["history"] = [dict(entry) for entry in record.code_history]
    return {
        "key": key, "preset": preset, "label": label, "mode": mode, "task": task,
        "seed": seed, "data": data_row,
        "noise": config.noise if noise is not None else None,
        "run_dir": str(run_dir), "model_config": model_config,
        "train_config": train_config, "model_changes": model_changes,
        "train_changes": train_changes, "n_parameters": record.n_parameters,
        "epochs_completed": record.epochs_completed, "best_epoch": record.best_epoch,
        "best_val_rel_l2": record.best_val_rel_l2,
        "test_rel_l2_best": record.test_rel_l2_best,
        "test_rel_l2_final": record.test_rel_l2_final,
        "train_wall_time_s": record.wall_time_s, "device": record.device,
        "precision": _plain(record.precision), "hardware": _plain(record.hardware),
        "versions": _plain(record.versions), "training_code": code,
        "commands": {"reproduce": reproduce,
                     "train": train_command(preset, Path(data), run_dir, model_changes,
                                            train_changes),
                     "evaluate": commands},
        "scale": run_scale(record), "errors": errors, "recorded_by": environment_record(),
        "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def _plain(value: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A mapping of the run record as a plain dict (None stays None)."""
    return None if value is None else dict(value)


def load_results(path: Path) -> dict[str, Any]:
    """The rows of ``path`` (none if it does not exist).

    Raises
    ------
    DatasetError
        ``path`` is not JSON, not an object with a ``runs`` object, or its ``goals`` are not
        goals (:func:`~neuralop_fem.reproduce.goals.load_goals`).
    """
    if not path.is_file():
        return {"runs": {}}
    try:
        results = json.loads(path.read_text())
    except ValueError as exc:
        msg = f"{path}: not a results file (invalid JSON: {exc})"
        raise DatasetError(msg) from None
    if not isinstance(results, dict) or not isinstance(results.get("runs"), dict):
        msg = f"{path}: not a results file (expected an object with `runs`)"
        raise DatasetError(msg)
    try:
        load_goals(results)
    except DatasetError as exc:
        msg = f"{path}: {exc}"
        raise DatasetError(msg) from None
    return results


def save_results(path: Path, results: dict[str, Any]) -> tuple[Path, Path]:
    """Write ``path`` (JSON) and the markdown tables beside it (``.md``), atomically."""
    return write_results(path.parent, path.stem, results, markdown(results))


def merge_rows(entries: list[dict[str, Any]], path: Path, *, quick: bool,
               data_dir: Path | None) -> list[str]:
    """Add rows to the results file ``path`` (completing rows of the older format with the
    files of ``data_dir``) and rewrite its markdown. Returns one line per row recorded on a
    regeneration of recorded data (other checksum, the same values up to rounding)."""
    results = load_results(path)
    results["quick"] = quick
    results["runs"] = {k: upgrade_legacy(v, data_dir) for k, v in results["runs"].items()}
    notes = []
    for entry in entries:
        same = same_values_checksum(results, entry["data"])
        if same is not None:
            entry["data"]["same_values_as"] = same
            notes.append(f"{entry['data']['path']}: checksum {entry['data']['checksum']}, the "
                         f"values of the rows' data {same['checksum']} up to rounding "
                         f"(estimated relative difference {same['difference']:.1e})")
        results["runs"][entry["key"]] = entry
    save_results(path, results)
    return notes


def check_data(paths: list[Path], results_path: Path, rtol: float) -> tuple[list[str], bool]:
    """Say for each file of ``paths`` whether it holds the data of rows of ``results_path``.

    One line per recorded dataset generated with the file's settings: bit-identical, the same
    values up to rounding (another CPU's last bits), different, or unverifiable (the rows
    predate sketches and the checksums differ). A bit-identical file completes its rows: their
    sketch if they lack one, and the kernel choices it was written with (``reproduced_by``);
    the results file is then rewritten. Returns the lines and whether every file holds some
    rows' data.
    """
    results = load_results(results_path)
    ok, changed, lines = True, False, []
    for data in paths:
        row = dataset_record(data)
        matches = data_matches(results, row, rtol=rtol)
        if not matches:
            lines.append(f"{data}: no row of {results_path.name} was trained on data generated "
                         f"with these settings ({row['problem']}, seed {row['dataset_seed']}, "
                         f"{row['n_samples']} samples; checksum {row['checksum']})")
            ok = False
            continue
        lines += [f"{data}: {m.describe(row['checksum'], rtol)}" for m in matches]
        added = record_identical(results, row)
        if added:
            lines.append(f"{data}: recorded its sketch and the kernel choices that wrote it "
                         f"(reproduced_by) in the {len(added)} row"
                         f"{'s' if len(added) != 1 else ''} on this data")
            changed = True
        ok = ok and matches[0].verdict in ("identical", "same values")
    if changed:
        save_results(results_path, results)
    return lines, ok
