"""benchmarks.lab.inverse and .inverse_settings on a tiny darcy-inverse run."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from benchmarks.lab import inverse as bi
from benchmarks.lab import inverse_settings as bs
from neuralop_fem.reproduce.inverse import grid_data, paper_observations
from tests._surrogate_fixtures import inverse_run

N = 29
RECORD = {"hardware": {"cpu": "X", "cores": 1, "threads": {}},
          "code": {"commit": "c", "dirty": False}, "command": "python b.py"}


@pytest.fixture(scope="module")
def observed(tmp_path_factory):
    """A two-epoch darcy-inverse run at 29, its first two test samples observed at 1 %."""
    run, data, _ = inverse_run(tmp_path_factory.mktemp("inverse"), n=N, n_samples=16,
                               splits=(10, 3, 3))
    surrogate, ds, train, test = bi.test_split(run, data, 2)
    obs = paper_observations(grid_data(ds, train, test, N), 0.01, 0)
    return surrogate, train, test, obs


def test_the_test_split_is_the_runs(observed):
    surrogate, train, test, obs = observed
    assert list(test) == surrogate.run_info["splits"]["test"][:2]
    assert len(train) == 10
    assert obs["noisy"].shape == (2, N, N)


def test_a_cell_compares_three_answers_and_the_warm_starts_saving(observed):
    surrogate, _, _, obs = observed
    solver = dataclasses.replace(surrogate.reference_solver(), maxiter=8)
    cell = bi.compare_cell(surrogate, solver, obs)
    m = cell["means"]
    assert set(m) == {"surrogate", "classical", "warm_started"}
    assert m["surrogate"]["pde_solves"] == 0
    assert cell["solve_ratio"] == pytest.approx(
        m["classical"]["equivalent_solves"] / m["warm_started"]["equivalent_solves"])
    assert len(cell["per_sample"]["rel_l2"]) == 3  # approaches
    assert cell["noise_level_mean"] > 0
    text = bi.markdown_cells({"run": "r", "run_note": "note", "data": "d.nc", "samples": 2,
                              "cells": {f"{N}/0.01": cell}, "record": RECORD,
                              "warm_phases": [3.0, 12.0]})
    assert f"| {N} | 0.01 | " in text
    assert "snapped to the phases 3 / 12" in text


def test_the_starts_from_the_surrogate_and_the_oracles(observed):
    surrogate, _, _, obs = observed
    res = bi.compare_starts(surrogate, obs, 3)
    assert list(res["starts"]) == list(bi.starts(obs["truth"], obs["truth"], 3))
    oracle = res["starts"]["oracle: the true coefficient"]
    assert oracle["rel_l2"] < res["starts"]["default"]["rel_l2"]
    assert res["surrogate_alone"]["time"] > 0
    for r in res["starts"].values():
        assert sum(r["stop_reasons"].values()) == 2
    text = bi.markdown_starts({"run": "r", "data": "d", "grid": N, "noise": 0.01, "samples": 2,
                               "maxiter": 3, **res, "record": RECORD})
    assert text.count("| oracle") == 3
    assert "| default | " in text


def test_snapped_starts_hold_two_phases():
    guess = np.linspace(1.0, 14.0, 25).reshape(1, 5, 5)
    solver, start, from_surrogate = bi.starts(guess, guess, 5)["two-phase"]
    assert from_surrogate
    assert solver.maxiter == 5
    assert set(np.unique(start)) == {3.0, 12.0}


def test_linear_solves_from_a_far_start():
    row = bs.linear_start_case(9, 1e2, seed=0)
    for start in ("zero", "previous state"):
        assert row[start]["iterations"] > 0
        assert row[start]["residual"] < 1e-9
    failed = {"error": "no convergence: relative residual 1.5e-09 after 121 iterations",
              "seconds": 1.0}
    text = bs.linear_start_markdown([row, {**row, "zero": failed}])
    assert "ConvergenceError: residual 1.5e-09 after 121 its" in text


def test_the_benchmark_data_and_the_surrogate_standin():
    data = bs.benchmark_data(2, 1, seed=0)
    assert data["u85"].shape == (3, 85, 85)
    assert data["a141"].shape == (3, 141, 141)
    assert data["target85"].shape == (1, 22, 22)
    assert data["target141"].shape == (1, 36, 36)
    guess = bs.surrogate_standin(data["target85"], np.random.default_rng(0))
    assert guess.shape == (1, 85, 85)
    np.testing.assert_allclose(guess[:, ::4, ::4], data["target85"], rtol=0.2)


def test_the_defaults_case_reports_what_its_driver_writes():
    data = bs.benchmark_data(4, 1, seed=0)
    row = bs.defaults_case(data, 85, 0.01, "surrogate", 4)
    assert row["error_coarse"] < row["start_error_coarse"] * 2
    assert row["pde_solves"] >= row["iterations"] > 0
    assert "| 85 | 0.01 |" in bs.defaults_markdown([row], {"n_test": 1, "seed": 0, "n_train": 4,
                                                           "hardware": {}})
