"""The fair verdict for the inverse Darcy problem: the inversion's ladder and its verdict."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from neuralop_fem.errors import InputError
from neuralop_fem.evaluation.fair import measure_ladder, place, verdict_sentence
from solvers import DarcyFDSolver, DarcyInverseSolver
from solvers.darcy_inverse import add_noise, coefficient_errors
from solvers.grf import NeumannGRF, threshold
from solvers.ladder import run_rung
from solvers.problems import get_problem

INVERSE = get_problem("darcy-inverse")
N = 29  # reachable rungs: 15 and 29
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def observations():
    """Two-phase coefficients (3 / 12) on 29 x 29, their solutions with 1 % relative noise."""
    rng = np.random.default_rng(4)
    a = np.asarray(threshold(NeumannGRF(N).sample(4, rng=rng)))
    u = add_noise(np.asarray(DarcyFDSolver().solve(a)), 0.01, rng=rng)
    return u, a, np.full(len(u), 0.01)


def test_the_inverse_ladder_is_cheaper_settings_of_the_inversion_and_takes_the_physics():
    rungs = INVERSE.ladder()
    assert len(rungs) >= 5
    res = [r.resolution for r in rungs]
    assert res == sorted(res)
    reference = DarcyInverseSolver()
    for r in rungs:
        assert isinstance(r.solver, DarcyInverseSolver)
        assert r.solver.maxiter < reference.maxiter  # iteration caps
        assert r.solver.tau > reference.tau  # looser stopping
        assert r.solver.misfit_tol > reference.misfit_tol
    assert set(res) & set(INVERSE.reachable(141)) >= {15, 29, 36, 71, 141}
    assert set(res) & set(INVERSE.reachable(85)) >= {15, 22, 29, 43, 85}
    like = DarcyInverseSolver(forcing=2.0, bounds=(1.0, 20.0), maxiter=5)
    for r in INVERSE.ladder(like=like):
        assert (r.solver.forcing, r.solver.bounds) == (2.0, (1.0, 20.0))
        assert r.solver.maxiter == 20  # numerics stay the rung's


def test_rungs_invert_strided_observations_with_their_noise_levels(observations):
    u, a, levels = observations
    rungs = [r for r in INVERSE.ladder() if r.resolution in INVERSE.reachable(N)]
    assert [r.resolution for r in rungs] == [15, 29]
    ladder = measure_ladder(rungs, u, a, problem=INVERSE, batch_one=False, noise_level=levels)
    assert ladder["rel_l2"].shape == (2, 4)
    # the error is the comparison's coefficient error on the observation grid
    answers, _ = run_rung(rungs[0], u, N, problem=INVERSE, noise_level=levels)
    np.testing.assert_allclose(ladder["rel_l2"][0],
                               coefficient_errors(answers, a, pool=1)["fine"], rtol=1e-12)
    assert (ladder["rel_l2"] < 0.5).all()  # a two-phase field, recovered to tens of percent
    assert ladder["rel_l2"][1].mean() < ladder["rel_l2"][0].mean()  # the finer grid wins
    # the noise level reaches the discrepancy principle: a larger one stops earlier
    loose, _ = run_rung(rungs[1], u, N, problem=INVERSE, noise_level=levels * 20)
    tight, _ = run_rung(rungs[1], u, N, problem=INVERSE, noise_level=levels)
    assert not np.allclose(loose, tight)


def test_a_stand_in_that_is_a_rung_gets_a_speedup_of_about_one(observations):
    """The stand-in inverts exactly as the rung does, timed the same way: the timings differ by
    noise only (a shared machine: a factor 3 either way is allowed)."""
    u, a, levels = observations
    rungs = [r for r in INVERSE.ladder() if r.resolution in INVERSE.reachable(N)]
    ladder = measure_ladder(rungs, u, a, problem=INVERSE, batch_one=False, noise_level=levels)
    stand_in = rungs[0]
    speedups = []
    for _ in range(3):
        answers, seconds = run_rung(stand_in, u, N, problem=INVERSE, noise_level=levels)
        errors = coefficient_errors(answers, a, pool=1)["fine"]
        placed = place(ladder, errors, float(seconds.mean()))
        assert placed["status"] == "a rung"
        assert placed["bracket"] == [stand_in.label]
        speedups.append(placed["speedup"])
    assert 1 / 3 < np.median(speedups) < 3
    text = verdict_sentence(placed, where="on this CPU (1 thread)",
                            solver="the classical inversion")
    assert text.startswith(f"At equal accuracy ({placed['error']:.2g}) the classical inversion "
                           f"({stand_in.label}) takes")


def test_a_wrong_problem_ladder_is_refused(observations):
    u, a, levels = observations
    with pytest.raises(InputError, match=r"entry 0 \(DarcyFDSolver\) solves 'darcy'; the "
                                         r"comparison is of 'darcy-inverse'"):
        measure_ladder([DarcyFDSolver()], u, a, problem=INVERSE, noise_level=levels)
    with pytest.raises(InputError, match=r"entry 1 \(.*\) solves 'darcy-inverse'.*'darcy'"):
        measure_ladder([DarcyFDSolver(), DarcyInverseSolver()], a, u, problem=get_problem("darcy"))
    with pytest.raises(InputError, match="empty ladder"):
        measure_ladder([], u, a, problem=INVERSE, noise_level=levels)


@pytest.fixture(scope="module")
def inverse_run(tmp_path_factory):
    from tests._surrogate_fixtures import inverse_run

    run, data, _ = inverse_run(tmp_path_factory.mktemp("fair-inverse"), n=N, n_samples=12,
                               epochs=1, splits=(6, 3, 3))
    return run, data


def _compare(*args: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "neuralop_fem.cli", "compare", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=600)


def test_compare_run_gives_the_inverse_verdict(inverse_run, tmp_path):
    from neuralop_fem.evaluation import compare_run

    run, data = inverse_run
    report = compare_run(run, data=data, out=tmp_path / "rep", max_samples=3, warm_start=False,
                         workers=1)
    ds = report["dataset"]
    assert ds.attrs["fair_truth"] == "the dataset's true coefficient on the observation grid"
    np.testing.assert_allclose(ds["truth_rel_l2"].values,
                               ds["rel_l2"].sel(approach="surrogate").values)
    assert ds.attrs["fair_status"] in ("interpolated", "a rung", "at most the cheapest rung",
                                       "more accurate than every rung")
    assert report["text"].splitlines()[2] == ds.attrs["verdict"]
    assert "| inversion 15 x 15, maxiter 20 |" in report["text"]
    with pytest.raises(InputError, match=r"entry 0 \(DarcyFDSolver\) solves 'darcy'"):
        compare_run(run, data=data, out=tmp_path / "bad", max_samples=3, warm_start=False,
                    ladder=[DarcyFDSolver()], workers=1)


@pytest.mark.slow
def test_compare_gives_the_inverse_verdict_by_default_and_no_ladder_skips_it(inverse_run,
                                                                            tmp_path):
    run, data = inverse_run
    proc = _compare(run, "--data", data, "--out", tmp_path / "rep", "--max-samples", "3",
                    "--no-warm-start")
    assert proc.returncode == 0, proc.stderr[-2000:]
    ds = xr.open_dataset(tmp_path / "rep" / "comparison.nc")
    verdict = ds.attrs["verdict"]
    assert verdict.startswith("At equal accuracy") or "more accurate than every" in verdict
    assert "the classical inversion" in verdict or "more accurate than every" in verdict
    summary = (tmp_path / "rep" / "summary.md").read_text()
    assert summary.splitlines()[2] == verdict
    assert "true coefficient on the observation grid" in summary
    # the surrogate's error in the verdict is the comparison's coefficient error
    np.testing.assert_allclose(ds["truth_rel_l2"].values,
                               ds["rel_l2"].sel(approach="surrogate").values)
    assert ds["ladder_rel_l2"].dims == ("rung", "sample")
    assert list(ds["rung"].values)[0] == "inversion 15 x 15, maxiter 20"
    ds.close()
    plain = _compare(run, "--data", data, "--out", tmp_path / "plain", "--max-samples", "3",
                     "--no-ladder", "--no-warm-start")
    assert plain.returncode == 0, plain.stderr[-2000:]
    ds = xr.open_dataset(tmp_path / "plain" / "comparison.nc")
    assert "verdict" not in ds.attrs
    assert "rung" not in ds.dims
    ds.close()
