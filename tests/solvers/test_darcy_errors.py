"""Bad input to the Darcy solvers: one test per kind, each pinning the message."""

from __future__ import annotations

import numpy as np
import pytest
import skfem
import xarray as xr

from solvers.darcy import DarcyFDSolver, DarcyFEMSolver
from solvers.darcy_grid_variants import DarcyCellFDSolver
from solvers.errors import ConvergenceError, InputError, ShapeError

SOLVERS = [DarcyFDSolver, DarcyFEMSolver]


@pytest.mark.parametrize("cls", SOLVERS)
def test_wrong_number_of_dims(cls):
    with pytest.raises(ShapeError, match=r"`a` must have shape \(n_samples, x, y\)"):
        cls().solve(np.ones(17))


@pytest.mark.parametrize("cls", SOLVERS)
def test_non_square_grid(cls):
    with pytest.raises(ShapeError, match=r"square n x n node grid .* got shape \(17, 9\)"):
        cls().solve(np.ones((2, 17, 9)))


def test_grid_too_small():
    with pytest.raises(ShapeError, match=r"n >= 3; got shape \(2, 2\)"):
        DarcyFDSolver().solve(np.ones((2, 2)))


def test_wrong_xarray_dims():
    a = xr.DataArray(np.ones((2, 9, 9)), dims=("batch", "x", "y"))
    with pytest.raises(ShapeError, match=r"`a` must have dims"):
        DarcyFDSolver().solve(a)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_coefficient(bad):
    a = np.ones((2, 9, 9))
    a[1, 4, 4] = bad
    with pytest.raises(InputError, match=r"`a` must be finite.*index \(1, 4, 4\)"):
        DarcyFDSolver().solve(a)


@pytest.mark.parametrize("cls", SOLVERS)
@pytest.mark.parametrize("bad", [0.0, -1.0])
def test_non_positive_coefficient(cls, bad):
    a = np.ones((9, 9))
    a[0, 3] = bad
    with pytest.raises(InputError, match=r"`a` must be > 0 everywhere.*index \(0, 0, 3\)"):
        cls().solve(a)


@pytest.mark.parametrize("cls", [*SOLVERS, DarcyCellFDSolver])
def test_non_positive_coefficient_prints_a_plain_number(cls):
    a = np.full((9, 9), 3.0)
    a[2, 5] = -3.0
    with pytest.raises(InputError) as info:
        cls().solve(a)
    assert str(info.value) == ("`a` must be > 0 everywhere; got 1 value(s) <= 0, the first -3.0 "
                               "at index (0, 2, 5).")  # not np.float64(-3.0)


def test_integer_coefficient_is_not_cast():
    with pytest.raises(InputError, match=r"real floating-point array; got dtype int64"):
        DarcyFDSolver().solve(np.ones((9, 9), dtype=np.int64))


@pytest.mark.parametrize("cls", SOLVERS)
def test_initial_guess_wrong_shape(cls):
    match = r"`initial_guess` must have shape \(2, 9, 9\).*got \(9, 9\)"
    with pytest.raises(ShapeError, match=match):
        cls().solve(np.ones((2, 9, 9)), initial_guess=np.zeros((9, 9)))


def test_initial_guess_not_finite():
    guess = np.zeros((9, 9))
    guess[2, 2] = np.nan
    with pytest.raises(InputError, match=r"`initial_guess` must be finite"):
        DarcyFDSolver().solve(np.ones((9, 9)), initial_guess=guess)


def test_forcing_override_wrong_shape():
    with pytest.raises(ShapeError, match=r"`forcing` must have shape"):
        DarcyFDSolver().solve(np.ones((9, 9)), forcing=np.ones((8, 8)))


def test_unknown_linear_solver_lists_valid_names():
    match = (r"`linear_solver` must be one of 'gmg', 'amg', 'cg', 'direct', 'banded', 'dst-cg'; "
             r"got 'lu'")
    with pytest.raises(InputError, match=match):
        DarcyFDSolver(linear_solver="lu")


def test_unknown_averaging_lists_valid_names():
    match = r"`averaging` must be one of 'harmonic', 'arithmetic'; got 'geometric'"
    with pytest.raises(InputError, match=match):
        DarcyFDSolver(averaging="geometric")


def test_unknown_element_lists_valid_names():
    with pytest.raises(InputError, match=r"`element` must be one of 'P1', 'Q1'; got 'P2'"):
        DarcyFEMSolver(element="P2")


@pytest.mark.parametrize("cls", SOLVERS)
@pytest.mark.parametrize("tol", [0.0, -1e-8, 1.0])
def test_bad_tol(cls, tol):
    with pytest.raises(InputError, match=r"`tol` must be a relative residual in \(0, 1\)"):
        cls(tol=tol)


def test_bad_maxiter():
    with pytest.raises(InputError, match=r"`maxiter` must be None or an integer >= 1; got 0"):
        DarcyFDSolver(maxiter=0)


def test_non_finite_forcing():
    with pytest.raises(InputError, match=r"`forcing` must be a finite real number; got nan"):
        DarcyFDSolver(forcing=float("nan"))


def test_bad_batch_size():
    with pytest.raises(InputError, match=r"`batch_size` must be an integer >= 1; got 0"):
        DarcyFDSolver(batch_size=0)


@pytest.mark.parametrize("linear_solver", ["cg", "amg", "gmg"])
def test_missed_tolerance_raises_naming_the_sample(linear_solver):
    a = np.ones((3, 33, 33))
    match = (r"sample 0 missed the tolerance: relative residual .* > tol 1.0e-12 "
             r"after 2 iterations")
    with pytest.raises(ConvergenceError, match=match):
        DarcyFDSolver(linear_solver=linear_solver, tol=1e-12, maxiter=2).solve(a)


def test_solve_mesh_rejects_gmg():
    mesh = skfem.MeshTri().refined(2)
    with pytest.raises(InputError, match=r"gmg needs the structured node grid"):
        DarcyFEMSolver().solve_mesh(mesh, np.ones(mesh.nelements))


def test_solve_mesh_element_mesh_mismatch():
    mesh = skfem.MeshQuad().refined(2)
    match = r"`mesh` must be one of .*MeshTri1.* for element='P1'; got MeshQuad1"
    with pytest.raises(InputError, match=match):
        DarcyFEMSolver(linear_solver="direct").solve_mesh(mesh, np.ones(mesh.nelements))


def test_solve_mesh_coefficient_wrong_shape():
    mesh = skfem.MeshTri().refined(2)
    with pytest.raises(ShapeError, match=r"`coefficient` must be a float array of shape \(32,\)"):
        DarcyFEMSolver(linear_solver="direct").solve_mesh(mesh, np.ones(mesh.nvertices))


def test_solve_mesh_coefficient_non_positive():
    mesh = skfem.MeshTri().refined(2)
    with pytest.raises(InputError, match=r"`coefficient` must be > 0; got minimum -1\.0\.$"):
        DarcyFEMSolver(linear_solver="direct").solve_mesh(mesh, -np.ones(mesh.nelements))


def test_solve_mesh_initial_guess_wrong_shape():
    mesh = skfem.MeshTri().refined(2)
    with pytest.raises(ShapeError, match=r"`initial_guess` must have shape \(25,\); got \(24,\)"):
        DarcyFEMSolver(linear_solver="cg").solve_mesh(
            mesh, np.ones(mesh.nelements), initial_guess=np.zeros(24)
        )


@pytest.mark.parametrize("threads", [0, -1, 1.5, True])
def test_bad_blas_threads(threads):
    with pytest.raises(InputError, match="`blas_threads` must be None or an integer >= 1"):
        DarcyFDSolver(blas_threads=threads)


def test_blas_threads_limit_does_not_change_the_solution(rng):
    a = np.where(rng.standard_normal((1, 17, 17)) > 0, 12.0, 3.0)
    limited = DarcyFDSolver(blas_threads=1).solve(a)
    free = DarcyFDSolver(blas_threads=None).solve(a)
    np.testing.assert_allclose(limited, free, rtol=0, atol=1e-12)  # same iterations, round-off only
