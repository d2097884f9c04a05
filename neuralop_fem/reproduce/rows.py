"""What one reproduction row records: the dataset's identity, the commands, the run's scale.

A row is one trained model (one seed) evaluated on its test split. It records what a reader
needs to regenerate the data and rerun it from the row alone: the dataset (path, seed,
generation settings, a checksum and sketch of its variables), the code commit the model was
trained with, the exact commands (a ``neuralop-fem reproduce run`` command that does everything
from scratch, and the ``neuralop-fem train``/``evaluate`` commands that were run), hardware and
threads, the training settings and whether each reported resolution is the training one or a
zero-shot transfer. Rows written before rows recorded all this are completed by
:func:`upgrade_legacy`.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from solvers.checks import is_int
from solvers.problems import get_problem

from ..data import load_dataset
from ..data.fingerprint import values_sketch
from ..data.provenance import ValuesDigest, generation_settings
from ..errors import DatasetError
from ..models import PRESETS
from ..runs import DataRecord, RunRecord
from ..runs.rerun_commands import changes, generate_command, train_command
from .entries import problem_of_file, problem_prefix, spec_of

__all__ = ["SCALE_FIELDS", "dataset_record", "model_suffix", "paper_value", "row_key",
           "run_scale", "run_tag", "scale_shortfalls", "upgrade_legacy"]


def model_suffix(preset: str) -> str:
    """``burgers-galerkin-long`` -> ``galerkin``: the model column of the paper's tables (the
    preset's name after its problem's, without ``-long``)."""
    problem = problem_prefix(preset, "-")
    if problem is None:
        return preset
    return preset[len(problem) + 1:].removesuffix("-long")


def paper_value(task: str, preset: str, n: str, noise: float | None) -> float | None:
    """The paper's number for this row, or None (the problem's reproduction entry,
    :meth:`~neuralop_fem.problems.ReproductionSpec.paper_value`)."""
    return spec_of(task).paper_value(model_suffix(preset), n, noise)


def dataset_record(path: Path) -> dict[str, Any]:
    """Seed, size, grid, generation settings, variables checksum and sketch of a dataset file.

    The checksum identifies the values bit for bit; the sketch
    (:func:`neuralop_fem.data.fingerprint.values_sketch`) also recognises them when regenerated
    on a CPU that rounds the last bits differently.
    """
    with load_dataset(path) as ds:
        record = generation_settings(ds.attrs, source=str(path)) or {}
        problem = str(ds.attrs.get("problem"))
        seed = ds.attrs.get("dataset_seed")
        if not is_int(seed) or seed < 0:
            msg = (f"{path}: must be a dataset written by `neuralop-fem generate` (attribute "
                   f"`dataset_seed`, an int >= 0, which the rows' data are found by); got "
                   f"{seed!r}.")
            raise DatasetError(msg)
        entry = get_problem(problem)
        names = [entry.input_name, entry.output_name]
        digest = ValuesDigest(names)  # the checksum, in the sketch's pass over the values
        sketch = values_sketch(ds, names, on_block=digest.add)
        return {
            "path": str(path), "problem": problem, "dataset_seed": int(seed),
            "n_samples": int(ds.sizes["sample"]), "resolution": int(ds.sizes["x"]),
            "settings": record.get("settings"), "solver_class": record.get("solver_class"),
            "checksum_variables": names, "checksum": digest.checksum(), "sketch": sketch,
            "float_paths": record.get("float_paths"),
            "generate_command": generate_command(problem, int(ds.sizes["sample"]),
                                                 record.get("settings"), path),
        }


def run_tag(preset: str, data: str, mode: str, seed: int, *, label: str,
            noise: float | None) -> str:
    """The run directory name of one training (one per preset, data, mode, noise level,
    label and seed, so the inverse problem's noise levels never share a run).

    >>> run_tag("burgers-galerkin", "b", "paper", 2, label="long run", noise=None)
    'burgers-galerkin_b_paper_seed2_long-run'
    """
    eps = "" if noise is None else f"_noise{noise:g}"
    return f"{preset}_{data}_{mode}{eps}_seed{seed}" + (
        f"_{label.replace(' ', '-')}" if label else "")


def row_key(preset: str, data: str, mode: str, seed: int, *, label: str,
            noise: float | None) -> str:
    """The key of a row in reproduction.json (with the noise level for the inverse problem).

    >>> row_key("darcy-inverse-galerkin", "d", "reduced", 1, label="", noise=0.01)
    'darcy-inverse-galerkin|d|reduced|preset|noise0.01|seed1'
    """
    eps = "" if noise is None else f"|noise{noise:g}"
    return f"{preset}|{data}|{mode}|{label or 'preset'}{eps}|seed{seed}"


#: The training settings that make a run's scale (a row's mode claims them).
SCALE_FIELDS = ("epochs", "n_train", "n_val", "n_test", "resolution")


def run_scale(record: RunRecord) -> dict[str, Any]:
    """The scale a run really had: its epochs, splits and grid, and its dataset's size."""
    config = record.config
    data = record.data or DataRecord()
    return {**{k: getattr(config, k) for k in SCALE_FIELDS},
            "epochs_completed": record.epochs_completed,
            "data_samples": data.n_samples,
            "data_grid": None if data.grid is None else list(data.grid)}


def scale_shortfalls(record: RunRecord, claimed: dict[str, Any]) -> list[str]:
    """Where a run falls short of the ``claimed`` scale (settings of :data:`SCALE_FIELDS`):
    fewer epochs or samples, or another grid; empty when it has that scale (more epochs, as
    in a longer recipe, is that scale too)."""
    scale = run_scale(record)
    short = []
    for key in SCALE_FIELDS:
        want, got = claimed[key], scale[key]
        if key == "resolution" and got != want:
            short.append(f"resolution {got} (not {want})")
        elif key != "resolution" and (got is None or got < want):
            short.append(f"{key} {got} (< {want})")
    done = scale["epochs_completed"]
    if done is not None and done < claimed["epochs"]:
        short.append(f"epochs_completed {done} (< {claimed['epochs']})")
    return short


def upgrade_legacy(entry: dict[str, Any], data_dir: Path | None) -> dict[str, Any]:
    """Complete a row written before rows recorded seeds, checksums and commands.

    Such rows name their dataset file by path only; when ``data_dir`` holds a file of the
    same name (regenerated from the same seed and settings), its record and checksum are
    filled in, else the generation command is reconstructed from the file name's problem, grid
    and size with the default settings and the checksum stays None. The training commit was
    not recorded for these runs: the row says so. The model settings are the preset's (these
    runs used ``--preset`` unchanged).
    """
    if "seed" in entry:
        return entry
    out = dict(entry)
    old_path = Path(str(entry["data"]))
    here = data_dir / old_path.name if data_dir is not None else None
    if here is not None and here.is_file():
        out["data"] = dataset_record(here)
        out["data"]["note"] = f"regenerated from the recorded seed; the run read {old_path}"
    else:
        problem = problem_of_file(old_path.stem)
        size = int(old_path.stem.rsplit("_N", 1)[1])
        out["data"] = {"path": str(old_path), "problem": problem, "dataset_seed": 0,
                       "n_samples": size, "checksum": None,
                       "note": "file not at hand when the row was completed; generate it with "
                               "the benchmark defaults and seed 0 (reproduce_paper.py does)"}
    out["seed"] = int(entry["train_config"]["seed"])
    out["label"] = "global target normaliser" if "global" in str(entry["key"]) else ""
    out["model_config"] = PRESETS[entry["preset"]].to_dict()
    out["training_code"] = {"commit": None, "dirty": None,
                            "note": "not recorded (the run predates run.json's code commit)"}
    model_changes, train_changes = changes(entry["preset"], out["model_config"],
                                           entry["train_config"])
    data_path = Path(out["data"]["path"])
    out["model_changes"], out["train_changes"] = model_changes, train_changes
    reproduce = ["python", "benchmarks/reproduce_paper.py", "--preset", entry["preset"],
                 "--seed", str(out["seed"]), "--data-seed", "0"]
    if entry.get("viscosity"):
        reproduce += ["--viscosity", str(entry["viscosity"])]
    if entry["train_config"].get("target_normalizer") == "global":
        reproduce += ["--target-normalizer", "global"]
    if entry["mode"] == "reduced":
        reproduce.append("--reduced")
    if get_problem(entry["task"]).inverse:
        reproduce += ["--noise", str(entry["train_config"]["noise"])]
    out["commands"] = {
        "reproduce": " ".join(shlex.quote(p) for p in reproduce),
        "train": train_command(entry["preset"], data_path, Path(entry["run_dir"]),
                               model_changes, train_changes),
        "evaluate": [f"neuralop-fem evaluate {shlex.quote(entry['run_dir'])} --data "
                     f"{shlex.quote(str(data_path))} --resolution {n}" for n in entry["errors"]],
    }
    resolution = int(entry["train_config"]["resolution"])
    out["errors"] = {n: {**e, "zero_shot": int(n) != resolution}
                     for n, e in entry["errors"].items()}
    return out
