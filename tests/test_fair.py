"""The fair verdict: solver ladders, the accuracy-cost front and the surrogate's place on it."""

from __future__ import annotations

import numpy as np
import pytest

from neuralop_fem.errors import InputError
from neuralop_fem.evaluation.fair import measure_ladder, pareto_front, place, verdict_sentence
from neuralop_fem.metrics import relative_l2
from solvers import BurgersSpectralSolver, DarcyFDSolver, PeriodicGRF
from solvers.ladder import Rung, interpolate, run_rung
from solvers.problems import get_problem

BURGERS = get_problem("burgers")


def _ladder(errors, times):
    errors, times = np.asarray(errors, float), np.asarray(times, float)
    return {"labels": [f"r{i}" for i in range(len(errors))], "rel_l2": errors[:, None],
            "time": times[:, None], "time_batch1": None}


def test_front_is_monotone_and_keeps_only_undominated_rungs():
    rng = np.random.default_rng(0)
    for _ in range(20):
        err, t = 10.0 ** rng.uniform(-4, -1, 12), 10.0 ** rng.uniform(-4, -1, 12)
        front = pareto_front(err, t)
        assert (np.diff(t[front]) >= 0).all()
        assert (np.diff(err[front]) < 0).all()
        for i in set(range(12)) - set(front.tolist()):  # every other rung is dominated
            assert any(t[j] <= t[i] and err[j] <= err[i] for j in front)


def test_equal_accuracy_interpolates_log_log_between_rungs():
    times = np.array([1e-3, 2e-3, 4e-3, 8e-3])
    errors = 1e-2 * (times / 1e-3) ** -2.0  # a power law: log-log interpolation is exact
    target = 1e-2 * (3e-3 / 1e-3) ** -2.0
    placed = place(_ladder(errors, times), np.array([target]), 1e-3)
    assert placed["status"] == "interpolated"
    assert placed["solver_time"] == pytest.approx(3e-3, rel=1e-12)
    assert placed["speedup"] == pytest.approx(3.0, rel=1e-12)
    assert placed["bracket"] == ["r1", "r2"]
    assert placed["equal_cost_rung"] == "r0"  # the best rung within 1 ms
    assert "3x faster" in verdict_sentence(placed, where="on this CPU (1 thread)")


def test_more_accurate_than_every_rung_gets_no_number():
    placed = place(_ladder([1e-2, 1e-3], [1e-3, 1e-2]), np.array([1e-4]), 5e-3)
    assert placed["status"] == "more accurate than every rung"
    assert np.isnan(placed["speedup"])
    assert np.isnan(placed["solver_time"])
    text = verdict_sentence(placed, where="on this CPU (1 thread)")
    assert "more accurate than every rung" in text
    assert "faster" not in text
    assert "as fast" not in text


def test_less_accurate_than_the_cheapest_rung_is_a_bound():
    placed = place(_ladder([1e-2, 1e-3], [1e-3, 1e-2]), np.array([0.5]), 2e-3)
    assert placed["status"] == "at most the cheapest rung"
    assert placed["speedup"] == pytest.approx(0.5)
    assert "at most 0.5x as fast" in verdict_sentence(placed, where="here")


def test_a_surrogate_that_is_a_rung_gets_a_speedup_of_about_one():
    """The stand-in solves exactly as the rung does, timed the same way; the two timings differ
    only by noise (a shared machine: a factor 3 either way is allowed, measured < 1.5)."""
    u0 = PeriodicGRF(512).sample(6, rng=np.random.default_rng(1))
    truth = BurgersSpectralSolver().solve(u0)
    rungs = [BURGERS.ladder()[i] for i in (0, 2, 4)]  # n = 32, 128, 512
    ladder = measure_ladder(rungs, u0, truth, problem=BURGERS, batch_one=False)
    stand_in = rungs[1]
    speedups = []
    for _ in range(3):
        answers, seconds = run_rung(stand_in, u0, 512, problem=BURGERS)
        # the ladder's own metric: np.linalg.norm rounds differently on some CPUs (AVX-512)
        errors = relative_l2(answers, truth)
        placed = place(ladder, errors, float(seconds.mean()))
        assert placed["status"] == "a rung"
        assert placed["bracket"] == [stand_in.label]
        speedups.append(placed["speedup"])
    assert 1 / 3 < np.median(speedups) < 3


def test_the_ladder_stops_once_a_rung_is_more_accurate_and_slower_than_the_surrogate():
    u0 = PeriodicGRF(128).sample(2, rng=np.random.default_rng(0))
    truth = BurgersSpectralSolver().solve(u0)
    rungs = BURGERS.ladder()[:3]
    everything = measure_ladder(rungs, u0, truth, problem=BURGERS, batch_one=False)
    assert everything["skipped"] == []
    assert everything["rel_l2"].shape == (3, 2)
    first = measure_ladder(rungs, u0, truth, problem=BURGERS, batch_one=False,
                           bracket=(1.0, 0.0))  # rung 0 is more accurate and slower already
    assert first["labels"] == [rungs[0].label]
    assert first["skipped"] == [r.label for r in rungs[1:]]
    np.testing.assert_array_equal(first["rel_l2"], everything["rel_l2"][:1])


def test_bad_ladders_give_clear_errors():
    u0 = PeriodicGRF(64).sample(2, rng=np.random.default_rng(0))
    truth = BurgersSpectralSolver().solve(u0)
    with pytest.raises(InputError, match="empty ladder"):
        measure_ladder([], u0, truth, problem=BURGERS)
    with pytest.raises(InputError, match=r"entry 0 \(DarcyFDSolver\) solves 'darcy'"):
        measure_ladder([DarcyFDSolver()], u0, truth, problem=BURGERS)
    with pytest.raises(InputError, match="must follow the solver contract"):
        measure_ladder(["spectral"], u0, truth, problem=BURGERS)

    class Failing:
        problem = "burgers"

        def solve(self, inputs):
            msg = "out of memory"
            raise RuntimeError(msg)

    with pytest.raises(InputError, match=r"rung 0 \(Failing\) failed: RuntimeError: out of mem"):
        measure_ladder([Failing()], u0, truth, problem=BURGERS)
    with pytest.raises(InputError, match=r"`resolution` must be reachable from 64.*got 48"):
        measure_ladder([Rung(solver=BurgersSpectralSolver(), resolution=48)], u0, truth,
                       problem=BURGERS)


def test_interpolations_are_exact_where_they_should_be():
    x = np.arange(16) / 16
    f = np.sin(2 * np.pi * x) + 0.3 * np.cos(6 * np.pi * x)
    fine = np.arange(64) / 64
    exact = np.sin(2 * np.pi * fine) + 0.3 * np.cos(6 * np.pi * fine)
    np.testing.assert_allclose(interpolate(f[None], 64, grid="periodic")[0], exact, atol=1e-13)
    np.testing.assert_allclose(interpolate(exact[None], 16, grid="periodic")[0], f, atol=1e-13)
    xs = np.linspace(0, 1, 5)
    bilinear = lambda x, y: 1 + 2 * x - y + 3 * x * y  # noqa: E731
    coarse = bilinear(*np.meshgrid(xs, xs, indexing="ij"))
    xf = np.linspace(0, 1, 13)
    np.testing.assert_allclose(interpolate(coarse[None], 13, grid="nodes")[0],
                               bilinear(*np.meshgrid(xf, xf, indexing="ij")), atol=1e-13)


def test_problem_ladders_are_reachable_and_take_the_physics():
    for name in ("burgers", "darcy"):
        problem = get_problem(name)
        rungs = problem.ladder()
        assert len(rungs) >= 4
        res = [r.resolution for r in rungs]
        assert res == sorted(res)
        assert set(res) <= set(problem.reachable(problem.benchmark_resolution))
    slow = BurgersSpectralSolver(viscosity=0.1)
    assert all(r.solver.viscosity == 0.1 for r in BURGERS.ladder(like=slow))
    assert all(r.solver.forcing == 2.0
               for r in get_problem("darcy").ladder(like=DarcyFDSolver(forcing=2.0)))


def test_worst_samples_show_solver_and_surrogate_on_one_colour_scale(monkeypatch, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import xarray as xr

    from neuralop_fem.evaluation import plots

    rng = np.random.default_rng(0)
    ref = rng.random((3, 9, 9))
    dims = ("sample", "x", "y")
    ds = xr.Dataset({"input": (dims, 3 + 9 * rng.random((3, 9, 9))), "reference": (dims, ref),
                     "candidate": (dims, 2.0 * ref), "rel_l2": ("sample", [1.0, 1.0, 1.0])},
                    coords={"sample": [0, 1, 2]}, attrs={"problem": "darcy"})
    figures = []
    monkeypatch.setattr(plots, "save", lambda fig, path, **kw: figures.append(fig) or path)
    plots.worst_samples(ds, tmp_path / "w.png", plt)
    panels = [ax for ax in figures[0].axes if ax.images]
    assert len(panels) == 12
    for row in range(3):
        solver, surrogate = panels[4 * row + 1], panels[4 * row + 2]
        assert solver.images[0].get_clim() == surrogate.images[0].get_clim()
    plt.close("all")


def test_the_time_budget_stops_the_climb_and_the_verdict_becomes_a_lower_bound():
    u0 = PeriodicGRF(128).sample(2, rng=np.random.default_rng(0))
    truth = BurgersSpectralSolver().solve(u0)
    rungs = BURGERS.ladder()[:3]
    tiny = measure_ladder(rungs, u0, truth, problem=BURGERS, batch_one=False, budget_s=1e-9)
    assert tiny["labels"] == [rungs[0].label]  # the first rung always runs
    assert tiny["stopped"] == "budget"
    assert tiny["skipped"] == [r.label for r in rungs[1:]]
    free = measure_ladder(rungs, u0, truth, problem=BURGERS, batch_one=False, budget_s=1e6)
    assert free["stopped"] is None
    assert free["skipped"] == []
    placed = place(tiny, np.array([1e-12, 1e-12]), 1e-6)  # far more accurate than rung 0
    assert placed["status"] == "at least the finest rung measured"
    assert placed["solver_time"] == pytest.approx(tiny["time"].mean())
    assert placed["speedup"] == pytest.approx(tiny["time"].mean() / 1e-6)
    text = verdict_sentence(placed, where="on this CPU (1 thread)")
    assert "at least" in text
    assert rungs[0].label in text
    with pytest.raises(InputError, match="budget_s"):
        measure_ladder(rungs, u0, truth, problem=BURGERS, budget_s=0.0)


def test_an_even_verdict_keeps_one_parenthesis_for_its_spread():
    placed = {"error": 3.7e-3, "status": "interpolated", "solver_time": 1.93e-3, "speedup": 1.0,
              "speedup_p10": 0.91, "speedup_p90": 1.1, "bracket": ["n = 32", "n = 64"]}
    text = verdict_sentence(placed, where="here")
    assert "the surrogate is as fast (1x; samples: 0.91-1.1x, 10-90 %) here." in text
    placed["speedup"] = 2.2
    assert "is 2.2x faster (samples: 0.91-1.1x, 10-90 %) here." in verdict_sentence(
        placed, where="here")
