"""Warm starts, deflated CG and SurrogatePolicy with crafted predictions."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import xarray as xr

from neuralop_fem.errors import ConvergenceError, InputError
from neuralop_fem.surrogate.warmstart import (
    SurrogatePolicy,
    deflated_pcg,
    discrete_systems,
    measure_warm_start,
    relative_residual,
)
from solvers.darcy import DarcyFDSolver, DarcyFEMSolver
from solvers.grf import NeumannGRF, threshold


@pytest.fixture
def problem(rng):
    a = threshold(NeumannGRF(33).sample(2, rng=rng))
    solver = DarcyFDSolver(linear_solver="cg")
    return solver, a, solver.solve(a)


def _smooth_bump(n):
    x = np.linspace(0, 1, n)
    return np.sin(np.pi * x)[:, None] * np.sin(2 * np.pi * x)[None, :]


class Fixed:
    """A crafted surrogate that returns given predictions."""

    def __init__(self, pred):
        self.pred = pred

    def solve(self, a):
        return self.pred


@pytest.mark.parametrize("solver", [DarcyFDSolver(linear_solver="cg"), DarcyFDSolver(),
                                    DarcyFEMSolver(linear_solver="cg")])
def test_exact_discrete_solution_takes_zero_iterations(rng, solver):
    a = threshold(NeumannGRF(33).sample(2, rng=rng))
    u = solver.solve(a)
    _, rep = solver.solve_with_report(a, initial_guess=u)
    np.testing.assert_array_equal(rep.iterations, 0)
    assert (relative_residual(solver, a, u) <= solver.tol).all()


@pytest.mark.parametrize("linear_solver", ["cg", "gmg"])
def test_near_exact_prediction_needs_fewer_iterations(problem, linear_solver):
    solver, a, u = problem
    solver = dataclasses.replace(solver, linear_solver=linear_solver)
    guess = u + 1e-4 * u.max() * _smooth_bump(33)  # a smooth 1e-4 relative error
    _, zero = solver.solve_with_report(a)
    _, warm = solver.solve_with_report(a, initial_guess=guess)
    assert (warm.iterations < zero.iterations).all(), (warm.iterations, zero.iterations)


def test_deflated_pcg_converges_and_is_exact_for_the_solution(problem):
    solver, a, u = problem
    solver = dataclasses.replace(solver, linear_solver="cg", maxiter=500)
    (a_mat, b), _ = discrete_systems(solver, a)
    x, its, res = deflated_pcg(solver, a_mat, b, u[0, 1:-1, 1:-1].ravel(), n=33)
    assert its == 0  # the Galerkin projection onto span{u} is u itself
    assert res <= 1e-10
    w = (u[0] + 0.05 * u.max() * _smooth_bump(33))[1:-1, 1:-1].ravel()
    x, its, res = deflated_pcg(solver, a_mat, b, w, n=33)
    assert 0 < its < 500
    assert res <= 1e-10
    # converged to 1e-10 residual: agrees with the solver's solution to ~cond * 1e-10
    np.testing.assert_allclose(x, u[0, 1:-1, 1:-1].ravel(), rtol=1e-6, atol=1e-10)


def test_measure_warm_start_table(problem):
    solver, a, u = problem
    pred = u + 1e-3 * u.max() * _smooth_bump(33)
    ds = measure_warm_start(solver, a, pred, tolerances=(1e-4, 1e-8))
    assert ds["iterations"].dims == ("variant", "tol", "sample")
    _, zero = dataclasses.replace(solver, tol=1e-8).solve_with_report(a)
    np.testing.assert_array_equal(ds["iterations"].sel(variant="zero", tol=1e-8), zero.iterations)
    assert (ds["residual"] <= ds["tol"]).all()
    assert (ds["iterations"].sel(variant="warm") < ds["iterations"].sel(variant="zero")).all()


def test_policy_accepts_exact_prediction(problem):
    solver, a, u = problem
    out, rec = SurrogatePolicy(Fixed(u), solver).solve(a)
    assert list(rec["decision"].values) == ["accept", "accept"]
    np.testing.assert_array_equal(out, u)
    np.testing.assert_array_equal(rec["iterations"].values, 0)


def test_policy_warm_starts_poor_prediction(problem):
    solver, a, u = problem
    out, rec = SurrogatePolicy(Fixed(1.1 * u), solver).solve(a)
    assert list(rec["decision"].values) == ["warm_start", "warm_start"]
    assert (rec["surrogate_residual"] > 1e-2).all()
    assert (rec["residual"] <= solver.tol).all()
    np.testing.assert_allclose(out, u, rtol=1e-6, atol=1e-12)  # both solved to 1e-10


def test_policy_solves_from_scratch_when_the_prediction_is_worse_than_zero(problem):
    solver, a, u = problem
    bad = -3.0 * u  # residual ||b + 3 A u|| / ||b|| = 4 > 1, the zero start's
    out, rec = SurrogatePolicy(Fixed(bad), solver).solve(a)
    assert (rec["surrogate_residual"].values > 1).all()
    assert list(rec["decision"].values) == ["scratch", "scratch"]
    _, zero = solver.solve_with_report(a)
    np.testing.assert_array_equal(rec["iterations"].values, zero.iterations)


def test_policy_solves_from_scratch_for_nan_prediction(problem):
    solver, a, u = problem
    pred = u.copy()
    pred[1, 4, 4] = np.nan
    out, rec = SurrogatePolicy(Fixed(pred), solver).solve(a)
    assert list(rec["decision"].values) == ["accept", "scratch"]
    assert np.isnan(rec["surrogate_residual"][1])
    np.testing.assert_allclose(out[1], u[1], rtol=1e-6, atol=1e-12)


class WarmStartFails(DarcyFDSolver):
    """A solver whose warm starts diverge (to test the fallback)."""

    def solve_with_report(self, inputs, *, initial_guess=None, forcing=None):
        if initial_guess is not None:
            msg = "diverged"
            raise ConvergenceError(msg)
        return super().solve_with_report(inputs)


def test_policy_falls_back_to_scratch_when_warm_start_fails(problem):
    _, a, u = problem
    out, rec = SurrogatePolicy(Fixed(2 * u), WarmStartFails(linear_solver="cg")).solve(a)
    assert list(rec["decision"].values) == ["scratch", "scratch"]
    np.testing.assert_allclose(out, u, rtol=1e-6, atol=1e-12)


def test_policy_xarray_in_xarray_out(problem):
    solver, a, u = problem
    da = xr.DataArray(a, dims=("sample", "x", "y"))
    out, _ = SurrogatePolicy(Fixed(u), solver).solve(da)
    assert isinstance(out, xr.DataArray)
    assert out.dims == ("sample", "x", "y")


def test_policy_bad_threshold(problem):
    solver, _, u = problem
    with pytest.raises(InputError, match="`accept_residual` must be a relative residual in"):
        SurrogatePolicy(Fixed(u), solver, accept_residual=2.0)
    # a numpy number prints as a number, not as np.float64(2.0)
    with pytest.raises(InputError, match=r"in \(0, 1\); got 2\.0\.$"):
        SurrogatePolicy(Fixed(u), solver, accept_residual=np.float64(2.0))
    assert SurrogatePolicy(Fixed(u), solver, accept_residual=np.float32(1e-3)).accept_residual \
        == pytest.approx(1e-3)


def test_policy_needs_a_darcy_grid_solver(problem):
    _, _, u = problem
    with pytest.raises(InputError, match="`solver` must be a DarcyFDSolver or DarcyFEMSolver"):
        SurrogatePolicy(Fixed(u), object())


def test_measure_rejects_unknown_variant(problem):
    solver, a, u = problem
    with pytest.raises(InputError, match="`variants` must be a subset"):
        measure_warm_start(solver, a, u, tolerances=(1e-6,), variants=("magic",))


@pytest.fixture(scope="module")
def trained_darcy(tmp_path_factory):
    """A small FNO trained for real on 160 generated Darcy samples at n = 29 (about 30 s)."""
    import torch

    from neuralop_fem.data import generate
    from neuralop_fem.models import PRESETS
    from neuralop_fem.training import TrainConfig, Trainer

    tmp = tmp_path_factory.mktemp("trained_darcy")
    data = generate("darcy", n_samples=180, resolution=29, seed=5, out=tmp / "d29.nc", workers=0)
    config = TrainConfig(task="darcy", epochs=25, batch_size=8, n_train=160, n_val=10, n_test=10,
                         gamma=0.5, lr_max=3e-3)
    model = PRESETS["darcy-fno"].replace(width=16, modes=12, num_layers=4, projection=32)
    torch.manual_seed(0)
    result = Trainer(tmp / "run", data, model_config=model, config=config).fit()
    return tmp / "run", data, result


def test_trained_surrogate_saves_iterations_on_benchmark_samples(trained_darcy):
    from neuralop_fem.data import load_dataset
    from neuralop_fem.surrogate import Surrogate
    from neuralop_fem.training import read_run_info

    run_dir, data, result = trained_darcy
    # The surrogate learned something (an untrained one is at relative error ~1).
    assert result["test_rel_l2_best"] < 0.08, result["test_rel_l2_best"]
    surrogate = Surrogate.load(run_dir)
    test = load_dataset(data).isel(sample=read_run_info(run_dir)["splits"]["test"])
    a = np.asarray(test["a"].values)
    prediction = np.asarray(surrogate.solve(a), dtype=np.float64)
    table = measure_warm_start(DarcyFDSolver(), a, prediction, tolerances=(1e-4, 1e-6, 1e-8),
                               variants=("zero", "warm"))
    zero = table["iterations"].sel(variant="zero").values
    warm = table["iterations"].sel(variant="warm").values
    # Default geometric-multigrid CG on the 10 held-out samples: never more iterations from the
    # prediction, fewer on average at every tolerance; both reach the tolerance.
    assert (warm <= zero).all(), (zero, warm)
    assert (warm.mean(axis=1) < zero.mean(axis=1)).all(), (zero.mean(axis=1), warm.mean(axis=1))
    tol = table["tol"].values[:, None]
    assert (table["residual"].values <= tol * (1 + 1e-9)).all()
