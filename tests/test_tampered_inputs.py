"""Altered files and run directories, met on the command line: exit status 2, one line on stderr
that names the file and what is wrong, no traceback, and never a run on the altered input.

Files: global attributes edited after writing (schema version, dataset seed, a physical
setting, the solver settings of the provenance record), a chunk with flipped bytes, a
truncated file. Run directories: ``run.json`` whose ``data.path`` names another file, whose
task or data problem disagree, or whose data record names a solver setting that does not exist.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import netCDF4
import pytest

from neuralop_fem.data import generate, load_dataset
from neuralop_fem.errors import DatasetError, RunDirectoryError
from neuralop_fem.surrogate import Surrogate

from .helpers import corrupt_chunk

ROOT = Path(__file__).resolve().parents[1]


def _train(data: Path, run: Path) -> Path:
    from neuralop_fem.models import PRESETS
    from neuralop_fem.training.config import TrainConfig
    from neuralop_fem.training.trainer import Trainer

    model = PRESETS["burgers-galerkin"].replace(d_model=8, num_layers=1, d_ff=8, freq_dim=4,
                                                modes=2, decoder_ff=4)
    config = TrainConfig(task="burgers", epochs=1, batch_size=4, eval_batch_size=4, n_train=8,
                         n_val=4, n_test=4, device="cpu", resolution=32)
    with Trainer(run, data, model_config=model, config=config, preset="burgers-galerkin") as t:
        t.fit()
    return run


def _record(rec: dict, where: str, key: str, value: object) -> None:
    rec[where][key] = value


#: file variant -> (attribute, new value; or a change of the config_json record)
FILE_EDITS = {
    "schema-text": ("neuralop_fem_schema_version", "x"),
    "schema-fraction": ("neuralop_fem_schema_version", 1.5),
    "seed-text": ("dataset_seed", "abc"),
    "seed-negative": ("dataset_seed", -5),
    "seed-other": ("dataset_seed", 7),
    "viscosity-other": ("viscosity", 0.5),
    "solver-keyword": ("config_json", ("solver_config", "foo", 1)),
    "solver-value": ("config_json", ("solver_config", "viscosity", "abc")),
    "record-problem": ("config_json", ("settings", "problem", "darcy")),
}


def _edit_file(src: Path, dst: Path, attr: str, value: object) -> Path:
    shutil.copyfile(src, dst)
    with netCDF4.Dataset(dst, "a") as ds:
        if attr == "config_json":
            rec = json.loads(ds.getncattr(attr))
            _record(rec, *value)
            ds.setncattr(attr, json.dumps(rec))
        else:
            ds.setncattr(attr, value)
    return dst


def _edit_run(src: Path, dst: Path, edit) -> Path:
    shutil.copytree(src, dst)
    info = json.loads((dst / "run.json").read_text())
    edit(info)
    (dst / "run.json").write_text(json.dumps(info))
    return dst


def _data_record(key: str, value: object):
    def edit(info: dict) -> None:
        rec = json.loads(info["data"]["config_json"])
        rec["solver_config"][key] = value
        info["data"]["config_json"] = json.dumps(rec)
    return edit


def _set(*path_value):
    *path, value = path_value

    def edit(info: dict) -> None:
        obj = info
        for key in path[:-1]:
            obj = obj[key]
        obj[path[-1]] = value
    return edit


@pytest.fixture(scope="module")
def paths(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("tampered")
    out = {"tmp": tmp}
    out["b"] = generate("burgers", n_samples=16, resolution=32, seed=1, out=tmp / "b.nc",
                        workers=0, progress=False)
    out["d"] = generate("darcy", n_samples=4, resolution=9, seed=1, out=tmp / "d.nc",
                        workers=0, progress=False)
    out["run"] = _train(out["b"], tmp / "run")
    for name, (attr, value) in FILE_EDITS.items():
        out[f"file-{name}"] = _edit_file(out["b"], tmp / f"b_{name}.nc", attr, value)
    out["flipped"] = tmp / "flipped.nc"
    corrupt_chunk(out["b"], out["flipped"], "u")
    data = out["b"].read_bytes()
    out["truncated"] = tmp / "truncated.nc"
    out["truncated"].write_bytes(data[: int(len(data) * 0.9)])
    runs = {
        "path-passwd": _set("data", "path", "/etc/passwd"),
        "path-darcy": _set("data", "path", str(out["d"])),
        "task": _set("task", "darcy"),
        "data-problem": _set("data", "problem", "darcy"),
        "solver-keyword": _data_record("foo", 1),
        "solver-value": _data_record("viscosity", "abc"),
    }
    for name, edit in runs.items():
        out[f"run-{name}"] = _edit_run(out["run"], tmp / f"run_{name}", edit)
    return out


def _cli(args: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "neuralop_fem.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def _assert_one_line_error(proc: subprocess.CompletedProcess[str], *parts: str) -> str:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    for part in parts:
        assert part in lines[0], lines[0]
    return lines[0]


FILE_CASES = [
    ("schema-text", "attribute `neuralop_fem_schema_version` must be an integer; got 'x'"),
    ("schema-fraction", "attribute `neuralop_fem_schema_version` must be an integer; got 1.5"),
    ("seed-text", "attribute `dataset_seed` must be an integer >= 0"),
    ("seed-negative", "attribute `dataset_seed` must be an integer >= 0"),
    ("seed-other", "attribute `dataset_seed` = 7 disagrees with the provenance record"),
    ("viscosity-other", "attribute `viscosity` = 0.5 disagrees with the provenance record"),
    ("solver-keyword", "gives BurgersSpectralSolver the unknown setting(s) ['foo']"),
    ("solver-value", "cannot rebuild BurgersSpectralSolver: `viscosity` must be a finite number"),
    ("record-problem", "attribute `problem` ('burgers') disagrees with the provenance record"),
]


@pytest.mark.parametrize(("name", "message"), FILE_CASES, ids=[c[0] for c in FILE_CASES])
def test_an_altered_file_is_refused_on_load(paths, name, message):
    path = paths[f"file-{name}"]
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert str(info.value).startswith(f"{path}: ")
    assert message in str(info.value)


@pytest.mark.parametrize(("name", "message"), [FILE_CASES[4], FILE_CASES[6]],
                         ids=[FILE_CASES[4][0], FILE_CASES[6][0]])
def test_an_altered_file_is_refused_by_info(paths, name, message):
    path = paths[f"file-{name}"]
    _assert_one_line_error(_cli(["info", str(path)]), str(path), message)


def test_an_altered_file_is_refused_by_evaluate_and_train(paths):
    path = paths["file-solver-keyword"]
    _assert_one_line_error(_cli(["evaluate", str(paths["run"]), "--data", str(path)]), str(path))
    out = paths["tmp"] / "train_altered"
    _assert_one_line_error(_cli(["train", "--data", str(path), "--preset", "burgers-fno",
                                 "--epochs", "1", "--out", str(out)]), str(path))
    assert not out.exists()


@pytest.mark.parametrize(("name", "message"), [
    ("flipped", "variable `u` (sample 0..15) cannot be read: the file is corrupt or truncated"),
    ("truncated", "cannot be read as a netCDF4 file (not netCDF, truncated or corrupt)"),
])
def test_a_damaged_file_stops_training_with_one_line(paths, name, message):
    path = paths[name]
    out = paths["tmp"] / f"train_{name}"
    _assert_one_line_error(_cli(["train", "--data", str(path), "--preset", "burgers-fno",
                                 "--epochs", "1", "--out", str(out), "--set", "n_train=8",
                                 "--set", "n_val=4", "--set", "n_test=4"]), str(path), message)


RUN_CASES = [
    ("path-passwd", "field `data.path` must name the training data of this burgers run, a "
                    "burgers dataset; it names /etc/passwd, which is not a netCDF file"),
    ("path-darcy", "field `data.path` must name the training data of this burgers run"),
    ("task", "field `task` must be the task of field `train_config` ('burgers'); got 'darcy'"),
    ("data-problem", "field `data.problem` must be 'burgers', the data of task 'burgers'"),
    ("solver-keyword", "field `data.config_json`: the provenance record `config_json` "
                       "(solver_config) gives BurgersSpectralSolver the unknown setting(s)"),
    ("solver-value", "cannot rebuild BurgersSpectralSolver"),
]


@pytest.mark.parametrize(("name", "message"), RUN_CASES, ids=[c[0] for c in RUN_CASES])
def test_a_tampered_run_directory_is_refused_on_load(paths, name, message):
    run = paths[f"run-{name}"]
    with pytest.raises(RunDirectoryError) as info:
        Surrogate.load(run, device="cpu")
    assert str(info.value).startswith(f"{run / 'run.json'}")
    assert message in str(info.value)


@pytest.mark.parametrize(("name", "message"), [RUN_CASES[0], RUN_CASES[4]],
                         ids=[RUN_CASES[0][0], RUN_CASES[4][0]])
def test_a_tampered_run_directory_is_refused_by_evaluate(paths, name, message):
    run = paths[f"run-{name}"]
    _assert_one_line_error(_cli(["evaluate", str(run), "--data", str(paths["b"])]),
                           str(run / "run.json"), message)


def test_the_untouched_run_and_file_still_work(paths):
    proc = _cli(["evaluate", str(paths["run"]), "--data", str(paths["b"])])
    assert proc.returncode == 0, proc.stderr
