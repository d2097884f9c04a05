"""The Darcy solvers on cell centres and on x_i = i/n: exact solutions, orders, contract."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import xarray as xr

from solvers.darcy import DarcyFDSolver
from solvers.darcy_grid_variants import DarcyCellFDSolver, DarcyHalfOpenFDSolver, assemble_cells
from solvers.errors import InputError, ShapeError
from solvers.exact_darcy import QuadraticDarcyProblem, SmoothDarcyProblem
from solvers.grids import grid_coordinates
from solvers.problems import get_problem

from ..helpers import assert_order


def _mesh(grid: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    x = grid_coordinates(grid, n)
    return np.meshgrid(x, x, indexing="ij")


@pytest.mark.parametrize("n", [4, 9, 32])
def test_cell_sine_is_an_exact_discrete_solution(n):
    """For constant a, sin(pi x) sin(pi y) at the centres is an eigenvector of the reflected
    stencil with eigenvalue 2 (2/h sin(pi h/2))^2, so u_h = c_h sin sin exactly."""
    gx, gy = _mesh("cell-centred", n)
    a = 3.0
    phi = np.sin(np.pi * gx) * np.sin(np.pi * gy)
    u = DarcyCellFDSolver(tol=1e-12).solve(np.full((n, n), a),
                                           forcing=2 * np.pi**2 * a * phi)
    h = 1.0 / n
    c_h = (np.pi * h / 2) ** 2 / np.sin(np.pi * h / 2) ** 2
    # Round-off of a direct solve of n^2 unknowns with condition ~n^2: 1e-12.
    np.testing.assert_allclose(u, c_h * phi, rtol=0, atol=1e-12)


def test_half_open_quadratic_is_exact():
    """The 5-point stencil is exact for quadratics and the points i/n are nodes of the
    (n + 1)-node grid: the solution equals u at every point to round-off."""
    p = QuadraticDarcyProblem(coefficient_value=2.0)
    n = 12
    gx, gy = _mesh("half-open", n)
    u = DarcyHalfOpenFDSolver(linear_solver="direct").solve(
        np.full((n, n), 2.0), forcing=p.forcing(gx, gy))
    np.testing.assert_allclose(u, p.solution(gx, gy), rtol=0, atol=1e-13)


@pytest.mark.parametrize(("cls", "grid"), [(DarcyCellFDSolver, "cell-centred"),
                                           (DarcyHalfOpenFDSolver, "half-open")])
def test_second_order_on_a_manufactured_solution(cls, grid):
    p = SmoothDarcyProblem()
    sizes = [8, 16, 32, 64]
    errors = []
    for n in sizes:
        gx, gy = _mesh(grid, n)
        u = cls(linear_solver="direct").solve(p.coefficient(gx, gy), forcing=p.forcing(gx, gy))
        exact = p.solution(gx, gy)
        errors.append(float(np.linalg.norm(u - exact) / np.linalg.norm(exact)))
    # Second order (the reflection's first-order truncation sits in the boundary cells only).
    assert_order([1.0 / n for n in sizes], errors, expected=2.0, tol=0.15)


def test_cell_operator_is_symmetric_positive_definite_m_matrix(rng):
    a = np.exp(rng.standard_normal((7, 7)))
    mat = assemble_cells(a)
    assert abs(mat - mat.T).max() < 1e-14
    off = mat - sp.diags(mat.diagonal())
    assert off.max() <= 0.0  # M-matrix: non-positive off-diagonals ...
    # ... and strict diagonal dominance in the boundary rows (the ghost reflection).
    assert (mat.diagonal() >= -off.sum(axis=1).A1 - 1e-14).all()
    assert np.linalg.eigvalsh(mat.toarray()).min() > 0


@pytest.mark.parametrize("linear_solver", ["direct", "amg", "cg"])
def test_cell_linear_solvers_agree(linear_solver, rng):
    a = np.where(rng.standard_normal((2, 12, 12)) > 0, 1.0, 0.1)
    ref = DarcyCellFDSolver().solve(a)
    u, report = DarcyCellFDSolver(linear_solver=linear_solver, tol=1e-11).solve_with_report(a)
    assert (report.residual <= 1e-11).all()
    # Residual 1e-11 with condition ~1e3 (contrast 10, n = 12): agreement to 1e-7.
    np.testing.assert_allclose(u, ref, rtol=0, atol=1e-7 * np.abs(ref).max())


def test_half_open_is_the_node_solver_on_the_padded_grid(rng):
    a = np.where(rng.standard_normal((2, 10, 10)) > 0, 12.0, 3.0)
    padded = np.pad(a, ((0, 0), (0, 1), (0, 1)), mode="edge")
    want = DarcyFDSolver().solve(padded)[:, :-1, :-1]
    got = DarcyHalfOpenFDSolver().solve(a)
    np.testing.assert_array_equal(got, want)
    assert not got[:, 0].any()
    assert not got[:, :, 0].any()
    assert got[:, -1].any()  # x = 9/10 is not


def test_xarray_in_xarray_out():
    n = 6
    x = grid_coordinates("cell-centred", n)
    a = xr.DataArray(np.ones((1, n, n)), dims=("sample", "x", "y"),
                     coords={"sample": [4], "x": x, "y": x})
    u = DarcyCellFDSolver().solve(a)
    assert isinstance(u, xr.DataArray)
    assert u.name == "u"
    np.testing.assert_array_equal(u["x"].values, x)
    assert int(u["sample"][0]) == 4


def test_bad_input_is_refused():
    with pytest.raises(InputError, match="`linear_solver` must be one of 'direct', 'amg', 'cg'"):
        DarcyCellFDSolver(linear_solver="gmg")
    with pytest.raises(ShapeError, match="square n x n grid"):
        DarcyCellFDSolver().solve(np.ones((3, 4)))
    with pytest.raises(InputError, match="must be > 0 everywhere"):
        DarcyCellFDSolver().solve(-np.ones((3, 3)))
    with pytest.raises(ShapeError, match="n >= 2"):
        DarcyHalfOpenFDSolver().solve(np.ones((1, 1)))


def test_registry_names_the_solver_of_each_grid():
    spec = get_problem("darcy")
    assert spec.solver_class(spec.grid_solvers["cell-centred"]) is DarcyCellFDSolver
    assert spec.solver_class(spec.grid_solvers["half-open"]) is DarcyHalfOpenFDSolver
    assert spec.solver_name(DarcyCellFDSolver()) == "fd-cells"
    assert DarcyCellFDSolver(**DarcyCellFDSolver(forcing=2.0).config).forcing == 2.0
