"""The solver contract matches a DataArray's spatial dims by name: ``(sample, y, x)``, the order
of files as plain ``xr.open_dataset`` returns them, gives the answer of ``(sample, x, y)``, in
the caller's order."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from solvers import DarcyFDSolver, DarcyInverseSolver, NeumannGRF, threshold
from solvers.errors import ShapeError

N = 9


@pytest.fixture
def a_xy():
    """Two coefficients on the (x, y) node grid, not symmetric in x and y."""
    a = threshold(NeumannGRF(N).sample(2, rng=np.random.default_rng(3)), high=12.0, low=3.0)
    assert not np.allclose(a, a.transpose(0, 2, 1))  # a mix-up of x and y would show
    grid = np.linspace(0.0, 1.0, N)
    return xr.DataArray(a, dims=("sample", "x", "y"),
                        coords={"sample": [4, 7], "x": grid, "y": grid}, name="a")


def test_darcy_solve_reads_and_returns_the_callers_dim_order(a_xy):
    solver = DarcyFDSolver()
    want = solver.solve(a_xy)
    got = solver.solve(a_xy.transpose("sample", "y", "x"))
    assert got.dims == ("sample", "y", "x")
    xr.testing.assert_identical(got, want.transpose("sample", "y", "x"))
    one = solver.solve(a_xy.isel(sample=0).transpose("y", "x"))
    assert one.dims == ("y", "x")
    np.testing.assert_array_equal(one.values, want.values[0].T)


def test_initial_guess_and_forcing_are_read_by_name(a_xy):
    solver = DarcyFDSolver(linear_solver="cg", tol=1e-12)
    exact = solver.solve(a_xy)
    guess = exact.transpose("sample", "y", "x")  # the other order than the inputs
    sol, report = solver.solve_with_report(a_xy, initial_guess=guess)
    np.testing.assert_allclose(sol.values, exact.values, rtol=0, atol=1e-12)
    assert (report.iterations <= 1).all()  # started from the solution: nothing left to do
    grid = np.linspace(0.0, 1.0, N)
    f = xr.DataArray(1.0 + np.outer(grid, grid**2), dims=("x", "y"))  # f(x, y) = 1 + x y^2
    direct = DarcyFDSolver()
    want = direct.solve(a_xy.values, forcing=f.values)
    got = direct.solve(a_xy.values, forcing=f.transpose("y", "x"))
    np.testing.assert_array_equal(got, want)


def test_inverse_objective_reads_coefficient_and_observations_by_name(a_xy):
    a = a_xy.isel(sample=0).drop_vars("sample")
    u = DarcyFDSolver().solve(a).rename("u")
    inv = DarcyInverseSolver()
    trial = a * 1.1
    value, grad = inv.objective(trial.values, u.values)
    value_t, grad_t = inv.objective(trial.transpose("y", "x"), u.transpose("y", "x"))
    assert value_t == value
    np.testing.assert_array_equal(grad_t, grad)  # numpy out: the (x, y) order


def test_dims_of_other_names_are_still_refused(a_xy):
    with pytest.raises(ShapeError, match=r"`a` must have dims \('sample', 'x', 'y'\) or "
                       r"\('x', 'y'\) \(the spatial ones in any order\); got \('sample', 'x', "
                       r"'z'\)"):
        DarcyFDSolver().solve(a_xy.rename(y="z"))
    with pytest.raises(ShapeError, match=r"`a` must have dims"):
        DarcyFDSolver().solve(a_xy.transpose("x", "sample", "y"))
