"""The inversion on what an optimiser or a surrogate hands it: wild trial coefficients, starts
that dip below 0, solves that miss their tolerance, observations that cannot be inverted."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import solvers._darcy_adjoint as adjoint
from solvers import DarcyFDSolver, DarcyInverseSolver, NeumannGRF, threshold
from solvers.darcy_inverse import admissible_start
from solvers.errors import ConvergenceError, ConvergenceWarning, InputError


def _two_phase(n: int, seed: int) -> np.ndarray:
    return threshold(NeumannGRF(n).sample(1, rng=np.random.default_rng(seed)))[0]


def test_gmg_cg_from_a_start_far_worse_than_zero_converges():
    """The stall of issue 26: CG started from the solution for a coefficient 1e6 times smaller
    in one phase (what an optimiser's trial step does) has an initial residual ~1e6 ||b||; its
    true residual used to stall at about eps times that (200 iterations, 3e-9 > tol 1e-10)."""
    n = 17
    a_old = _two_phase(n, 0)
    u_old = DarcyFDSolver().solve(a_old)
    a_new = np.where(a_old > 5, a_old * 1e6, a_old)
    solver = DarcyFDSolver(linear_solver="gmg", tol=1e-10)
    u_zero, from_zero = solver.solve_with_report(a_new)
    u_warm, warm = solver.solve_with_report(a_new, initial_guess=u_old)
    assert warm.residual[0] <= 1e-10
    assert warm.iterations[0] <= from_zero.iterations[0]  # the worse start is not used
    np.testing.assert_allclose(u_warm, u_zero, rtol=1e-8, atol=1e-14)


def test_inversion_from_a_start_with_near_zero_patch_completes():
    """A start with a 1e-6 patch (a surrogate's negative values floored) sends the first
    L-BFGS-B step to the edge of the safeguard box (a up to 1e7): that raised ConvergenceError
    on a 17 x 17 grid before; now every linear solve meets its tolerance or rounding floor."""
    n = 17
    a = _two_phase(n, 0)
    u = DarcyFDSolver().solve(a)
    start = a.copy()
    start[n // 3:n // 2, n // 3:n // 2] = 1e-6
    est, report = DarcyInverseSolver(maxiter=15).solve_with_report(u, initial_guess=start)
    assert report.stop_reason[0] != "failed"
    assert np.isfinite(est).all()
    assert (est > 0).all()
    assert report.linear_fallbacks.tolist() == [0]


def _missing_solves(monkeypatch):
    """Every iterative solve reports a miss (the LU fallback then does the work)."""
    original = adjoint.FactorisedSystem.solve

    def miss(self, b, x0):
        x, its, res = original(self, b, x0)
        return x, its, res if self.method == "direct" else 1.0

    monkeypatch.setattr(adjoint.FactorisedSystem, "solve", miss)


def test_missed_solves_fall_back_to_sparse_lu_with_a_warning(monkeypatch):
    n = 17
    u = DarcyFDSolver().solve(np.stack([_two_phase(n, 1)]))
    want, ref = DarcyInverseSolver(linear_solver="direct", maxiter=5, levels=1).solve_with_report(u)
    _missing_solves(monkeypatch)
    gmg = DarcyInverseSolver(linear_solver="gmg", maxiter=5, levels=1)
    with pytest.warns(ConvergenceWarning, match=r"sample 0: \d+ of \d+ linear solves missed the "
                                                r"tolerance and were redone by sparse LU"):
        got, report = gmg.solve_with_report(u)
    assert report.linear_fallbacks[0] == report.pde_solves[0]  # every one of them
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert report.stop_reason.tolist() == ref.stop_reason.tolist()


def test_a_failed_sample_keeps_the_others(monkeypatch):
    n = 17
    u = DarcyFDSolver().solve(np.stack([_two_phase(n, 1), _two_phase(n, 2)]))
    solver = DarcyInverseSolver(maxiter=5)
    want = solver.solve(u[0])
    original = adjoint.InversionProblem._linear

    def fail_second(self, system, rhs, x0):
        if self.index == 1:
            msg = "sample 1: a linear solve missed the tolerance (test)"
            raise ConvergenceError(msg)
        return original(self, system, rhs, x0)

    monkeypatch.setattr(adjoint.InversionProblem, "_linear", fail_second)
    with pytest.warns(ConvergenceWarning, match="sample 1 failed and is NaN in the result; the "
                                                "other samples are kept"):
        got, report = solver.solve_with_report(u)
    assert report.stop_reason.tolist()[1] == "failed"
    assert "missed the tolerance (test)" in report.error[1]
    assert report.error[0] == ""
    assert np.isnan(got[1]).all()
    np.testing.assert_array_equal(got[0], want)


U17 = DarcyFDSolver().solve(np.full((17, 17), 4.0))


@pytest.mark.parametrize(
    ("u_obs", "kwargs", "match"),
    [
        (-U17, {}, r"`u_obs` must have the sign of the forcing: with forcing 1 the solution is "
                   r"positive inside \(maximum principle\), but sample 0 has mean -"),
        (U17, {"forcing": -1.0}, r"with forcing -1 the solution is negative inside"),
        (U17 * 1e-300, {}, r"`u_obs` must have magnitudes within \[1e-50, 1e50\]"),
        (U17 * 1e300, {}, r"`u_obs` must have magnitudes within \[1e-50, 1e50\]"),
        (U17 * 1e-49, {}, r"coefficient scale \|forcing\| / max\|u_obs\| = .*e\+5"),
    ],
)
def test_observations_that_cannot_be_inverted_are_refused(u_obs, kwargs, match):
    with pytest.raises(InputError, match=match):
        DarcyInverseSolver(**kwargs).solve(u_obs)


@pytest.mark.parametrize("value", [1e-300, 1e300])
def test_starts_at_extreme_magnitudes_are_refused(value):
    with pytest.raises(InputError, match=r"`initial_guess` must have values within \[1e-50"):
        DarcyInverseSolver().solve(U17, initial_guess=np.full((17, 17), value))


def test_negative_start_points_to_admissible_start():
    with pytest.raises(InputError, match="admissible_start raises it to a floor"):
        DarcyInverseSolver().solve(U17, initial_guess=np.full((17, 17), -1.0))


def test_extreme_forcing_is_refused():
    with pytest.raises(InputError, match=r"`forcing` must be .* within \[1e-50, 1e50\]"):
        DarcyInverseSolver(forcing=1e-300)


def test_numpy_numbers_are_accepted_where_python_ones_are():
    solver = DarcyInverseSolver(maxiter=np.int64(3), levels=np.int32(2), memory=np.int64(5),
                                noise_level=np.float32(0.01), bounds=(np.int64(2), 20.0))
    assert solver.maxiter == 3
    assert type(solver.maxiter) is int
    assert solver.config["levels"] == 2
    _, report = solver.solve_with_report(U17, noise_level=np.float64(0.01))
    assert report.iterations[0] <= 3
    with pytest.raises(InputError, match=r"`maxiter` must be an integer >= 1; got True \(bool\)"):
        DarcyInverseSolver(maxiter=np.True_)


def test_admissible_start_raises_low_values_to_a_floor():
    a = np.array([[[-1.0, 4.0, 8.0], [2.0, 0.0, 12.0], [6.0, 10.0, 4.0]]])
    out = admissible_start(a)
    floor = 0.1 * np.median(a[a > 0])
    np.testing.assert_array_equal(out, np.maximum(a, floor))
    bounded = admissible_start(a, bounds=(3.0, 12.0))
    assert bounded.min() > 3.0
    assert bounded.max() < 12.0
    with pytest.raises(InputError, match="sample 0 has none"):
        admissible_start(-np.ones((3, 3)))
    start = np.full((17, 17), 4.0)
    start[5:8, 5:8] = -2.0  # where a young surrogate is unsure
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a, report = DarcyInverseSolver(maxiter=20).solve_with_report(
            U17, initial_guess=admissible_start(start))
    assert report.stop_reason[0] != "failed"
    assert report.residual[0] < 0.1  # the start's misfit, from the patch, is larger
