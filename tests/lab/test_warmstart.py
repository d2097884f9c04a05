"""benchmarks.lab.warmstart: predictions with a known error, rows per variant."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.lab import warmstart as bw
from neuralop_fem.metrics import relative_l2
from neuralop_fem.surrogate.warmstart import VARIANTS
from solvers import DarcyFDSolver, NeumannGRF, threshold


@pytest.fixture(scope="module")
def problem():
    a = threshold(NeumannGRF(17).sample(2, rng=np.random.default_rng(0)))
    return a, DarcyFDSolver().solve(a)


def test_smooth_error_has_the_requested_level_and_zero_boundary(problem):
    _, u = problem
    pred = bw.smooth_error(u, 1e-2, np.random.default_rng(1))
    np.testing.assert_allclose(relative_l2(pred, u), 1e-2, rtol=1e-12)
    np.testing.assert_allclose(pred[:, 0, :], u[:, 0, :], atol=1e-15)


def test_the_coarse_prediction_is_close_but_not_exact(problem):
    a, u = problem
    err = relative_l2(bw.coarse_prediction(a), u)
    assert (err > 1e-4).all()
    assert (err < 0.2).all()


def test_inference_time_is_positive():
    assert 0 < bw.inference_time(29, 1, preset="darcy-fno") < 60


def test_rows_cover_every_variant_and_the_exact_start_needs_no_iterations(problem):
    a, u = problem
    rows = bw.warm_start_rows(a, u, {"exact": u, "smooth": bw.smooth_error(
        u, 0.1, np.random.default_rng(2))}, tolerances=(1e-6,), inference=0.5, repeats=1,
        linear_solvers=("cg",))
    assert len(rows) == 2 * len(VARIANTS)
    by = {(r["prediction"], r["variant"]): r for r in rows}
    assert by["exact", "zero"]["iterations"] > 1
    assert by["exact", "warm"]["iterations"] == 0
    assert by["exact", "zero"]["prediction_rel_l2"] == 0
    assert by["smooth", "warm"]["total_time"] == pytest.approx(
        by["smooth", "warm"]["solve_time"] + 0.5)
    text = bw.markdown({"rows": rows, "settings": {"samples": 2, "tolerances": (1e-6,)},
                        "hardware": {"cpu_model": "X", "cpu_count": 1, "OMP_NUM_THREADS": "1",
                                     "OPENBLAS_NUM_THREADS": "1", "note": "n"}})
    assert "| 17 | cg | exact (0.0e+00) | 1e-06 |" in text
