"""benchmarks.lab.solvers and .rungs on tiny grids."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.lab import rungs, solvers
from solvers import DarcyFDSolver, NeumannGRF, threshold


def test_darcy_speed_rows_time_every_linear_solver_and_check_it_against_direct():
    rows = solvers.darcy_speed([9, 17], ["direct", "cg"], 2, 1)
    assert [(r["n"], r["linear_solver"]) for r in rows] == [
        (9, "direct"), (9, "cg"), (17, "direct"), (17, "cg")]
    for r in rows:
        assert r["assembly_s_per_sample"] > 0
        assert r["solve_s_per_sample"] > 0
        assert r["total_s_per_sample"] == pytest.approx(
            r["assembly_s_per_sample"] + r["solve_s_per_sample"])
        assert len(r["iterations"]) == 2
        assert r["rel_l2_vs_direct_max"] < 1e-8
        assert r["relative_residual_max"] < 1e-9
    assert rows[1]["iterations"][0] > 1  # CG iterates; the direct solve does not
    text = solvers.markdown_darcy({"hardware": {"cpu_model": "X", "cpu_count": 1, "note": "n",
                                                "OMP_NUM_THREADS": "1",
                                                "OPENBLAS_NUM_THREADS": "1"},
                                   "settings": {}, "speed": rows, "accuracy": []})
    assert "| 9 | cg |" in text
    assert "1.0x" in text


def test_refine_field_keeps_the_coarse_nodes_and_is_exact_on_cubics():
    x = np.linspace(0, 1, 5)
    f = (x[:, None] ** 3 + x[None, :] ** 2)[None]
    fine = solvers.refine_field(f, 4)
    assert fine.shape == (1, 17, 17)
    np.testing.assert_allclose(fine[:, ::4, ::4], f, atol=1e-12)
    xf = np.linspace(0, 1, 17)
    np.testing.assert_allclose(fine[0], xf[:, None] ** 3 + xf[None, :] ** 2, atol=1e-12)


def test_darcy_accuracy_rows_compare_four_methods_and_the_reference_spread():
    rows = solvers.darcy_accuracy([9], 1)
    assert [r["method"] for r in rows][:4] == ["FD harmonic", "FD arithmetic", "FEM P1", "FEM Q1"]
    assert "reference spread" in rows[4]["method"]
    for r in rows[:4]:
        assert 0 < r["rel_l2_vs_4x_fd_harmonic"] < 0.5
        assert r["rel_l2_2x_vs_4x_fd_harmonic"] < r["rel_l2_vs_4x_fd_harmonic"]  # refinement


def test_burgers_speed_and_accuracy_against_cole_hopf():
    res = solvers.burgers_speed_accuracy(n=256, batch=1, repeats=1)
    assert [r["viscosity"] for r in res["results"]] == pytest.approx([0.1 / (2 * np.pi), 0.1])
    for r in res["results"]:
        assert r["rel_l2_error_max"] < 1e-4
        assert r["fft_pairs"] > r["time_steps"] > 0
        assert 0 < r["fft_floor_per_sample_s"]
        assert r["seconds_per_sample_best"] > 0
    assert solvers.fft_pair_time(64, 2, 1) > 0
    res["hardware"] = {"cpu_model": "X", "cpu_count": 1, "OMP_NUM_THREADS": "1", "note": "n"}
    assert solvers.markdown_burgers(res).count("\n| 0.") == 2


def test_rung_rows_time_each_setting_and_measure_its_errors():
    a421 = threshold(NeumannGRF(421).sample(2, rng=np.random.default_rng(0)))
    u421 = DarcyFDSolver().solve(a421[:2])
    rows = rungs.darcy_rows(a421, u421, 1, sizes=(29,))
    assert [(r["linear_solver"], r["tol"]) for r in rows] == list(rungs.DARCY_SETTINGS)
    for r in rows:
        assert r["batch"] == 2
        assert r["min_ms"] > 0
        assert r["algebraic_rel_l2_max"] < (1e-3 if r["tol"] > 1e-5 else 1e-7)
        assert 1e-3 < r["rel_l2_vs_421_mean"] < 0.2  # the discretisation error at 29
    b = rungs.burgers_rows(2, 1, sizes=(32,))
    assert [r["batch"] for r in b] == [1, 2]
    assert all(r["first_solve"]["min_ms"] > 0 and r["repeat_solve"]["min_ms"] > 0 for r in b)


def test_the_darcy_ladder_as_compare_runs_it():
    a421 = threshold(NeumannGRF(421).sample(2, rng=np.random.default_rng(1)))
    u421 = DarcyFDSolver().solve(a421)
    lad = rungs.darcy_ladder(a421, u421, 1, workers=1)
    assert lad["samples"] == 2
    assert lad["reference_ms_per_sample"] > 0
    errors = [g["rel_l2_mean"] for g in lad["rungs"]]
    assert len(errors) >= 3
    assert errors[-1] < errors[0]
    batch = sum(g["ms_batch"] + g["ms_one_per_call"] + (g["ms_all_cores"] or 0.0)
                for g in lad["rungs"])
    assert lad["ladder_ms_per_sample"] <= batch  # four of two samples: each one per call
    text = rungs.markdown({"repeats": 1, "conditions": "", "accuracy_samples": 2, "darcy": [],
                           "burgers": [], "ladder": lad,
                           "record": {"hardware": {"cpu": "X", "cores": 1, "threads": {}},
                                      "code": {"commit": "c", "dirty": False},
                                      "command": "python b.py"}})
    assert text.count("| FD ") == len(lad["rungs"])
    assert "Command: `python b.py`" in text
