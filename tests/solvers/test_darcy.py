"""Accuracy and invariants of the Darcy solvers (FD and P1/Q1 FEM) and their linear solvers."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import skfem
import xarray as xr

from solvers._darcy_fd import assemble_fd
from solvers._darcy_fem import grid_fem
from solvers.darcy import DarcyFDSolver, DarcyFEMSolver
from solvers.exact_darcy import QuadraticDarcyProblem, SmoothDarcyProblem, node_grid
from solvers.grf import NeumannGRF, threshold
from tests.helpers import assert_order

LINEAR_SOLVERS = ["gmg", "amg", "cg", "direct"]
SIZES = [9, 17, 33, 65]  # h = 1/8 ... 1/64: asymptotic regime already at h = 1/8


def _benchmark_coefficient(n: int, n_samples: int, seed: int = 0) -> np.ndarray:
    """Two-phase 12/3 coefficient from the benchmark GRF, (n_samples, n, n)."""
    field = NeumannGRF(n).sample(n_samples, rng=np.random.default_rng(seed))
    return threshold(field)


def _fem_errors(u: np.ndarray, n: int, element: str) -> tuple[float, float]:
    """Continuous L2 and H1-seminorm errors of the FEM solution against SmoothDarcyProblem."""
    problem = SmoothDarcyProblem()
    fem = grid_fem(n, element)
    uh = fem.basis.interpolate(u.ravel()[fem.grid_of_dof])

    @skfem.Functional
    def l2(w):
        return (w.uh - problem.solution(w.x[0], w.x[1])) ** 2

    @skfem.Functional
    def h1(w):
        gx, gy = problem.gradient(w.x[0], w.x[1])
        return (w.uh.grad[0] - gx) ** 2 + (w.uh.grad[1] - gy) ** 2

    l2_error = float(np.sqrt(l2.assemble(fem.basis, uh=uh)))
    h1_error = float(np.sqrt(h1.assemble(fem.basis, uh=uh)))
    return l2_error, h1_error


def test_fd_exact_for_quadratic_solution():
    problem = QuadraticDarcyProblem(coefficient_value=3.0)
    x, y = node_grid(17)
    a = problem.coefficient(x, y)
    u = DarcyFDSolver(linear_solver="direct").solve(a, forcing=problem.forcing(x, y))
    # 5-point stencil is exact on quadratics: only round-off (cond ~ 1e2 at n=17) remains.
    np.testing.assert_allclose(u, problem.solution(x, y), rtol=0, atol=1e-14)


@pytest.mark.parametrize("averaging", ["harmonic", "arithmetic"])
def test_fd_second_order_smooth_coefficient(averaging):
    problem = SmoothDarcyProblem()
    solver = DarcyFDSolver(averaging=averaging)
    h, err = [], []
    for n in SIZES:
        x, y = node_grid(n)
        u = solver.solve(problem.coefficient(x, y), forcing=problem.forcing(x, y))
        h.append(1 / (n - 1))
        err.append(np.sqrt(np.mean((u - problem.solution(x, y)) ** 2)))
    assert_order(h, err, expected=2.0, tol=0.1)  # clean O(h^2), no pre-asymptotic bend


@pytest.mark.parametrize("element", ["P1", "Q1"])
def test_fem_orders_smooth_coefficient(element):
    problem = SmoothDarcyProblem()
    solver = DarcyFEMSolver(element=element)
    h, e_l2, e_h1 = [], [], []
    for n in SIZES:
        x, y = node_grid(n)
        u = solver.solve(problem.coefficient(x, y), forcing=problem.forcing(x, y))
        l2, h1 = _fem_errors(u, n, element)
        h.append(1 / (n - 1))
        e_l2.append(l2)
        e_h1.append(h1)
    assert_order(h, e_l2, expected=2.0, tol=0.15)  # O(h^2) in L2 (Aubin-Nitsche)
    assert_order(h, e_h1, expected=1.0, tol=0.1)  # O(h) in the H1 seminorm


def test_p1_stiffness_equals_5_point_stencil_for_constant_coefficient():
    # Classical identity: P1 on right-angled triangles with a = const gives the 5-point matrix.
    n = 12
    a = np.full((n, n), 2.5)
    fem_mat, _ = grid_fem(n, "P1").assemble(a, 1.0)
    fd_mat = assemble_fd(a[None])[0]
    assert abs(fem_mat - fd_mat).max() < 1e-13  # entries are O(1): round-off only


@pytest.mark.parametrize("averaging", ["harmonic", "arithmetic"])
def test_fd_matrix_spd_and_m_matrix(averaging):
    a = _benchmark_coefficient(17, 1)
    mat = assemble_fd(a, averaging=averaging)[0]
    assert abs(mat - mat.T).max() == 0  # symmetric by construction, bit for bit
    off = mat - sp.diags(mat.diagonal())
    assert off.max() <= 0  # M-matrix: non-positive off-diagonals
    eigs = np.linalg.eigvalsh(mat.toarray())
    assert eigs.min() > 0


@pytest.mark.parametrize("element", ["P1", "Q1"])
def test_fem_matrix_spd(element):
    a = _benchmark_coefficient(13, 1)[0]
    mat, _ = grid_fem(13, element).assemble(a, 1.0)
    assert abs(mat - mat.T).max() < 1e-13  # quadrature sums in different order: round-off
    assert np.linalg.eigvalsh(mat.toarray()).min() > 0


@pytest.mark.parametrize(
    "solver",
    [DarcyFDSolver(), DarcyFDSolver(averaging="arithmetic"), DarcyFEMSolver(element="P1")],
    ids=["fd-harmonic", "fd-arithmetic", "fem-p1"],
)
def test_discrete_maximum_principle(solver):
    u = solver.solve(_benchmark_coefficient(33, 3))
    assert (u >= 0).all()
    assert (u[:, 1:-1, 1:-1] > 0).all()  # strictly positive inside for f = 1 > 0


@pytest.mark.parametrize("cls", [DarcyFDSolver, DarcyFEMSolver])
def test_linear_solvers_agree(cls):
    a = _benchmark_coefficient(33, 2)
    tol = 1e-10
    ref = cls(linear_solver="direct").solve(a)
    for name in ["gmg", "amg", "cg"]:
        u, report = cls(linear_solver=name, tol=tol).solve_with_report(a)
        assert (report.residual <= tol).all()
        assert (report.iterations > 0).all()
        # relative residual 1e-10 times cond(A) ~ 4e3 at n=33 bounds the relative error
        assert np.linalg.norm(u - ref) / np.linalg.norm(ref) < 1e-6
    _, direct_report = cls(linear_solver="direct").solve_with_report(a)
    np.testing.assert_array_equal(direct_report.iterations, 1)


@pytest.mark.parametrize("linear_solver", LINEAR_SOLVERS)
def test_warm_start_from_exact_solution_takes_no_iterations(linear_solver):
    a = _benchmark_coefficient(33, 2)
    exact = DarcyFDSolver(linear_solver="direct").solve(a)
    solver = DarcyFDSolver(linear_solver=linear_solver)
    u, report = solver.solve_with_report(a, initial_guess=exact)
    np.testing.assert_array_equal(report.iterations, 0)
    np.testing.assert_array_equal(u, exact)


def test_warm_start_reduces_iterations():
    a = _benchmark_coefficient(65, 1)
    solver = DarcyFDSolver(linear_solver="cg")
    exact = solver.solve(a)
    _, cold = solver.solve_with_report(a)
    _, warm = solver.solve_with_report(a, initial_guess=exact * (1 + 1e-3))
    assert warm.iterations[0] < cold.iterations[0]


def test_batch_equals_one_at_a_time_and_report_shapes():
    a = _benchmark_coefficient(17, 5)
    solver = DarcyFDSolver(batch_size=2)  # chunks 2 + 2 + 1
    u, report = solver.solve_with_report(a)
    for s in range(5):
        # the same matrix and rhs per sample, and a deterministic solver: identical bits
        np.testing.assert_array_equal(u[s], solver.solve(a[s]))
    assert report.iterations.shape == report.residual.shape == report.solve_time.shape == (5,)
    assert (report.solve_time > 0).all()
    assert "gmg" in report.method


def test_xarray_round_trip():
    x = np.linspace(0, 1, 17)
    a = xr.DataArray(
        _benchmark_coefficient(17, 2), dims=("sample", "x", "y"),
        coords={"sample": [3, 7], "x": x, "y": x},
    )
    u = DarcyFEMSolver(element="Q1").solve(a)
    assert isinstance(u, xr.DataArray)
    assert u.dims == ("sample", "x", "y")
    assert u.name == "u"
    np.testing.assert_array_equal(u["sample"], [3, 7])
    np.testing.assert_array_equal(u.values, DarcyFEMSolver(element="Q1").solve(a.values))
    single = DarcyFDSolver().solve(a.isel(sample=0))
    assert single.dims == ("x", "y")


@pytest.mark.parametrize("cls", [DarcyFDSolver, DarcyFEMSolver])
def test_config_rebuilds_solver(cls):
    import json

    solver = cls(linear_solver="amg", tol=1e-9, forcing=2.0)
    config = json.loads(json.dumps(solver.config))
    assert cls(**config) == solver


def test_fd_and_fem_agree_on_benchmark_coefficient():
    # On the 12/3 coefficient both converge at ~O(h) to the same solution; at n = 65 the
    # measured FD-FEM difference is 0.9e-2 to 2e-2 (docs/methods/darcy.md), so 3e-2 catches a wrong
    # assembly (e.g. forgetting the coefficient gives ~40 %) without being flaky.
    a = _benchmark_coefficient(65, 2)
    fd = DarcyFDSolver().solve(a)
    for element in ["P1", "Q1"]:
        fem = DarcyFEMSolver(element=element).solve(a)
        rel = np.linalg.norm(fd - fem, axis=(1, 2)) / np.linalg.norm(fd, axis=(1, 2))
        assert (rel < 3e-2).all(), rel


def test_solve_mesh_matches_grid_solver_on_constant_coefficient():
    # A refined unit-square MeshTri with a constant coefficient is the grid P1 problem.
    mesh = skfem.MeshTri.init_tensor(np.linspace(0, 1, 17), np.linspace(0, 1, 17))
    u_mesh, report = DarcyFEMSolver(linear_solver="amg").solve_mesh(
        mesh, np.full(mesh.nelements, 2.0)
    )
    u_grid = DarcyFEMSolver().solve(np.full((17, 17), 2.0))
    fem = grid_fem(17, "P1")
    np.testing.assert_allclose(u_mesh, u_grid.ravel()[fem.grid_of_dof], rtol=0, atol=1e-11)
    assert report.iterations.shape == (1,)
    assert report.residual[0] <= 1e-10


def test_solve_mesh_unstructured_converges():
    # Unit square refined uniformly: the max of u for a = 1, f = 1 tends to 0.07367 (series
    # solution); P1 at h ~ 1/32 is within 1e-3 of it (O(h^2) with constant ~0.5).
    mesh = skfem.MeshTri().refined(5)
    u, _ = DarcyFEMSolver(linear_solver="direct").solve_mesh(mesh, np.ones(mesh.nelements))
    assert abs(u.max() - 0.0736713) < 1e-3


@pytest.mark.parametrize("solver_cls", [DarcyFDSolver, DarcyFEMSolver])
def test_public_systems_are_the_solved_systems(solver_cls, rng):
    # The systems exposed to callers (warm starts, residual checks) must be the ones solved:
    # the solution's residual in them is the reported one (<= tol) and a wrong u is far off.
    a = np.where(rng.standard_normal((2, 17, 17)) > 0, 12.0, 3.0)
    solver = solver_cls(linear_solver="direct")
    u, report = solver.solve_with_report(a)
    systems = solver.systems(a)
    assert len(systems) == 2
    for (mat, b), us in zip(systems, u, strict=True):
        x = us[1:-1, 1:-1].ravel()
        assert mat.shape == (15 * 15, 15 * 15)
        assert np.linalg.norm(b - mat @ x) / np.linalg.norm(b) < 1e-10  # direct solve: round-off
        assert np.linalg.norm(b - mat @ (1.01 * x)) / np.linalg.norm(b) > 1e-3
