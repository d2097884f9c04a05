"""The torch FD Darcy solver: exact on quadratics, second order, agreement with the numpy solver
to its tolerance (residual measured with the numpy operator); contract and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from neuralop_fem.problems.twins import twin_of
from neuralop_fem.torch_solvers import TorchDarcyFDSolver
from solvers._darcy_linear import rounding_floor
from solvers.darcy import DarcyFDSolver, DarcyFEMSolver
from solvers.errors import ConvergenceError, InputError, ShapeError
from solvers.exact_darcy import QuadraticDarcyProblem, SmoothDarcyProblem, node_grid
from solvers.grf import NeumannGRF, threshold
from tests.helpers import assert_order

SIZES = [9, 17, 33, 65]  # h = 1/8 ... 1/64


def _benchmark_coefficient(n: int, n_samples: int, seed: int = 0) -> np.ndarray:
    return threshold(NeumannGRF(n).sample(n_samples, rng=np.random.default_rng(seed)))


def _condition_bound(a: np.ndarray) -> float:
    """An upper bound of the condition number of the scaled 5-point matrix ``h^2 A(a)``:
    Gershgorin gives ``lambda_max <= 8 max a``, and ``lambda_min >= min a`` times the smallest
    eigenvalue ``2 (2 - 2 cos(pi / (n - 1)))`` of the unit-coefficient Laplacian."""
    n = a.shape[-1]
    lam_min = 2 * (2 - 2 * np.cos(np.pi / (n - 1)))
    return 8 * float(a.max()) / (float(a.min()) * lam_min)


def test_exact_for_a_quadratic_solution(device):
    problem = QuadraticDarcyProblem(coefficient_value=3.0)
    x, y = node_grid(17)
    a = problem.coefficient(x, y)
    tol = 1e-12
    u, report = TorchDarcyFDSolver(tol=tol, device=device).solve_with_report(
        a, forcing=problem.forcing(x, y))
    exact = problem.solution(x, y)
    assert report.residual[0] <= tol
    # the stencil is exact on quadratics: the error is the linear solve's, at most
    # cond(h^2 A) * relative residual in norm
    err = np.linalg.norm(u - exact) / np.linalg.norm(exact)
    assert err <= _condition_bound(a) * tol, err


@pytest.mark.parametrize("averaging", ["harmonic", "arithmetic"])
def test_second_order_for_a_smooth_coefficient(device, averaging):
    problem = SmoothDarcyProblem()
    solver = TorchDarcyFDSolver(averaging=averaging, tol=1e-12, device=device)
    h, err = [], []
    for n in SIZES:
        x, y = node_grid(n)
        u = solver.solve(problem.coefficient(x, y), forcing=problem.forcing(x, y))
        h.append(1 / (n - 1))
        err.append(np.sqrt(np.mean((u - problem.solution(x, y)) ** 2)))
    assert_order(h, err, expected=2.0, tol=0.1)  # the numpy solver's test and tolerance


@pytest.mark.parametrize("n", [29, 43])
def test_agrees_with_the_numpy_solver_to_its_tolerance(device, n):
    a = _benchmark_coefficient(n, 4, seed=n)
    tol = 1e-10
    ref = DarcyFDSolver(tol=tol).solve(a)  # geometric multigrid CG
    u, report = TorchDarcyFDSolver(tol=tol, device=device).solve_with_report(a)
    # residual measured with the numpy solver's own assembled operator
    for s, (a_mat, b) in enumerate(DarcyFDSolver(tol=tol).systems(a)):
        x = u[s, 1:-1, 1:-1].ravel()
        measured = np.linalg.norm(b - a_mat @ x) / np.linalg.norm(b)
        # the two evaluations of the residual differ by rounding (at most ~ rounding_floor)
        assert measured <= tol + 10 * rounding_floor(a_mat, x, b), (s, measured)
        assert abs(measured - report.residual[s]) <= 10 * rounding_floor(a_mat, x, b)
        # two solutions of the same system with relative residuals <= tol
        diff = np.linalg.norm(u[s] - ref[s]) / np.linalg.norm(ref[s])
        assert diff <= 2 * _condition_bound(a[s]) * tol, (s, diff)
    assert ((report.iterations >= 10) & (report.iterations <= 40)).all(), report.iterations


def test_iterations_do_not_grow_with_the_grid():
    its = [TorchDarcyFDSolver().solve_with_report(_benchmark_coefficient(n, 2, seed=1))[1]
           .iterations.max() for n in (17, 65, 129)]
    # preconditioned condition number <= contrast 4, whatever n
    assert max(its) - min(its) <= 6, its


def test_batches_single_sample_and_xarray():
    a = _benchmark_coefficient(17, 5, seed=2)
    whole = TorchDarcyFDSolver().solve(a)
    split, report = TorchDarcyFDSolver(batch_size=2).solve_with_report(a)
    np.testing.assert_allclose(split, whole, rtol=0, atol=1e-14)
    assert report.iterations.shape == report.residual.shape == report.solve_time.shape == (5,)
    one = TorchDarcyFDSolver().solve(a[3])
    assert one.shape == (17, 17)
    np.testing.assert_allclose(one, whole[3], rtol=0, atol=1e-14)
    da = xr.DataArray(a.transpose(0, 2, 1), dims=("sample", "y", "x"))
    out = TorchDarcyFDSolver().solve(da)
    assert out.dims == ("sample", "y", "x")
    assert out.name == "u"
    np.testing.assert_allclose(out.transpose("sample", "x", "y").values, whole, rtol=0,
                               atol=1e-14)


def test_warm_start_from_the_solution_takes_no_iterations():
    a = _benchmark_coefficient(17, 2, seed=3)
    solver = TorchDarcyFDSolver()
    u = solver.solve(a)
    again, report = solver.solve_with_report(a, initial_guess=u)
    assert (report.iterations == 0).all()
    np.testing.assert_array_equal(again, u)


def test_config_rebuilds_and_twin_of_takes_the_settings():
    numpy_solver = DarcyFDSolver(forcing=2.0, averaging="arithmetic", tol=1e-8, maxiter=50)
    twin = twin_of(numpy_solver, device="cpu")
    assert isinstance(twin, TorchDarcyFDSolver)
    assert (twin.forcing, twin.averaging, twin.tol, twin.maxiter) == (2.0, "arithmetic", 1e-8, 50)
    assert TorchDarcyFDSolver(**twin.config) == twin
    with pytest.raises(InputError, match="no torch twin"):
        twin_of(DarcyFEMSolver(), device="cpu")


def test_bad_inputs_and_settings():
    solver = TorchDarcyFDSolver()
    a = np.ones((2, 9, 9))
    a[1, 4, 4] = 0.0
    with pytest.raises(InputError, match="> 0 everywhere"):
        solver.solve(a)
    a[1, 4, 4] = np.nan
    with pytest.raises(InputError, match="finite"):
        solver.solve(a)
    with pytest.raises(ShapeError, match="square"):
        solver.solve(np.ones((2, 9, 8)))
    with pytest.raises(ShapeError, match="initial_guess"):
        solver.solve(np.ones((2, 9, 9)), initial_guess=np.zeros((9, 9)))
    for kwargs, match in (({"tol": 0.0}, "tol"), ({"averaging": "geometric"}, "averaging"),
                          ({"device": "tpu"}, "device"), ({"batch_size": -1}, "batch_size")):
        with pytest.raises(InputError, match=match):
            TorchDarcyFDSolver(**kwargs)


def test_missed_tolerance_names_the_sample():
    a = _benchmark_coefficient(33, 3, seed=4)
    with pytest.raises(ConvergenceError, match=r"sample 0 missed the tolerance.*maxiter"):
        TorchDarcyFDSolver(maxiter=3).solve(a)
