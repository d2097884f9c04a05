"""The batched FD fast paths ("banded", "dst-cg") against the per-sample solvers."""

from __future__ import annotations

import numpy as np
import pytest

from solvers.darcy import DarcyFDSolver, DarcyFEMSolver
from solvers.errors import InputError
from solvers.exact_darcy import QuadraticDarcyProblem, SmoothDarcyProblem, node_grid
from solvers.grf import NeumannGRF, threshold
from tests.helpers import assert_order

FAST = ["banded", "dst-cg"]


def _coefficient(n: int, n_samples: int, seed: int = 0) -> np.ndarray:
    return threshold(NeumannGRF(n).sample(n_samples, rng=np.random.default_rng(seed)))


def _rel(u: np.ndarray, ref: np.ndarray) -> float:
    return float(np.linalg.norm(u - ref) / np.linalg.norm(ref))


def test_banded_equals_direct_to_rounding():
    a = _coefficient(29, 5)
    ref = DarcyFDSolver(linear_solver="direct").solve(a)
    u, report = DarcyFDSolver(linear_solver="banded", batch_size=2).solve_with_report(a)
    assert _rel(u, ref) < 1e-13  # both exact factorisations of the same SPD matrices
    np.testing.assert_array_equal(report.iterations, 1)
    assert (report.residual < 1e-12).all()  # eps times cond(A) ~ 1e3 at n = 29
    assert (report.solve_time > 0).all()


def test_dst_cg_meets_tolerance_and_agrees_with_gmg():
    a = _coefficient(37, 4)
    ref = DarcyFDSolver(linear_solver="direct").solve(a)
    gmg = DarcyFDSolver(linear_solver="gmg").solve(a)
    u, report = DarcyFDSolver(linear_solver="dst-cg", tol=1e-12).solve_with_report(a)
    assert (report.residual <= 1e-12).all()
    # contrast 4: the preconditioned condition number is <= 4, so ~20-30 iterations
    assert (report.iterations > 5).all()
    assert (report.iterations < 40).all()
    assert _rel(u, ref) < 1e-9
    assert _rel(u, gmg) < 1e-8


@pytest.mark.parametrize("method", FAST)
def test_batch_equals_one_at_a_time(method):
    a = _coefficient(21, 3, seed=3)
    solver = DarcyFDSolver(linear_solver=method)
    together = solver.solve(a)
    alone = np.stack([solver.solve(a[i]) for i in range(len(a))])
    np.testing.assert_allclose(together, alone, rtol=0, atol=1e-15 * np.abs(alone).max())


@pytest.mark.parametrize("method", FAST)
def test_exact_for_quadratic_solution(method):
    problem = QuadraticDarcyProblem(coefficient_value=3.0)
    x, y = node_grid(17)
    u = DarcyFDSolver(linear_solver=method, tol=1e-12).solve(
        problem.coefficient(x, y), forcing=problem.forcing(x, y))
    np.testing.assert_allclose(u, problem.solution(x, y), rtol=0, atol=1e-13)


def test_dst_cg_second_order_smooth_coefficient():
    problem = SmoothDarcyProblem()
    solver = DarcyFDSolver(linear_solver="dst-cg", tol=1e-12)
    h, err = [], []
    for n in (9, 17, 33, 65):
        x, y = node_grid(n)
        u = solver.solve(problem.coefficient(x, y), forcing=problem.forcing(x, y))
        h.append(1 / (n - 1))
        err.append(np.sqrt(np.mean((u - problem.solution(x, y)) ** 2)))
    assert_order(h, err, expected=2.0, tol=0.1)


@pytest.mark.parametrize("method", FAST)
def test_warm_start_from_exact_solution_takes_no_iterations(method):
    a = _coefficient(25, 2)
    exact = DarcyFDSolver(linear_solver="direct").solve(a)
    u, report = DarcyFDSolver(linear_solver=method).solve_with_report(a, initial_guess=exact)
    np.testing.assert_array_equal(report.iterations, 0)
    np.testing.assert_array_equal(u, exact)


def test_dst_cg_warm_start_saves_iterations():
    a = _coefficient(33, 2)
    solver = DarcyFDSolver(linear_solver="dst-cg")
    exact = solver.solve(a)
    _, cold = solver.solve_with_report(a)
    _, warm = solver.solve_with_report(a, initial_guess=exact * (1 + 1e-4))
    assert (warm.iterations < cold.iterations).all()


@pytest.mark.parametrize("method", FAST)
def test_single_system_path_agrees_with_direct(method):
    a = _coefficient(19, 1)
    solver = DarcyFDSolver(linear_solver=method, tol=1e-12)
    (a_mat, b), = solver.systems(a)
    x_ref, _, _ = DarcyFDSolver(linear_solver="direct").solve_system(a_mat, b, n=19)
    x, its, res = solver.solve_system(a_mat, b, n=19)
    assert res <= 1e-12
    assert its >= 1
    np.testing.assert_allclose(x, x_ref, rtol=0, atol=1e-9 * np.abs(x_ref).max())


def test_zero_forcing_gives_zero():
    u, report = DarcyFDSolver(linear_solver="dst-cg").solve_with_report(
        np.ones((2, 9, 9)), forcing=np.zeros((9, 9)))
    np.testing.assert_array_equal(u, 0.0)
    np.testing.assert_array_equal(report.iterations, 0)


def test_fem_refuses_batched_methods():
    with pytest.raises(InputError, match="`linear_solver` must be one of .* for DarcyFEMSolver"):
        DarcyFEMSolver(linear_solver="banded")
