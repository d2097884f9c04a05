"""benchmarks.lab: generation throughput, resolution transfer, peers, fair verdicts."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from benchmarks.lab import fair, generation, peers, transfer
from neuralop_fem.data import generate
from solvers import DarcyFDSolver

RECORD = {"hardware": {"cpu": "X", "cores": 1, "threads": {}},
          "code": {"commit": "c", "dirty": False}, "command": "python b.py"}


def test_the_bare_solver_and_generate_are_timed_and_the_file_measured(tmp_path):
    assert generation.bare_solver_seconds("darcy", 3, 9, 2) > 0
    out = tmp_path / "d.nc"
    seconds, size = generation.generate_seconds("darcy", 3, 9, 0, out)
    assert seconds > 0
    assert size > 3 * 9 * 9 * 8 * 0.1  # compressed float64 fields
    assert not out.exists()  # measured, then removed


@pytest.mark.slow
def test_measure_reports_the_rows_its_driver_writes():
    row = generation.measure("darcy", 2, 9, 1)
    assert row["overhead_in_process"] == pytest.approx(
        row["generate_in_process_s"] / row["bare_solver_s"] - 1)
    assert row["samples_per_s_2_workers"] == pytest.approx(2 / row["generate_2_workers_s"])
    text = generation.markdown({"quick": True, "cpu": "X", "cores": 1, "threads": {},
                                "note": "n", "command": "c", "results": [row]})
    assert "| darcy | 9 | 2 |" in text


def test_a_narrow_model_is_trained_once_and_evaluated_on_each_grid(tmp_path):
    data = generate("darcy", n_samples=14, resolution=57, seed=2, out=tmp_path / "d.nc",
                    workers=0, progress=False)
    run = tmp_path / "fno"
    settings = {"train_grid": 29, "epochs": 1, "n_train": 8, "n_eval": 3, "seed": 0}
    transfer.train_narrow("darcy-fno", data, run, **settings)
    first = (run / "run.json").stat().st_mtime_ns
    transfer.train_narrow("darcy-fno", data, run, **settings)  # finished: reused
    assert (run / "run.json").stat().st_mtime_ns == first
    row = transfer.evaluate_on_grids(run, data, [29, 57], 29)
    assert row["29/direct"] == row["29/resample"]  # one evaluation at the training grid
    assert row["57/direct"] != row["57/resample"]
    assert all(0 < v < 10 for k, v in row.items() if "/" in k)
    assert row["n_parameters"] > 0
    text = transfer.markdown({"grids": [29, 57], "train_grid": 29, "n_train": 8, "data": "d",
                              "epochs": 1, "n_eval": 3, "models": {"darcy-fno": row},
                              "record": RECORD})
    assert text.count("| darcy-fno |") == 1


def test_the_phase_fit_finds_the_phases_that_made_the_labels():
    x = np.random.default_rng(0).random((3, 16, 16)) > 0.5
    a = np.pad(np.where(x, 1.0, 0.1), ((0, 0), (0, 1), (0, 1)), mode="edge")
    y = 2.0 * DarcyFDSolver(forcing=1.0).solve(a)[:, :-1, :-1]  # labels of ratio 10, scale 2
    right = peers.fit_phases(x, y, 1.0, 0.1)
    assert right["median_misfit"] < 1e-12
    assert right["median_scale"] == pytest.approx(2.0)
    assert peers.fit_phases(x, y, 0.1, 1.0)["median_misfit"] > 0.05
    rows = [{"ratio": 10.0, "true_is_high": True, **right}]
    assert "| 10 | high | 0.000 | 2 |" in peers.phase_markdown(rows, 3, RECORD)


def test_the_peer_table_shows_a_row_or_why_it_is_missing():
    rows = {"theirs": {"error": "not run: no neuralop"},
            "ours": {"epochs": 4, "best_epoch": 3, "parameters": 1234, "train_cpu_s": 3.0,
                     "darcy_test_16": {"rel_l2": 0.1}, "darcy_test_32": {"rel_l2": 0.2}}}
    text = peers.markdown(rows, RECORD, peer="theirs")
    assert "| theirs | - | - | not run: no neuralop | | | |" in text
    assert "| ours | 4 (3) | 1,234 | 0.1000 | 0.2000 | - | 3 |" in text
    rows["ours"]["darcy_test_32"]["rel_l2_resample"] = 0.25
    assert "| ours | 4 (3) | 1,234 | 0.1000 | 0.2000 | 0.2500 | 3 |" in peers.markdown(
        rows, RECORD, peer="theirs")
    assert "theirs did not run in this benchmark: no verdict." in text


def test_the_verdict_names_each_win_and_each_miss():
    def row(e16, e32, cpu):
        return {"epochs": 1, "train_cpu_s": cpu, "darcy_test_16": {"rel_l2": e16},
                "darcy_test_32": {"rel_l2": e32}}

    rows = {peers.THEIRS: row(0.11, 0.14, 47.0), "a": row(0.09, 0.15, 40.0),
            "b": row(0.12, 0.13, 50.0)}
    rows["a"]["darcy_test_32"]["rel_l2_resample"] = 0.135
    lines = peers.verdict(rows)
    assert lines == [
        "* a: beats theirs at 16 (0.0900 vs 0.1100), MISSES theirs at 32 (0.1500 vs 0.1400; "
        "through the 16 x 16 grid 0.1350, below theirs), in less CPU training time (40 vs 47 s).",
        "* b: MISSES theirs at 16 (0.1200 vs 0.1100), beats theirs at 32 (0.1300 vs 0.1400), "
        "in MORE CPU training time (50 vs 47 s).",
    ]


@pytest.mark.slow
def test_our_preset_on_neuraloperators_files(tmp_path):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    for name, n, k in (("darcy_train_16", 16, 1000), ("darcy_test_16", 16, 4),
                       ("darcy_test_32", 32, 4)):
        torch.save({"x": torch.from_numpy(rng.random((k, n, n)) > 0.5),
                    "y": torch.from_numpy(rng.random((k, n, n)).astype(np.float32))},
                   tmp_path / f"{name}.pt")
    files = peers.import_files(tmp_path, tmp_path)
    assert sorted(files) == sorted(peers.FILES)
    row = peers.ours("darcy-fno-neuralop", files, tmp_path, epochs=1)
    assert row["epochs"] == 1
    assert row["dirichlet_edges"] == [True, False]  # their last row and column are interior
    assert math.isfinite(row["darcy_test_32"]["rel_l2"])
    assert math.isfinite(row["darcy_test_32"]["rel_l2_resample"])


def test_the_training_budget_and_the_fair_table(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps({
        "preset": "p", "epochs_completed": 3, "splits": {"train": [0, 1], "val": [2], "test": [3]},
        "resolution": 64, "wall_time_s": 9.0}))
    budget = fair.training_budget(tmp_path)
    assert budget == {"preset": "p", "epochs": 3, "n_train": 2, "resolution": 64,
                      "train_seconds": 9.0}
    run = {"problem": "burgers", "candidate": "m", "budget": budget,
           "surrogate_rel_l2_vs_truth": 0.01, "surrogate_ms_batch": 1.0,
           "surrogate_ms_one_per_call": 2.0, "surrogate_ms_all_cores": 0.5,
           "ladder_s_per_sample": 0.1, "reference_s_per_sample": 0.01,
           "fair": {"verdict": "V.", "fair_status": "at most", "fair_speedup": 3.0,
                    "fair_batch1_status": "more accurate than every rung",
                    "fair_equal_cost_rung": "R", "fair_equal_cost_error": 0.02},
           "rungs": [{"rung": "R", "on_front": True, "rel_l2_mean": 0.02, "ms_batch": 1.0,
                      "ms_one_per_call": 1.0, "ms_all_cores": None}]}
    text = fair.markdown({"runs": [run], "notes": ["a note"], "record": RECORD})
    assert "| <= 3x | more accurate than every rung | n/a | R (2.0e-02) |" in text
    assert "| R | yes | 2.00e-02 | 1 | 1 | n/a |" in text
    assert "a note" in text


@pytest.mark.slow
def test_the_verdict_of_a_run_on_its_test_split(tmp_path):
    from tests._surrogate_fixtures import burgers_run

    run = burgers_run(tmp_path, n=128, n_samples=6)
    info = json.loads((run / "run.json").read_text())
    info["splits"] = {"train": [0, 1, 2], "val": [], "test": [3, 4, 5]}
    (run / "run.json").write_text(json.dumps(info))
    r = fair.verdict_of_run(run, tmp_path / "b.nc", max_samples=2, reports=tmp_path / "rep")
    assert r["n_samples"] == 2
    assert r["problem"] == "burgers"
    assert r["budget"]["n_train"] == 3
    assert r["surrogate_rel_l2_vs_truth"] > 0
    assert r["fair"]["verdict"]
    assert len(r["rungs"]) >= 1  # an untrained model: the cheapest rung brackets it
    # two samples: each rung at the batch, both one per call, and on all cores
    assert r["ladder_s_per_sample"] == pytest.approx(sum(
        g["ms_batch"] + g["ms_one_per_call"] + (g["ms_all_cores"] or 0) for g in r["rungs"]) / 1e3)
    assert (tmp_path / "rep" / run.name / "summary.md").is_file()
