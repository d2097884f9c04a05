"""The inner paths of the batched Darcy solvers: the matrix-free operator, the fast Poisson
preconditioner and the cache-sized chunks of CG, each against a reference computation."""

from __future__ import annotations

import numpy as np
import pytest

import solvers._darcy_batched as batched
from solvers._darcy_fd import AVERAGINGS, assemble_fd, face_coefficients
from solvers.darcy import DarcyFDSolver
from solvers.grf import NeumannGRF, threshold


def _coefficient(n: int, n_samples: int, seed: int = 0) -> np.ndarray:
    return threshold(NeumannGRF(n).sample(n_samples, rng=np.random.default_rng(seed)))


@pytest.mark.parametrize("averaging", AVERAGINGS)
def test_matrix_free_operator_equals_the_assembled_matrix(averaging):
    a = _coefficient(13, 3, seed=1)
    x = np.random.default_rng(2).standard_normal((3, 11, 11))
    ax, ay = face_coefficients(a, averaging=averaging)
    got = batched.apply_fd(ax, ay, x)
    for s, mat in enumerate(assemble_fd(a, averaging=averaging)):
        want = (mat @ x[s].ravel()).reshape(11, 11)
        np.testing.assert_allclose(got[s], want, rtol=0, atol=1e-14 * np.abs(want).max())


def test_sine_basis_diagonalises_the_unit_laplacian():
    m = 9
    q, inv = batched._sine_basis(m)
    np.testing.assert_allclose(q @ q, np.eye(m), atol=1e-14)  # orthonormal and symmetric
    ones = np.ones((1, m + 2, m + 2))
    ax, ay = face_coefficients(ones, averaging="harmonic")
    x = np.random.default_rng(0).standard_normal((1, m, m))
    # Q ((Q A x Q) * inv) Q = x: the transform solves the constant-coefficient system exactly
    ax_x = batched.apply_fd(ax, ay, x)
    back = batched._sine_transform(batched._sine_transform(ax_x, q) * inv, q)
    np.testing.assert_allclose(back, x, rtol=0, atol=1e-12 * np.abs(x).max())


def test_constant_coefficient_converges_in_two_iterations():
    # the preconditioner is then the exact inverse up to its single-precision rounding: one
    # step leaves a residual of that rounding (about 1e-5 relative at this size), the second
    # removes it; a wrong eigenvalue or scaling would take many iterations
    a = np.full((2, 21, 21), 3.0)
    u, report = DarcyFDSolver(linear_solver="dst-cg", tol=1e-10).solve_with_report(a)
    assert (report.iterations <= 2).all()
    ref = DarcyFDSolver(linear_solver="direct").solve(a)
    np.testing.assert_allclose(u, ref, rtol=0, atol=1e-9 * np.abs(ref).max())


def test_chunks_give_the_same_answers_as_one_batch(monkeypatch):
    a = _coefficient(17, 5, seed=4)
    solver = DarcyFDSolver(linear_solver="dst-cg", tol=1e-10)
    whole, rep_whole = solver.solve_with_report(a)
    monkeypatch.setattr(batched, "_CHUNK_UNKNOWNS", 2 * 15 * 15)  # chunks of 2, 2 and 1
    chunked, rep_chunked = solver.solve_with_report(a)
    np.testing.assert_array_equal(rep_chunked.iterations, rep_whole.iterations)
    np.testing.assert_allclose(chunked, whole, rtol=0, atol=1e-15 * np.abs(whole).max())
    ref = DarcyFDSolver(linear_solver="direct").solve(a)
    assert np.abs(chunked - ref).max() <= 1e-8 * np.abs(ref).max()
