"""Telling a regenerated dataset from other data against the reproduction rows
(neuralop_fem.reproduce.identity and ``neuralop-fem reproduce check-data``)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from neuralop_fem.data import BurgersDataConfig, generate, load_dataset, save_dataset
from neuralop_fem.data.float_paths import float_paths
from neuralop_fem.reproduce.identity import data_matches, record_identical, same_values_checksum
from neuralop_fem.reproduce.rows import dataset_record
from neuralop_fem.reproduce.tables import group_key


def _check_data(results: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "neuralop_fem.cli", "reproduce", "check-data",
                           *args, "--results", str(results)], capture_output=True, text=True,
                          timeout=300, check=False)


def _rounded_elsewhere(src: Path, out: Path, rel: float) -> Path:
    """``src`` with every value moved by about ``rel`` relative: what another CPU's last bits
    do to a regeneration (rel ~ 1e-15), or a real change (rel large)."""
    rng = np.random.default_rng(5)
    with load_dataset(src) as ds:
        moved = ds.load().copy(deep=True)
    for name in ("u0", "u"):
        moved[name] = moved[name] * (1 + rel * rng.standard_normal(moved[name].shape))
    save_dataset(moved, out)
    return out


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("identity")
    data = generate("burgers", n_samples=12, resolution=32, seed=1, out=tmp / "b.nc",
                    workers=0, progress=False)
    return {
        "data": data,
        "again": generate("burgers", n_samples=12, resolution=32, seed=1, out=tmp / "again.nc",
                          workers=0, progress=False),
        "elsewhere": _rounded_elsewhere(data, tmp / "elsewhere.nc", 2e-15),
        "changed": _rounded_elsewhere(data, tmp / "changed.nc", 1e-6),
        "viscous": generate("burgers", n_samples=12, resolution=32, seed=1, out=tmp / "nu.nc",
                            config=BurgersDataConfig(viscosity=0.1), workers=0, progress=False),
        "seed2": generate("burgers", n_samples=12, resolution=32, seed=2, out=tmp / "s2.nc",
                          workers=0, progress=False),
    }


def _results(*rows: tuple[str, dict]) -> dict:
    return {"runs": {key: {"key": key, "data": copy.deepcopy(row)} for key, row in rows}}


def test_a_regeneration_is_identical_and_rounding_elsewhere_is_the_same_values(files):
    row = dataset_record(files["data"])
    results = _results(("a", row), ("b", row))
    [same] = data_matches(results, dataset_record(files["again"]))
    assert (same.verdict, same.keys, same.difference) == ("identical", ("a", "b"), 0.0)
    elsewhere = dataset_record(files["elsewhere"])
    assert elsewhere["checksum"] != row["checksum"]
    [m] = data_matches(results, elsewhere)
    assert m.verdict == "same values"
    assert 0 < m.difference < 1e-13
    assert same_values_checksum(results, elsewhere) == {"checksum": row["checksum"],
                                                         "difference": m.difference}
    assert same_values_checksum(results, dataset_record(files["again"])) is None


def test_changed_values_are_different_and_other_settings_match_no_row(files):
    results = _results(("a", dataset_record(files["data"])))
    [m] = data_matches(results, dataset_record(files["changed"]))
    assert m.verdict == "different"
    assert 1e-7 < m.difference < 1e-5
    assert same_values_checksum(results, dataset_record(files["changed"])) is None
    assert data_matches(results, dataset_record(files["viscous"])) == []
    assert data_matches(results, dataset_record(files["seed2"])) == []


def test_rows_without_a_sketch_are_unverifiable_until_identical_data_gives_them_one(files):
    bare = dataset_record(files["data"])
    del bare["sketch"]
    results = _results(("a", bare), ("other", dataset_record(files["viscous"])))
    [m] = data_matches(results, dataset_record(files["elsewhere"]))
    assert m.verdict == "unverifiable"
    assert record_identical(results, dataset_record(files["elsewhere"])) == []
    again = dataset_record(files["again"])
    assert record_identical(results, again) == ["a"]
    row = results["runs"]["a"]["data"]
    assert row["sketch"] == again["sketch"]
    assert row["reproduced_by"] == again["float_paths"] == [float_paths()]
    assert record_identical(results, again) == []  # nothing new to record
    other_machine = copy.deepcopy(again)
    other_machine["float_paths"] = [float_paths() | {"cpu": "another CPU"}]
    assert record_identical(results, other_machine) == ["a"]
    assert [p["cpu"] for p in row["reproduced_by"]] == [float_paths()["cpu"], "another CPU"]
    [m] = data_matches(results, dataset_record(files["elsewhere"]))
    assert m.verdict == "same values"


def test_rows_on_a_regeneration_elsewhere_group_with_the_original(files):
    entry = {"preset": "burgers-galerkin", "mode": "paper", "model_config": {},
             "train_config": {"seed": 1}, "data": dataset_record(files["data"])}
    moved = copy.deepcopy(entry) | {"train_config": {"seed": 2},
                                    "data": dataset_record(files["elsewhere"])}
    assert group_key(entry) != group_key(moved)
    moved["data"]["same_values_as"] = same_values_checksum(
        {"runs": {"a": entry}}, moved["data"])
    assert group_key(entry) == group_key(moved)


def test_runs_recorded_one_after_the_other_on_a_regeneration_form_one_group(files):
    """The second run on the regenerated file finds the first one's row bit-identical: it must
    still join the original's group, not start one of its own."""
    original = {"preset": "burgers-galerkin", "mode": "paper", "model_config": {},
                "train_config": {"seed": 1}, "data": dataset_record(files["data"])}
    results = {"runs": {"orig": original}}
    for seed in (3, 4):
        entry = copy.deepcopy(original) | {"train_config": {"seed": seed},
                                           "data": dataset_record(files["elsewhere"])}
        same = same_values_checksum(results, entry["data"])
        assert same is not None
        assert same["checksum"] == original["data"]["checksum"]
        entry["data"]["same_values_as"] = same
        results["runs"][f"seed{seed}"] = entry
    keys = {group_key(e) for e in results["runs"].values()}
    assert len(keys) == 1


def test_check_data_reports_each_case_and_completes_rows(files, tmp_path):
    bare = dataset_record(files["data"])
    del bare["sketch"]
    (tmp_path / "results").mkdir()
    stored = _results(("a", bare))
    stored["runs"]["a"].update({"preset": "burgers-galerkin", "mode": "paper", "task": "burgers",
                                "label": "", "seed": 1, "model_config": {},
                                "train_config": {"seed": 1}, "n_parameters": 1,
                                "train_wall_time_s": 1.0, "device": "cpu",
                                "errors": {"32": {"rel_l2": {"mean": 0.1},
                                                  "rel_h1": {"mean": 0.2},
                                                  "zero_shot": False}}})
    path = tmp_path / "results" / "reproduction.json"
    path.write_text(json.dumps(stored))
    proc = _check_data(path, str(files["elsewhere"]))
    assert proc.returncode == 1, proc.stderr
    assert "unverifiable" in proc.stdout
    proc = _check_data(path, str(files["again"]))
    assert proc.returncode == 0, proc.stderr
    assert "bit-identical to the data of 1 row" in proc.stdout
    assert "(reproduced_by) in the 1 row on this data" in proc.stdout
    assert "sketch" in json.loads(path.read_text())["runs"]["a"]["data"]
    assert (tmp_path / "results" / "reproduction.md").is_file()
    proc = _check_data(path, str(files["elsewhere"]))
    assert proc.returncode == 0, proc.stderr
    assert "the same values as the data of 1 row" in proc.stdout
    proc = _check_data(path, str(files["changed"]), str(files["again"]))
    assert proc.returncode == 1
    assert "NOT the data of 1 row" in proc.stdout
    assert "bit-identical" in proc.stdout
    assert _check_data(path, str(files["elsewhere"]), "--rtol", "1e-20").returncode == 1
    proc = _check_data(path, str(files["viscous"]))
    assert proc.returncode == 1
    assert "no row of reproduction.json was trained on data generated" in proc.stdout


def test_a_tampered_row_sketch_is_one_error_naming_the_row(files):
    from neuralop_fem.errors import DatasetError

    row = dataset_record(files["data"])
    row["sketch"]["variables"]["u"]["projections"] = "tampered"
    results = _results(("the-row", row))
    with pytest.raises(DatasetError, match="data sketch of row 'the-row' cannot be compared"):
        data_matches(results, dataset_record(files["elsewhere"]))


@pytest.mark.parametrize(("content", "message"), [
    ("{not json", "not a results file (invalid JSON"),
    ("[1, 2]", "expected an object with `runs`"),
])
def test_a_damaged_results_file_is_one_line(files, tmp_path, content, message):
    results = tmp_path / "reproduction.json"
    results.write_text(content)
    proc = _check_data(results, str(files["data"]))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("neuralop-fem reproduce check-data: error:"), proc.stderr
    assert message in last


def test_settings_without_resolution_are_no_rows_data_not_an_internal_error(files, tmp_path):
    """A file whose generation settings lack a key the generate command needs (`resolution`,
    removed here) has no command that regenerates it: ``check-data`` says no row holds it
    (exit 1), it does not fail on the missing key."""
    import netCDF4

    src = tmp_path / "b.nc"
    src.write_bytes(files["data"].read_bytes())
    with netCDF4.Dataset(src, "a") as nc:
        config = json.loads(nc.getncattr("config_json"))
        del config["settings"]["resolution"]
        nc.setncattr("config_json", json.dumps(config))
    record = dataset_record(src)
    assert record["generate_command"] is None
    results = tmp_path / "reproduction.json"
    results.write_text(json.dumps(_results(("r", dataset_record(files["seed2"])))))
    proc = _check_data(results, str(src))
    assert (proc.returncode, proc.stderr) == (1, ""), proc.stderr
    assert proc.stdout.startswith(f"{src}: no row of reproduction.json was trained on data")
