"""The typed run record: every shipped and written run.json round-trips exactly through
RunRecord; damaged or tampered files are refused by RunDir.read with the messages of the
run-directory readers; older field names are migrated."""

from __future__ import annotations

import json

import pytest

from neuralop_fem.errors import InputError, RunDirectoryError
from neuralop_fem.runs import (
    DataRecord,
    RunDir,
    RunRecord,
    Splits,
    migrate,
    read_run_info,
    resolve_run_dir,
)
from neuralop_fem.zoo_entries import ENTRIES, available
from tests._surrogate_fixtures import tiny_burgers_run

SHIPPED = available()
#: The keys of a finished run's run.json in the order the trainer has always written them
#: (bf16_output_deviation: a bf16 run's only).
TRAINER_ORDER = (
    "format", "status", "preset", "task", "model_family", "model_config", "n_parameters",
    "train_config", "data", "resolution", "coarse_resolution", "output_resolution", "normalizers",
    "splits", "ood_reference", "sample_counts", "device", "precision", "world_size", "versions",
    "code", "hardware", "code_history", "peak_lr", "epochs_completed", "rollbacks", "wall_time_s",
    "best_epoch", "best_val_rel_l2", "test_rel_l2_best", "test_rel_l2_final", "val_rel_l2_final",
    "bf16_output_deviation", "warnings")


@pytest.mark.parametrize("name", SHIPPED)
def test_a_shipped_zoo_run_round_trips_exactly(name):
    raw = json.loads((ENTRIES / name / "run.json").read_text())
    record = RunDir.resolve(f"zoo:{name}").read()
    assert record.to_dict() == raw
    assert list(record.to_dict()) == list(raw)  # the writer's key order too
    assert isinstance(record.data, DataRecord)
    assert isinstance(record.splits, Splits)
    assert record.task == raw["task"]
    assert record.resolution == raw["resolution"]
    assert list(record.splits.test) == raw["splits"]["test"]
    assert record.environment.hardware == raw["hardware"]
    assert record.config.to_dict()["epochs"] == raw["train_config"]["epochs"]


def test_the_zoo_has_shipped_runs():
    assert len(SHIPPED) >= 1  # else the round-trip test above checks nothing


def _copy_of(tmp_path, name):
    run = tmp_path / name
    run.mkdir()
    (run / "run.json").write_text((ENTRIES / name / "run.json").read_text())
    return run


def test_write_then_read_is_the_same_record(tmp_path):
    run = _copy_of(tmp_path, SHIPPED[0])
    record = RunDir(run).read()
    changed = record.replace(status="interrupted", warnings=("one",))
    RunDir(run).write(changed)
    again = RunDir(run).read()
    assert again == changed
    assert read_run_info(run)["warnings"] == ["one"]
    assert read_run_info(run)["status"] == "interrupted"


def test_absent_null_and_unknown_fields_stay_as_they_were():
    raw = {"status": "running", "preset": None, "future_field": {"x": [1, 2]},
           "data": {"path": None, "n_samples": 4, "grid": [8], "new": 1}}
    record = RunRecord.from_dict(raw)
    assert record.to_dict() == raw
    assert record.preset is None
    assert record.task is None
    assert record.data is not None
    assert record.data.grid == (8,)


def test_a_record_built_in_code_writes_the_trainers_nulls():
    out = RunRecord(nulls=RunRecord.TRAINER_FIELDS, status="running",
                    splits=Splits(train=(0,), val=(1,), test=(2,))).to_dict()
    assert out["preset"] is None
    assert out["ood_reference"] is None
    assert out["splits"] == {"train": [0], "val": [1], "test": [2]}
    assert "test_rel_l2_best" not in out
    assert "warnings" not in out


@pytest.mark.parametrize(("changes", "match"), [
    ({"resolution": -3}, r"run\.json: field `resolution`"),
    ({"status": "hacked"}, r"run\.json: field `status` must be one of 'running'"),
    ({"splits": {"train": [0], "val": [1]}}, r"run\.json: field `splits` must be an object"),
    ({"format": "other/9"}, r"run\.json: field `format` must be 'neuralop_fem\.training\.run/1'"),
    ({"warnings": [3]}, r"run\.json: field `warnings` must be a list of strings"),
])
def test_a_tampered_run_json_is_refused_with_todays_error(tmp_path, changes, match):
    run = _copy_of(tmp_path, SHIPPED[0])
    info = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**info, **changes}))
    with pytest.raises(RunDirectoryError, match=match):
        RunDir(run).read()


def test_a_damaged_run_json_and_a_missing_one(tmp_path):
    run = _copy_of(tmp_path, SHIPPED[0])
    (run / "run.json").write_text('{"status": ')
    with pytest.raises(RunDirectoryError, match=r"run\.json: is not valid JSON .* line 1"):
        RunDir(run).read()
    with pytest.raises(RunDirectoryError, match=r"with run\.json; got .*nowhere \(no such"):
        RunDir(tmp_path / "nowhere").read()
    assert RunDir(tmp_path / "nowhere").recorded_status() is None


def test_older_field_names_are_migrated():
    old = {"problem": "burgers", "dataset": {"n_samples": 3}, "dataset_path": "/d.nc",
           "split": {"train": [0], "val": [1], "test": [2]},
           "metrics": {"val_error": 0.5, "resolution": 64}}
    record = RunRecord.from_dict(migrate(old))
    assert record.task == "burgers"
    assert record.resolution == 64
    assert record.best_val_rel_l2 == 0.5
    assert record.data_path == "/d.nc"
    assert record.data.n_samples == 3
    assert record.test_indices == (2,)
    assert RunRecord.from_dict(migrate(record.to_dict())) == record


def test_zoo_names_resolve_to_run_dirs(tmp_path):
    assert resolve_run_dir(f"zoo:{SHIPPED[0]}") == ENTRIES / SHIPPED[0]
    assert resolve_run_dir(tmp_path) == tmp_path
    with pytest.raises(InputError, match="unknown zoo model 'nope'; available: "):
        RunDir.resolve("zoo:nope")


def test_require_names_the_missing_field(tmp_path):
    record = RunRecord.from_dict({"status": "running"})
    with pytest.raises(RunDirectoryError, match=r"x/run\.json: field `resolution` is missing; "
                                                r"this run\.json has status\."):
        record.require(("status", "resolution"), source="x/run.json")


def test_a_trained_run_json_has_the_fields_and_order_of_the_shipped_ones(tmp_path, burgers_file):
    """What the trainer writes through RunRecord is the format it wrote as a dict: its keys in
    its order (the zoo's runs, written earlier, share the order of the keys they have), and it
    reads back equal."""
    run = tiny_burgers_run(burgers_file, tmp_path / "run", epochs=1)
    written = json.loads((run / "run.json").read_text())
    assert list(written) == [k for k in TRAINER_ORDER if k in written]
    assert set(TRAINER_ORDER) - set(written) <= {"bf16_output_deviation"}
    shipped = json.loads((ENTRIES / SHIPPED[0] / "run.json").read_text())
    assert [k for k in written if k in shipped] == [k for k in shipped if k in written]
    assert list(written["data"]) == [k for k in shipped["data"] if k != "file_name"]
    assert written["status"] == "finished"
    assert RunDir(run).read().to_dict() == written
