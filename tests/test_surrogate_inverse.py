"""Inverse-problem surrogates in scripts: a trained darcy-inverse run behind Surrogate.solve."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xarray as xr

from neuralop_fem import Surrogate
from neuralop_fem.data import generate, load_dataset
from neuralop_fem.errors import InputError, ShapeError
from neuralop_fem.evaluation import evaluate_run
from neuralop_fem.models import PRESETS
from neuralop_fem.surrogate import OODWarning
from neuralop_fem.surrogate.resample import resample_nodes
from neuralop_fem.training import TrainConfig, Trainer
from neuralop_fem.training.setup import make_dataset
from solvers import DarcyInverseSolver
from solvers.darcy_inverse import paper_noise_to_relative

N, N_COARSE = 29, 8  # 29 -> 8 is the 141 -> 36 rule (coarse_ratio 0.25)


@pytest.fixture(scope="module")
def inverse_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("inverse")
    data = generate("darcy", n_samples=20, resolution=N, seed=5, out=tmp / "d.nc", workers=0,
                    progress=False)
    model = PRESETS["darcy-inverse-galerkin"].replace(d_model=12, num_layers=1, d_ff=16)
    config = TrainConfig(task="darcy-inverse", resolution=N, epochs=2, batch_size=4, gamma=0.0,
                         noise=0.01, n_train=12, n_val=4, n_test=4, seed=3)
    with Trainer(tmp / "run", data, model_config=model, config=config,
                 preset="darcy-inverse-galerkin") as trainer:
        trainer.fit()
    return tmp / "run", data, config


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
