"""Round-off and thread count cannot change a verdict: errors equal up to the last bits are one
error, and the error metrics give the same numbers at 1 and 2 BLAS threads."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from neuralop_fem.evaluation.fair import (
    ERROR_RTOL,
    measure_ladder,
    pareto_front,
    place,
    same_error,
)
from neuralop_fem.metrics import (
    energy_norm_error,
    peer_metrics,
    relative_h1,
    relative_l2,
)
from solvers import DarcyFDSolver
from solvers.grf import NeumannGRF, threshold
from solvers.problems import get_problem

DARCY = get_problem("darcy")

#: Two runs of one computation at 1 and 2 BLAS threads may differ only by round-off; 1e-12
#: relative is far above that (a few 1e-16) and far below any difference that means something.
THREADS_RTOL = 1e-12


def _ladder(errors, times):
    errors, times = np.asarray(errors, float), np.asarray(times, float)
    return {"labels": [f"r{i}" for i in range(len(errors))], "rel_l2": errors[:, None],
            "time": times[:, None], "time_batch1": None}


def _ulps(x: float, k: int) -> float:
    """``x`` moved ``k`` units in the last place (up for k > 0, down for k < 0)."""
    for _ in range(abs(k)):
        x = float(np.nextafter(x, np.inf if k > 0 else -np.inf))
    return x


@pytest.mark.parametrize("ulps", [-6, -1, 1, 6])
@pytest.mark.parametrize("rung", [0, 1, 2])
def test_an_error_equal_to_a_rungs_up_to_round_off_is_placed_on_that_rung(rung, ulps):
    """The cheapest (above: "at most the cheapest rung" by exact comparison), a middle one
    ("interpolated") and the finest ("more accurate than every rung" below it)."""
    errors = np.array([0.24723681644248194, 3.1e-2, 4.7e-3])
    times = np.array([1e-3, 4e-3, 2e-2])
    sur = np.array([_ulps(float(errors[rung]), ulps)])
    assert sur[0] != errors[rung]  # the perturbation is real
    placed = place(_ladder(errors, times), sur, 5e-4)
    assert placed["status"] == "a rung"
    assert placed["bracket"] == [f"r{rung}"]
    assert placed["solver_time"] == times[rung]
    assert placed["speedup"] == pytest.approx(times[rung] / 5e-4, rel=1e-12)
    assert placed["samples_placed"] == 1
    assert placed["speedup_median"] == pytest.approx(times[rung] / 5e-4, rel=1e-12)


def test_errors_that_differ_by_more_than_round_off_are_not_merged():
    errors = np.array([1e-2, 1e-3])
    near = 1e-2 * (1 - 100 * ERROR_RTOL)  # close, but a real difference
    placed = place(_ladder(errors, [1e-3, 1e-2]), np.array([near]), 1e-3)
    assert placed["status"] == "interpolated"
    assert not same_error(near, 1e-2)
    assert same_error(_ulps(1e-2, 3), 1e-2)


def test_of_two_rungs_with_one_error_up_to_round_off_only_the_faster_is_on_the_front():
    e = 3.7e-3
    front = pareto_front(np.array([1e-2, e, _ulps(e, -2), 1e-4]), np.array([1.0, 2.0, 3.0, 4.0]))
    assert front.tolist() == [0, 1, 3]
    placed = place(_ladder([1e-2, e, _ulps(e, -2), 1e-4], [1.0, 2.0, 3.0, 4.0]),
                   np.array([_ulps(e, -1)]), 1.0)
    assert placed["bracket"] == ["r1"]  # the cheaper of the two equal rungs sets the time


def _fields(n: int, n_samples: int, seed: int):
    a = threshold(NeumannGRF(n).sample(n_samples, rng=np.random.default_rng(seed)))
    u = np.asarray(DarcyFDSolver().solve(a))
    rng = np.random.default_rng(seed + 1)
    pred = u * (1 + 0.01 * rng.standard_normal(u.shape))
    return a, u, pred


def test_the_metrics_agree_at_one_and_two_blas_threads():
    """129^2 grid points: enough for OpenBLAS to split a dot product over threads (it does above
    10,000 elements), so a metric reduced by a BLAS dot would move with the thread count."""
    a, u, pred = _fields(129, 3, seed=0)
    runs = []
    for threads in (1, 2):
        with threadpool_limits(limits=threads):
            runs.append({"rel_l2": relative_l2(pred, u),
                         "rel_h1": relative_h1(pred, u, grid="nodes"),
                         "energy": energy_norm_error(a, pred, u),
                         **{k: np.array([v]) for k, v in peer_metrics(pred, u).items()}})
    for key, one in runs[0].items():
        np.testing.assert_allclose(runs[1][key], one, rtol=THREADS_RTOL, atol=0, err_msg=key)


def test_the_fair_verdicts_errors_agree_at_one_and_two_blas_threads():
    """The ladder's errors (each rung's answer interpolated to the comparison grid by a matrix
    product, then scored) and so the placement, at 1 and 2 BLAS threads."""
    a, u, pred = _fields(43, 3, seed=2)
    rungs = [r for r in DARCY.ladder() if r.resolution in DARCY.reachable(43)][:3]
    runs = []
    for threads in (1, 2):
        with threadpool_limits(limits=threads):
            ladder = measure_ladder(rungs, a, u, problem=DARCY, batch_one=False)
            errors = relative_l2(pred, u)
            runs.append((ladder["rel_l2"], errors, place(ladder, errors, 1e-3)))
    np.testing.assert_allclose(runs[1][0], runs[0][0], rtol=THREADS_RTOL, atol=0)
    np.testing.assert_allclose(runs[1][1], runs[0][1], rtol=THREADS_RTOL, atol=0)
    assert runs[1][2]["status"] == runs[0][2]["status"]
    assert runs[1][2]["bracket"] == runs[0][2]["bracket"]
