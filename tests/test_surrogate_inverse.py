"""Inverse-problem surrogates in scripts: a trained darcy-inverse run behind Surrogate.solve."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xarray as xr

from neuralop_fem import Surrogate
from neuralop_fem.data import load_dataset
from neuralop_fem.errors import ConfigError, InputError, ShapeError
from neuralop_fem.evaluation import evaluate_run
from neuralop_fem.surrogate import OODWarning
from neuralop_fem.surrogate.resample import resample_nodes
from neuralop_fem.training.setup import make_dataset
from solvers import DarcyInverseSolver
from solvers.darcy_inverse import paper_noise_to_relative
from tests._surrogate_fixtures import inverse_run as _inverse_run

N, N_COARSE = 29, 8  # 29 -> 8 is the 141 -> 36 rule (coarse_ratio 0.25)


@pytest.fixture(scope="module")
def inverse_run(tmp_path_factory):
    return _inverse_run(tmp_path_factory.mktemp("inverse"), n=N)


def test_loads_and_predicts_the_coefficient_on_the_coarse_grid(inverse_run):
    run, data, _ = inverse_run
    sur = Surrogate.load(run)
    assert sur.problem == "darcy-inverse"
    assert sur.resolution == N
    assert sur.output_resolution == N_COARSE
    u = load_dataset(data)["u"].values[:3]
    a = sur.solve(u)
    assert a.shape == (3, N_COARSE, N_COARSE)
    assert np.isfinite(a).all()
    np.testing.assert_allclose(sur.output_grid, np.linspace(0, 1, N_COARSE))
    one = sur.solve(u[0])
    # The model computes in float32, and a batch of one and a batch of three take different
    # BLAS blockings on some CPUs (AVX-512: one entry in 64 one float32 unit apart): equal to
    # float32 rounding, a few units of its epsilon.
    np.testing.assert_allclose(one, a[0], rtol=4 * np.finfo(np.float32).eps, atol=0)


def test_matches_the_evaluation_of_the_run(inverse_run):
    run, data, config = inverse_run
    sur = Surrogate.load(run)
    ds = load_dataset(data)
    test = sur.run_info["splits"]["test"]
    items = make_dataset(ds, config, indices=test, resolution=N, coarse=N_COARSE,
                         input_normalizer=sur.operator.input_normalizer, in_memory=True)
    noisy = np.stack([items[i]["input"][..., 0].numpy() for i in range(len(items))])
    target = np.stack([items[i]["target"][..., 0].numpy() for i in range(len(items))])
    pred = sur.solve(noisy.astype(np.float64))
    rel = np.linalg.norm((pred - target).reshape(len(pred), -1), axis=1) / np.linalg.norm(
        target.reshape(len(pred), -1), axis=1)
    reference = evaluate_run(run, data)["rel_l2"]
    np.testing.assert_allclose(rel, reference, rtol=1e-5)


def test_evaluation_on_a_grid_whose_target_cannot_be_pooled_names_the_grids_that_can(
        inverse_run):
    """15 is reachable from the file's 29, but the model maps it to a coarse grid that the
    coefficient cannot be strided to: the error names the user's resolution, the model's coarse
    grid and the resolutions that work, not the derived grid as if the user had asked for it."""
    run, data, _ = inverse_run
    model = Surrogate.load(run).operator.model
    n_c = int(model.output_size(15))
    assert 14 % (n_c - 1) != 0  # the case this test is about
    with pytest.raises(ConfigError) as info:
        evaluate_run(run, data, resolution=15)
    msg = str(info.value)
    assert msg.startswith("`resolution` must give an inverse-problem target grid")
    assert f"n_f=15 to n_c={n_c}" in msg
    assert msg.endswith("got 15.")
    listed = [int(v) for v in msg.split("that do: [")[1].split("]")[0].split(", ")]
    assert N in listed
    for n in listed:  # each listed grid evaluates (the run's 4 test samples)
        assert np.isfinite(evaluate_run(run, data, resolution=n)["rel_l2"]).all()


def test_xarray_in_gives_the_coarse_coordinates_out(inverse_run):
    run, data, _ = inverse_run
    u = load_dataset(data)["u"].isel(sample=slice(0, 2)).load()
    a = Surrogate.load(run).solve(u)
    assert isinstance(a, xr.DataArray)
    assert a.name == "a"
    assert a.dims == ("sample", "x", "y")
    assert a.shape == (2, N_COARSE, N_COARSE)
    np.testing.assert_array_equal(a["sample"].values, u["sample"].values)
    np.testing.assert_allclose(a["x"].values, np.linspace(0, 1, N_COARSE))


def test_resample_interpolates_to_the_input_grid_and_accepts_other_grids(inverse_run):
    run, data, _ = inverse_run
    sur = Surrogate.load(run)
    u = load_dataset(data)["u"].values[:2]
    coarse = sur.solve(u)
    fine = sur.solve(u, resample=True)
    assert fine.shape == u.shape
    np.testing.assert_allclose(fine[:, ::4, ::4], coarse, rtol=1e-10)  # nodes shared by both grids
    with pytest.raises(ShapeError, match="Pass resample=True"):
        sur.solve(u[:, ::2, ::2])
    assert sur.solve(u[:, ::2, ::2], resample=True).shape == (2, 15, 15)


def test_out_of_distribution_check_works_on_the_observed_solution(inverse_run):
    run, data, _ = inverse_run
    sur = Surrogate.load(run)
    u = load_dataset(data)["u"].values[12:16]
    with warnings.catch_warnings():
        warnings.simplefilter("error", OODWarning)
        sur.solve(u)
    with pytest.warns(OODWarning, match="out-of-distribution"):
        sur.solve(40.0 * u)


def test_noise_level_comes_from_the_run(inverse_run):
    run, data, config = inverse_run
    sur = Surrogate.load(run)
    assert sur.noise == config.noise
    u = load_dataset(data)["u"].values
    level = sur.relative_noise_level(u[12:16])
    want = paper_noise_to_relative(config.noise, u[:12], observed=u[12:16])
    np.testing.assert_allclose(level, want, rtol=1e-3)


def test_noise_level_converts_on_other_grids(inverse_run):
    run, data, config = inverse_run
    sur = Surrogate.load(run)
    u = load_dataset(data)["u"].values
    fine = resample_nodes(u[12:16], 2 * N - 1, order=1)  # 57 nodes, interpolated
    level = sur.relative_noise_level(fine)
    np.testing.assert_allclose(level, sur.relative_noise_level(u[12:16]), rtol=0.05)
    with pytest.raises(ShapeError, match="square node grids"):
        sur.relative_noise_level(u[12:16, :, :-1])


def test_reference_solver_is_the_classical_inversion_of_the_training_data(inverse_run):
    run, _, _ = inverse_run
    solver = Surrogate.load(run).reference_solver()
    assert isinstance(solver, DarcyInverseSolver)
    assert solver.forcing == 1.0
    assert solver.averaging == "harmonic"


def test_compare_on_the_inverse_problem_reports_three_answers_against_the_truth(inverse_run):
    from neuralop_fem import compare

    run, data, config = inverse_run
    sur = Surrogate.load(run)
    ds = load_dataset(data)
    test = sur.run_info["splits"]["test"][:2]
    u = ds["u"].values[test]
    noisy = u + config.noise * sur.noise_std() * np.random.default_rng(0).standard_normal(u.shape)
    noisy[:, [0, -1], :] = 0.0
    noisy[:, :, [0, -1]] = 0.0
    truth = ds["a"].values[test]
    solver = sur.reference_solver()
    out = compare(solver, sur, noisy, reference_solution=truth, warm_start=True, keep_fields=True)
    assert list(out["approach"].values) == ["surrogate", "classical", "warm_started"]
    # the numbers are what they claim: recompute the classical inversion's error independently
    a_cl = solver.solve(noisy, noise_level=sur.relative_noise_level(noisy))
    want = np.linalg.norm((a_cl - truth).reshape(2, -1), axis=1) / np.linalg.norm(
        truth.reshape(2, -1), axis=1)
    np.testing.assert_allclose(out["rel_l2"].sel(approach="classical").values, want, rtol=1e-10)
    assert (out["pde_solves"].sel(approach="surrogate") == 0).all()
    assert (out["pde_solves"].sel(approach="classical") > 0).all()
    warm = out["time"].sel(approach="warm_started").values
    assert (warm >= out["time"].sel(approach="surrogate").values).all()  # includes inference
    assert out["coefficient"].shape == (3, 2, N, N)
    with pytest.raises(ValueError, match="true coefficient"):
        compare(solver, sur, noisy)
    # an explicit noise level reaches the inversion's discrepancy principle
    loose = compare(solver, sur, noisy, reference_solution=truth, warm_start=False,
                    noise_level=0.2, keep_fields=True)
    a_loose = solver.solve(noisy, noise_level=0.2)
    np.testing.assert_allclose(loose["coefficient"].sel(approach="classical").values, a_loose)
    assert (loose["pde_solves"].sel(approach="classical").values
            <= out["pde_solves"].sel(approach="classical").values).all()


def test_warm_start_snapped_to_two_phases(inverse_run):
    from neuralop_fem import compare

    run, data, _ = inverse_run
    sur = Surrogate.load(run)
    ds = load_dataset(data)
    test = sur.run_info["splits"]["test"][:2]
    u, truth = ds["u"].values[test], ds["a"].values[test]
    solver = sur.reference_solver()
    out = compare(solver, sur, u, reference_solution=truth, warm_start=True,
                  warm_phases=(3.0, 12.0), keep_fields=True)
    assert out.attrs["warm_phases"] == "3 / 12"
    # the warm start is the inversion from the surrogate's answer snapped at the midpoint 7.5
    fine = out["coefficient"].sel(approach="surrogate").values
    start = np.where(fine > 7.5, 12.0, 3.0)
    want = solver.solve(u, initial_guess=start, noise_level=sur.relative_noise_level(u))
    np.testing.assert_allclose(out["coefficient"].sel(approach="warm_started").values, want)
    assert not np.allclose(start, fine)  # the snap changed the start
    plain = compare(solver, sur, u, reference_solution=truth, warm_start=True)
    assert plain.attrs["warm_phases"] == "none"
    for bad, match in (((12.0, 3.0), "0 < low < high"), ((3.0,), "0 < low < high"),
                       ((0.0, 3.0), "0 < low < high"), (("3", 12.0), "0 < low < high")):
        with pytest.raises(InputError, match=match):
            compare(solver, sur, u, reference_solution=truth, warm_start=True, warm_phases=bad)
    from neuralop_fem.evaluation.inverse_comparison import compare_inverse

    with pytest.raises(InputError, match="`threshold` must lie between"):
        compare_inverse(solver, sur, u, truth=truth, warm_phases=(3.0, 12.0), threshold=20.0)


def test_evaluate_and_compare_commands_accept_inverse_runs(inverse_run, tmp_path, capsys):
    from neuralop_fem.cli import main

    run, data, _ = inverse_run
    assert main(["evaluate", str(run), "--data", str(data)]) == 0
    assert "darcy-inverse-galerkin: 4 samples at n=29" in capsys.readouterr().out
    out = tmp_path / "report"
    assert main(["compare", str(run), "--data", str(data), "--out", str(out),
                 "--max-samples", "2"]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["comparison.nc", "inverse_coefficients.png", "misfit_vs_solves.png",
                     "summary.md"]
    text = (out / "summary.md").read_text()
    assert "classical inversion" in text
    assert "Warm start:" in text
    snapped = tmp_path / "report-snapped"
    assert main(["compare", str(run), "--data", str(data), "--out", str(snapped),
                 "--max-samples", "2", "--snap-warm-start"]) == 0
    assert "Warm start (from the surrogate snapped to 3 / 12):" in (
        snapped / "summary.md").read_text()
    saved = xr.open_dataset(out / "comparison.nc")
    assert saved.sizes["approach"] == 3
    assert saved.sizes["sample"] == 2
    saved.close()


def test_test_split_is_what_training_saw(inverse_run):
    run, data, config = inverse_run
    sur = Surrogate.load(run)
    u_obs, a_true = sur.test_split(data)
    ds = load_dataset(data)
    test = sur.run_info["splits"]["test"]
    items = make_dataset(ds, config, indices=test, resolution=N, coarse=N_COARSE,
                         input_normalizer=sur.operator.input_normalizer, in_memory=True)
    seen = np.stack([items[i]["input"][..., 0].numpy() for i in range(len(items))])
    # the same noise draws; training stores float32
    np.testing.assert_allclose(u_obs.values, seen, rtol=0, atol=4 * np.finfo(np.float32).eps
                               * float(np.abs(seen).max()))
    np.testing.assert_array_equal(a_true.values, ds["a"].values[test])
    assert u_obs.dims == ("sample", "x", "y")
    np.testing.assert_array_equal(u_obs["sample"].values, ds["sample"].values[test])
    assert sur.test_split(data, max_samples=1)[0].shape == (1, N, N)
    with pytest.raises(InputError, match="`max_samples` must be None or an int >= 1"):
        sur.test_split(data, max_samples=0)
    with pytest.raises(InputError, match=r"an int >= 1; got 0\.$"):  # not np.int64(0)
        sur.test_split(data, max_samples=np.int64(0))


def test_noisy_observations_follow_the_training_formula(inverse_run):
    run, data, config = inverse_run
    sur = Surrogate.load(run)
    u = load_dataset(data)["u"].values[:3]
    obs = sur.noisy_observations(u, rng=np.random.default_rng(7))
    z = np.random.default_rng(7).standard_normal(u.shape)
    np.testing.assert_allclose(obs, u + config.noise * sur.noise_std() * z, rtol=1e-12)
    # the run's own draws: sample k from SeedSequence([seed, k])
    own = sur.noisy_observations(u[1], sample_ids=np.int64(1))
    z1 = np.random.default_rng(np.random.SeedSequence([config.seed, 1])).standard_normal((N, N))
    np.testing.assert_allclose(own, u[1] + config.noise * sur.noise_std() * z1, rtol=1e-12)
    # and the relative level that noise has is what the classical inversion is given
    noise = obs - u
    level = np.linalg.norm(noise[:, 1:-1, 1:-1].reshape(3, -1), axis=1) / np.linalg.norm(
        u[:, 1:-1, 1:-1].reshape(3, -1), axis=1)
    np.testing.assert_allclose(level, sur.relative_noise_level(u), rtol=0.15)
    with pytest.raises(InputError, match="Give exactly one of `sample_ids`"):
        sur.noisy_observations(u)
    with pytest.raises(InputError, match="Give exactly one of `sample_ids`"):
        sur.noisy_observations(u, sample_ids=[0, 1, 2], rng=np.random.default_rng(0))
    with pytest.raises(InputError, match="`sample_ids` must be 3 dataset sample indices"):
        sur.noisy_observations(u, sample_ids=[0, 1])


class _NegativeCandidate:
    """A candidate whose coefficient dips below 0 (as a briefly trained model's can)."""

    problem = "darcy-inverse"

    def __init__(self, truth):
        self.truth = truth

    def solve(self, u):
        out = self.truth.copy()
        out[:, 10:14, 10:14] = -1.0
        return out


def test_compare_scores_a_negative_candidate_and_starts_from_its_admissible_part(inverse_run):
    from neuralop_fem.evaluation.inverse_comparison import compare_inverse
    from solvers.darcy_inverse import admissible_start

    run, data, _ = inverse_run
    sur = Surrogate.load(run)
    u, truth = sur.test_split(data, max_samples=2)
    solver = DarcyInverseSolver(maxiter=5)
    out = compare_inverse(solver, _NegativeCandidate(truth.values), u, truth=truth,
                          noise_level=0.01, keep_fields=True)
    assert np.isnan(out["misfit"].sel(approach="surrogate").values).all()
    assert (out["rel_l2"].sel(approach="surrogate").values > 0).all()
    start = admissible_start(out["coefficient"].sel(approach="surrogate").values)
    want = solver.solve(u.values, initial_guess=start, noise_level=0.01)
    np.testing.assert_allclose(out["coefficient"].sel(approach="warm_started").values, want)


def test_the_verdict_reports_no_saving_between_runs_cut_by_the_cap(inverse_run):
    from neuralop_fem.evaluation.inverse_comparison import compare_inverse
    from neuralop_fem.evaluation.inverse_report import inverse_summary_markdown

    run, data, _ = inverse_run
    sur = Surrogate.load(run)
    u, truth = sur.test_split(data, max_samples=2)
    out = compare_inverse(DarcyInverseSolver(maxiter=1), sur, u, truth=truth)
    assert (out["stop_reason"].sel(approach="classical").values == "maxiter").all()
    assert out.attrs["comparable_samples"] == 0
    assert out.attrs["classical_at_cap"] == 2
    assert np.isnan(out.attrs["solve_ratio"])
    text = inverse_summary_markdown(out, title="t")
    assert "no saving in PDE solves is reported" in text
    assert "the classical inversion in 2 of 2 samples" in text
    assert "fewer PDE solves" not in text
    assert "more PDE solves" not in text
    # with room to reach the stopping rule the saving is reported over the samples that did
    roomy = compare_inverse(DarcyInverseSolver(maxiter=200), sur, u, truth=truth)
    same = int(roomy.attrs["comparable_samples"])
    assert same >= 1
    text = inverse_summary_markdown(roomy, title="t")
    ratio = roomy.attrs["solve_ratio"]
    assert (f"{ratio:.2f}x fewer PDE solves" if ratio >= 1 else
            f"{1 / ratio:.2f}x more PDE solves") in text
    stops = roomy["stop_reason"].values
    keep = (stops[1] == stops[2]) & np.isin(stops[1], ["discrepancy", "misfit_tol"])
    solves = roomy["equivalent_solves"].values[:, keep]
    assert roomy.attrs["solve_ratio"] == pytest.approx(solves[1].sum() / solves[2].sum())
    # where the iterations are: the observation grid's, over the same samples
    its = roomy["iterations"].values[:, keep].mean(axis=1)
    assert roomy.attrs["classical_comparable_iterations"] == pytest.approx(its[1])
    assert roomy.attrs["warm_started_comparable_iterations"] == pytest.approx(its[2])
    assert "| L-BFGS-B iterations on the observation grid | 0.0 |" in text
    explained = ratio > 1 > roomy.attrs["time_ratio"] and its[2] > its[1]
    assert ("Fewer solves but more time" in text) == explained
    if explained:
        assert f"({its[2]:.1f} on average against {its[1]:.1f} there" in text


def _cli(*args):
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "neuralop_fem.cli", *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=600)


def test_compare_command_on_an_inverse_run_with_maxiter_and_a_direct_solver(inverse_run,
                                                                            tmp_path):
    run, data, _ = inverse_run
    out = tmp_path / "report"
    proc = _cli("compare", run, "--data", data, "--out", out, "--max-samples", "2",
                "--maxiter", "1", "--linear-solver", "direct", "--snap-warm-start")
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = (out / "summary.md").read_text()
    assert "no saving in PDE solves is reported" in text
    assert "Stopped at the iteration cap (maxiter)" in text
    saved = xr.open_dataset(out / "comparison.nc")
    assert set(saved["stop_reason"].sel(approach="classical").values) == {"maxiter"}
    saved.close()
    bad = _cli("compare", run, "--data", data, "--out", tmp_path / "r2", "--maxiter", "0")
    assert bad.returncode == 2
    assert "--maxiter" in bad.stderr
    assert "Traceback" not in bad.stderr


@pytest.mark.parametrize("level", [5, True, [0.01, 2.0]])
def test_compare_refuses_a_noise_level_in_percent_or_a_bool(inverse_run, level):
    from neuralop_fem.evaluation.inverse_comparison import compare_inverse

    run, data, _ = inverse_run
    sur = Surrogate.load(run)
    u, truth = sur.test_split(data, max_samples=2)
    with pytest.raises(InputError, match=r"`noise_level` must be (relative noise levels in "
                                         r"\[0, 1\) |a number .*)\(a fraction .*5 %\)"):
        compare_inverse(DarcyInverseSolver(), sur, u, truth=truth, noise_level=level)


def test_fewer_solves_but_more_time_is_explained_by_where_the_iterations_are():
    """The zoo model's measured case (16 samples): 1.31x fewer solves, 1.33x more time, all
    iterations of the warm start on the observation grid; no sentence when time fell too."""
    from neuralop_fem.evaluation.inverse_report import _fewer_solves_more_time

    attrs = {"solve_ratio": 1.31, "time_ratio": 1 / 1.33,
             "classical_comparable_iterations": 3.0, "warm_started_comparable_iterations": 28.0}
    text = _fewer_solves_more_time(xr.Dataset(attrs=attrs))
    assert text.startswith(" Fewer solves but more time")
    assert "(28.0 on average against 3.0 there" in text
    for change in ({"time_ratio": 1.1}, {"solve_ratio": 0.9},
                   {"warm_started_comparable_iterations": 2.0}, {"time_ratio": float("nan")}):
        assert _fewer_solves_more_time(xr.Dataset(attrs={**attrs, **change})) == ""
