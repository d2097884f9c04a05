"""DarcyInverseSolver: adjoint gradient, fixed point at the truth, convergence, stopping rules,
the solver contract, bad input, noise conventions and error metrics."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import xarray as xr

from solvers import DarcyFDSolver, DarcyInverseSolver, InverseSolveReport
from solvers.darcy_inverse import (
    add_noise,
    coefficient_errors,
    paper_noise_to_relative,
    pool_coefficient,
)
from solvers.errors import InputError, ShapeError
from solvers.exact_darcy import node_grid
from solvers.grf import NeumannGRF, threshold


def _two_phase(n: int, n_samples: int, seed: int = 0) -> np.ndarray:
    return threshold(NeumannGRF(n).sample(n_samples, rng=np.random.default_rng(seed)))


def _smooth_coefficient(n: int) -> np.ndarray:
    x, y = node_grid(n)
    return 1.0 + 0.5 * np.sin(np.pi * x) * np.sin(np.pi * y) + 0.25 * x


@pytest.fixture(scope="module")
def two_phase_data():
    a = _two_phase(17, 3, seed=1)
    return a, DarcyFDSolver(tol=1e-12).solve(a)


# -- gradient -----------------------------------------------------------------------------
@pytest.mark.parametrize("averaging", ["harmonic", "arithmetic"])
@pytest.mark.parametrize("regularization", [0.0, 1e-2])
def test_adjoint_gradient_matches_central_differences(averaging, regularization, rng):
    n = 11
    a_true = np.exp(0.5 * rng.standard_normal((n, n)))
    u_obs = DarcyFDSolver(averaging=averaging, linear_solver="direct").solve(a_true)
    solver = DarcyInverseSolver(averaging=averaging, linear_solver="direct",
                                regularization=regularization)
    a = 2.0 * np.exp(0.5 * rng.standard_normal((n, n)))
    _, grad = solver.objective(a, u_obs)
    assert grad.shape == (n, n)
    for _ in range(3):
        d = rng.standard_normal((n, n))
        step = 1e-5  # central differences: O(step^2) truncation ~1e-10, round-off ~1e-16/1e-5
        fd = (solver.objective(a + step * d, u_obs)[0]
              - solver.objective(a - step * d, u_obs)[0]) / (2 * step)
        exact = float(np.sum(grad * d))
        assert abs(fd - exact) <= 1e-6 * abs(exact), (fd, exact)


def test_gradient_components_at_boundary_nodes(rng):
    # Boundary nodes enter only the faces to their interior neighbours; corners enter none.
    n = 9
    u_obs = DarcyFDSolver(linear_solver="direct").solve(np.exp(rng.standard_normal((n, n))))
    solver = DarcyInverseSolver(linear_solver="direct", regularization=0.0)
    a = np.full((n, n), 2.0)
    _, grad = solver.objective(a, u_obs)
    assert grad[0, 0] == grad[0, -1] == grad[-1, 0] == grad[-1, -1] == 0.0
    for i, j in [(0, 4), (4, 0), (8, 3), (5, 8)]:
        e = np.zeros((n, n))
        e[i, j] = 1e-5
        fd = (solver.objective(a + e, u_obs)[0] - solver.objective(a - e, u_obs)[0]) / 2e-5
        assert fd == pytest.approx(grad[i, j], rel=1e-6)


# -- fixed point, convergence, stopping ---------------------------------------------------
def test_started_at_the_truth_with_exact_data_it_stays(two_phase_data):
    a_true, u_obs = two_phase_data
    a, report = DarcyInverseSolver().solve_with_report(u_obs, initial_guess=a_true)
    assert report.iterations.tolist() == [0, 0, 0]
    assert report.stop_reason.tolist() == ["misfit_tol"] * 3
    assert report.pde_solves.tolist() == [2, 2, 2]  # one forward + one adjoint each
    np.testing.assert_allclose(a, a_true, rtol=1e-15, atol=0)  # exp(log a): round-off only


def test_coefficient_error_falls_under_refinement():
    """Smooth coefficient, noise-free data from a finer grid (n = 129, no inverse crime).

    Errors on the nodes at least 1/8 away from the boundary, where ``grad u`` vanishes only
    at the maximum of ``u``; on the boundary ring the data see ``a`` only through the face
    means (corners not at all), so those values come from the regulariser. Observed with
    beta = 1e-7: 3.2e-2, 8.1e-3, 3.3e-3 at n = 9, 17, 33 (1.1e-3 at 65), a rate of 1.6 (the
    forward model is O(h^2); TV bias and the stopping tolerance take a little off); on the
    whole grid 3.0e-2, 1.0e-2, 4.9e-3 (rate 1.3).
    """
    sizes, inner_errors, errors = [9, 17, 33], [], []
    u_fine = DarcyFDSolver(tol=1e-12).solve(_smooth_coefficient(129))
    for n in sizes:
        a_true = _smooth_coefficient(n)
        u_obs = u_fine[:: 128 // (n - 1), :: 128 // (n - 1)]
        solver = DarcyInverseSolver(regularization=1e-7, misfit_tol=1e-6, maxiter=300)
        a = solver.solve(u_obs)
        inner = slice((n - 1) // 8, n - (n - 1) // 8)
        err = a[inner, inner] - a_true[inner, inner]
        inner_errors.append(float(np.linalg.norm(err) / np.linalg.norm(a_true[inner, inner])))
        errors.append(float(np.linalg.norm(a - a_true) / np.linalg.norm(a_true)))
    rate = np.polyfit(np.log([1 / (n - 1) for n in sizes]), np.log(inner_errors), 1)[0]
    assert inner_errors[0] > inner_errors[1] > inner_errors[2], inner_errors
    assert errors[0] > errors[1] > errors[2], errors
    assert rate > 1.3, (rate, inner_errors)  # observed 1.6


def test_discrepancy_stop_on_noisy_data(two_phase_data):
    a_true, u_clean = two_phase_data
    level = 0.05
    u_obs = add_noise(u_clean, level, rng=np.random.default_rng(3))
    solver = DarcyInverseSolver(noise_level=level)
    a, report = solver.solve_with_report(u_obs)
    assert report.stop_reason.tolist() == ["discrepancy"] * 3
    # residual <= tau * level / sqrt(1 + level^2): the rule, in relative terms
    assert np.all(report.residual <= solver.tau * level / np.sqrt(1 + level**2))
    # no overfitting: the misfit stays of the order of the noise, not far below it
    assert np.all(report.residual > 0.5 * level)
    assert np.all(np.isfinite(a))
    assert np.all(a > 0)


def test_bounds_are_respected_and_help(two_phase_data):
    a_true, u_obs = two_phase_data
    a, report = DarcyInverseSolver(bounds=(3.0, 12.0)).solve_with_report(u_obs)
    assert a.min() >= 3.0 * (1 - 1e-12)  # exp(log 3) may round by an ulp
    assert a.max() <= 12.0 * (1 + 1e-12)
    bounded = coefficient_errors(a, a_true, pool=4)
    free = coefficient_errors(DarcyInverseSolver().solve(u_obs), a_true, pool=4)
    # observed: fine error 0.087 with bounds vs 0.143 without; misclassified <= 2.1 %
    assert bounded["fine"].mean() < free["fine"].mean()
    assert np.all(bounded["misclassified"] < 0.05), bounded


def test_iteration_cap_is_reported(two_phase_data):
    _, u_obs = two_phase_data
    solver = DarcyInverseSolver(maxiter=2, misfit_tol=1e-9, levels=1)
    report = solver.solve_with_report(u_obs[0])[1]
    assert report.stop_reason.tolist() == ["maxiter"]
    assert report.iterations.tolist() == [2]


def test_report_counts(two_phase_data):
    _, u_obs = two_phase_data
    report = DarcyInverseSolver(noise_level=0.01).solve_with_report(u_obs)[1]
    np.testing.assert_array_equal(report.pde_solves, report.forward_solves + report.adjoint_solves)
    assert np.all(report.forward_solves >= report.adjoint_solves)  # + the constant fit
    assert np.all(report.equivalent_solves <= report.pde_solves)  # coarse solves count less
    assert np.all(report.solve_time > 0)
    assert np.all(report.regularization > 0)
    joined = InverseSolveReport.concatenate([report, report])
    assert len(joined.iterations) == 6
    assert joined.stop_reason.tolist()[3:] == report.stop_reason.tolist()


def test_warm_levels_pass_the_guess_through_coarse_grids(two_phase_data):
    a_true, u_obs = two_phase_data
    guess = np.full_like(a_true, 6.0)
    direct = DarcyInverseSolver(noise_level=0.01).solve_with_report(u_obs, initial_guess=guess)[1]
    # a guess starts on the observation grid: every solve is a fine one
    np.testing.assert_array_equal(direct.equivalent_solves, direct.pde_solves)
    warm = DarcyInverseSolver(noise_level=0.01, warm_levels=2)
    report = warm.solve_with_report(u_obs, initial_guess=guess)[1]
    assert np.all(report.equivalent_solves < report.pde_solves)  # coarse solves count 1/4
    assert set(report.stop_reason.tolist()) <= {"discrepancy", "stationary"}


# -- contract -----------------------------------------------------------------------------
def test_batch_equals_one_at_a_time(two_phase_data):
    _, u_obs = two_phase_data
    solver = DarcyInverseSolver(noise_level=0.01)
    batch = solver.solve(u_obs)
    for k in range(len(u_obs)):
        np.testing.assert_array_equal(batch[k], solver.solve(u_obs[k]))


def test_per_sample_noise_levels(two_phase_data):
    _, u_obs = two_phase_data
    solver = DarcyInverseSolver()
    both = solver.solve(u_obs[:2], noise_level=[0.01, 0.02])
    np.testing.assert_array_equal(both[1], solver.solve(u_obs[1], noise_level=0.02))


def test_xarray_in_xarray_out(two_phase_data):
    _, u_obs = two_phase_data
    x = np.linspace(0, 1, 17)
    da = xr.DataArray(u_obs, dims=("sample", "x", "y"),
                      coords={"sample": [5, 6, 7], "x": x, "y": x}, name="u")
    solver = DarcyInverseSolver(noise_level=0.01)
    out = solver.solve(da)
    assert isinstance(out, xr.DataArray)
    assert out.name == "a"
    assert out.dims == ("sample", "x", "y")
    np.testing.assert_array_equal(out["sample"], [5, 6, 7])
    np.testing.assert_array_equal(out.values, solver.solve(u_obs))
    single = solver.solve(da.isel(sample=0))
    assert single.dims == ("x", "y")
    assert single.shape == (17, 17)


def test_single_numpy_sample_keeps_its_shape(two_phase_data):
    _, u_obs = two_phase_data
    assert DarcyInverseSolver(noise_level=0.01).solve(u_obs[0]).shape == (17, 17)


# -- bad input ----------------------------------------------------------------------------
U9 = DarcyFDSolver().solve(np.ones((9, 9)))


@pytest.mark.parametrize(
    ("u_obs", "error", "match"),
    [
        (np.ones(9), ShapeError, r"`u_obs` must have shape \(n_samples, x, y\)"),
        (np.ones((2, 2, 9, 9)), ShapeError, r"`u_obs` must have shape \(n_samples, x, y\)"),
        (np.ones((9, 7)), ShapeError, r"`u_obs` must be on a square n x n .* got shape \(9, 7\)"),
        (np.ones((2, 2)), ShapeError, r"n >= 3; got shape \(2, 2\)"),
        (np.zeros((2, 9, 9)), InputError, r"`u_obs` must not be identically 0 .* sample 0"),
        (np.ones((9, 9), dtype=np.int64), InputError, r"`u_obs` must be a real floating-point"),
    ],
)
def test_bad_observations(u_obs, error, match):
    with pytest.raises(error, match=match):
        DarcyInverseSolver().solve(u_obs)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_observations(bad):
    u = U9.copy()
    u[3, 4] = bad
    with pytest.raises(InputError, match=r"`u_obs` must be finite.*index \(0, 3, 4\)"):
        DarcyInverseSolver().solve(u)


def test_wrong_xarray_dims():
    with pytest.raises(ShapeError, match=r"`u_obs` must have dims"):
        DarcyInverseSolver().solve(xr.DataArray(U9, dims=("x", "z")))


@pytest.mark.parametrize(
    ("guess", "error", "match"),
    [
        (np.ones((8, 8)), ShapeError,
         r"`initial_guess` must have shape \(9, 9\) to match `u_obs`; got \(8, 8\)"),
        (np.zeros((9, 9)), InputError, r"`initial_guess` must be > 0 everywhere; got minimum 0.0"),
        (-np.ones((9, 9)), InputError, r"`initial_guess` must be > 0 everywhere"),
        (np.full((9, 9), np.nan), InputError, r"`initial_guess` must be finite"),
    ],
)
def test_bad_initial_guess(guess, error, match):
    with pytest.raises(error, match=match):
        DarcyInverseSolver().solve(U9, initial_guess=guess)


def test_initial_guess_outside_bounds():
    with pytest.raises(InputError, match=r"`initial_guess` must lie within `bounds` \(3.0, 12.0\)"):
        DarcyInverseSolver(bounds=(3.0, 12.0)).solve(U9, initial_guess=np.full((9, 9), 2.0))


@pytest.mark.parametrize(
    ("level", "error", "match"),
    [
        (-0.1, InputError, r"`noise_level` must be relative noise levels in \[0, 1\) .*; got "
                           r"\[-0.1\]"),
        (np.nan, InputError, r"`noise_level` must be relative noise levels in \[0, 1\)"),
        (5, InputError, r"`noise_level` must be relative noise levels in \[0, 1\) \(a fraction "
                        r"\|\|noise\|\| / \|\|u\|\|, e.g. 0.05 for 5 %\); got \[5.0\]"),
        (True, InputError, r"`noise_level` must be a number or an array of numbers .*got True"),
        (np.array([False]), InputError, r"`noise_level` must be a number or an array of num"),
        ([0.1, 0.2], ShapeError, r"`noise_level` must be a number or have shape \(1,\)"),
        ("high", InputError, r"`noise_level` must be a number or an array of numbers .*; got "
                             r"'high'"),
    ],
)
def test_bad_noise_level_per_sample(level, error, match):
    with pytest.raises(error, match=match):
        DarcyInverseSolver().solve(U9[None], noise_level=level)


def test_objective_wants_one_sample():
    with pytest.raises(ShapeError, match=r"`u_obs` must be one sample of shape \(n, n\)"):
        DarcyInverseSolver().objective(np.ones((9, 9)), U9[None])
    with pytest.raises(ShapeError, match=r"`a` must have shape \(9, 9\) to match `u_obs`"):
        DarcyInverseSolver().objective(np.ones((7, 7)), U9)
    with pytest.raises(InputError, match=r"`a` must be > 0 everywhere"):
        DarcyInverseSolver().objective(-np.ones((9, 9)), U9)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"noise_level": -0.01}, r"`noise_level` must be a relative noise level in \[0, 1\) "
                                 r"\(a fraction .*\); got -0.01"),
        ({"noise_level": float("nan")}, r"`noise_level` must be a relative noise level .*got nan"),
        ({"noise_level": 5}, r"`noise_level` must be a relative noise level in \[0, 1\) .*5 %.*"
                             r"got 5"),
        ({"noise_level": True}, r"`noise_level` must be a relative noise level .*; got True"),
        ({"bounds": (12.0, 3.0)}, r"`bounds` must be None or \(lower, upper\) with 0 < lower < up"),
        ({"bounds": (0.0, 3.0)}, r"`bounds` must be None or \(lower, upper\)"),
        ({"bounds": (-1.0, 3.0)}, r"`bounds` must be None or \(lower, upper\)"),
        ({"bounds": (1.0, float("inf"))}, r"`bounds` must be None or .*both finite"),
        ({"bounds": (3.0,)}, r"`bounds` must be None or \(lower, upper\)"),
        ({"linear_solver": "lu"},
         r"`linear_solver` must be one of 'gmg', 'amg', 'cg', 'direct', 'banded', 'dst-cg'; "
         r"got 'lu'"),
        ({"averaging": "geometric"},
         r"`averaging` must be one of 'harmonic', 'arithmetic'; got 'geometric'"),
        ({"tol": 0.0}, r"`tol` must be a finite number > 0; got 0.0"),
        ({"tol": 1.5}, r"`tol` must be a finite number in \(0, 1\); got 1.5"),
        ({"misfit_tol": float("nan")}, r"`misfit_tol` must be a finite number > 0; got nan"),
        ({"regularization": -1.0}, r"`regularization` must be a finite number >= 0; got -1.0"),
        ({"regularization": float("inf")}, r"`regularization` must be a finite number >= 0; got"),
        ({"tv_smoothing": 0.0}, r"`tv_smoothing` must be a finite number > 0; got 0.0"),
        ({"tau": 0.5}, r"`tau` must be a finite number >= 1; got 0.5"),
        ({"forcing": float("inf")}, r"`forcing` must be a finite nonzero number .*; got inf"),
        ({"forcing": 0.0}, r"`forcing` must be a finite nonzero number .*; got 0.0"),
        ({"maxiter": 0}, r"`maxiter` must be an integer >= 1; got 0"),
        ({"coarse_maxiter": 1.5}, r"`coarse_maxiter` must be an integer >= 1; got 1.5"),
        ({"levels": 0}, r"`levels` must be an integer >= 1; got 0"),
        ({"warm_levels": 0}, r"`warm_levels` must be an integer >= 1; got 0"),
        ({"memory": True}, r"`memory` must be an integer >= 1; got True"),
    ],
)
def test_bad_configuration(kwargs, match):
    with pytest.raises(InputError, match=match):
        DarcyInverseSolver(**kwargs)


def test_solvers_stay_torch_free():
    code = "import sys, solvers.darcy_inverse; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_config_round_trip():
    solver = DarcyInverseSolver(bounds=(3, 12), noise_level=0.01, regularization=1e-6)
    assert DarcyInverseSolver(**solver.config) == solver
    assert solver.config["bounds"] == (3.0, 12.0)


def test_report_fields_must_agree():
    with pytest.raises(InputError, match="one entry per sample"):
        InverseSolveReport(
            iterations=np.zeros(2, dtype=np.int64), forward_solves=np.zeros(2, dtype=np.int64),
            adjoint_solves=np.zeros(2, dtype=np.int64), pde_solves=np.zeros(1, dtype=np.int64),
            equivalent_solves=np.zeros(2), residual=np.zeros(2), regularization=np.zeros(2),
            solve_time=np.zeros(2), stop_reason=np.array(["maxiter", "maxiter"]),
        )
    with pytest.raises(InputError, match="at least one InverseSolveReport"):
        InverseSolveReport.concatenate([])


# -- noise conventions --------------------------------------------------------------------
@pytest.fixture(scope="module")
def training_solutions():
    a = _two_phase(17, 40, seed=5)
    return DarcyFDSolver().solve(a)


def test_paper_noise_level_matches_the_drawn_noise(training_solutions):
    u = training_solutions
    eps = 0.1
    std = u.std(axis=0) + 1e-5
    per_sample = paper_noise_to_relative(eps, u, observed=u)
    # 500 draws per sample, 225 interior nodes each: the mean of ||eta||^2 has a relative
    # standard error sqrt(2 / (500 * 225)) ~ 0.4 %; allow 2 %.
    rng = np.random.default_rng(11)
    draws = np.stack([add_noise(u, eps, rng=rng, std_field=std) - u for _ in range(500)])
    ratio = np.mean(np.sum(draws**2, axis=(2, 3)), axis=0) / np.sum(u**2, axis=(1, 2))
    np.testing.assert_allclose(np.sqrt(ratio), per_sample, rtol=0.02)
    # dataset average: eps * rms(sigma + c) / rms(u)
    averaged = paper_noise_to_relative(eps, u)
    expected = np.sqrt(np.mean(np.sum(draws**2, axis=(2, 3))) / np.mean(np.sum(u**2, axis=(1, 2))))
    assert averaged == pytest.approx(expected, rel=0.02)
    # the std field itself can stand in for the training solutions
    from_std = paper_noise_to_relative(eps, u.std(axis=0), observed=u[0])
    assert from_std == pytest.approx(per_sample[0], rel=1e-12)


def test_relative_noise_has_the_requested_level(training_solutions):
    u = training_solutions
    rng = np.random.default_rng(12)
    draws = np.stack([add_noise(u, 0.03, rng=rng) - u for _ in range(300)])
    assert np.all(draws[:, :, 0, :] == 0)  # boundary values are kept
    assert np.all(draws[:, :, :, -1] == 0)
    ratio = np.mean(np.sum(draws**2, axis=(2, 3)), axis=0) / np.sum(u**2, axis=(1, 2))
    np.testing.assert_allclose(np.sqrt(ratio), 0.03, rtol=0.02)  # s.e. ~0.5 % per sample


def test_noise_is_reproducible_and_zero_level_is_exact(training_solutions):
    u = training_solutions[:2]
    first = add_noise(u, 0.1, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(first, add_noise(u, 0.1, rng=np.random.default_rng(1)))
    np.testing.assert_array_equal(add_noise(u, 0.0, rng=np.random.default_rng(1)), u)
    assert paper_noise_to_relative(0.0, training_solutions) == 0.0


def test_noise_helpers_bad_input(training_solutions):
    u = training_solutions
    for bad in (-0.1, 5, True):
        with pytest.raises(InputError, match=r"`epsilon` must be a noise factor in \[0, 1\)"):
            paper_noise_to_relative(bad, u)
    with pytest.raises(InputError, match=r"`level` must be a noise factor in \[0, 1\).*got 5"):
        add_noise(u, 5, rng=np.random.default_rng(0))
    with pytest.raises(InputError, match=r"`observed` must be given when `solutions` is a std"):
        paper_noise_to_relative(0.1, u.std(axis=0))
    with pytest.raises(ShapeError, match=r"`solutions` must hold >= 2 samples"):
        paper_noise_to_relative(0.1, u[:1])
    with pytest.raises(ShapeError, match=r"`observed` must be on the grid of `solutions`"):
        paper_noise_to_relative(0.1, u, observed=np.ones((9, 9)))
    with pytest.raises(InputError, match=r"`rng` must be a numpy.random.Generator; got int"):
        add_noise(u, 0.1, rng=0)
    with pytest.raises(ShapeError, match=r"`std_field` must have shape \(17, 17\)"):
        add_noise(u, 0.1, rng=np.random.default_rng(0), std_field=np.ones((9, 9)))


# -- error metrics ------------------------------------------------------------------------
def _naive_pool(a: np.ndarray, factor: int) -> np.ndarray:
    """NaN-padded centred window of half-width factor // 2, nanmean (the data pipeline's rule)."""
    n = a.shape[-1]
    r = factor // 2
    padded = np.full((n + 2 * r, n + 2 * r), np.nan)
    padded[r:-r or None, r:-r or None] = a
    centres = np.arange(0, n, factor)
    return np.array([[np.nanmean(padded[i:i + 2 * r + 1, j:j + 2 * r + 1]) for j in centres]
                     for i in centres])


@pytest.mark.parametrize(("n", "factor"), [(13, 3), (17, 4), (21, 5), (9, 1)])
def test_pooling_matches_nan_padded_nanmean(n, factor, rng):
    a = rng.standard_normal((n, n))
    pooled = pool_coefficient(a, factor=factor)
    assert pooled.shape == ((n - 1) // factor + 1,) * 2
    np.testing.assert_allclose(pooled, _naive_pool(a, factor), rtol=1e-13, atol=1e-14)


def test_pooling_bad_factor():
    with pytest.raises(InputError, match=r"`factor` must be an int >= 1 dividing n - 1 = 16; got"):
        pool_coefficient(np.ones((17, 17)), factor=3)


def test_coefficient_errors():
    a_true = np.full((2, 17, 17), 3.0)
    a_true[:, :8] = 12.0
    est = a_true.copy()
    est[1, 8, :] = 12.0  # one misclassified row of 17 nodes
    errors = coefficient_errors(est, a_true, pool=4)
    assert errors["fine"][0] == errors["coarse"][0] == errors["misclassified"][0] == 0.0
    assert errors["misclassified"][1] == pytest.approx(17 / 289)
    fine = np.linalg.norm(est[1] - a_true[1]) / np.linalg.norm(a_true[1])
    assert errors["fine"][1] == pytest.approx(fine)
    coarse_truth = pool_coefficient(a_true[1], factor=4)
    coarse = coefficient_errors(est[1], a_true[1], pool=4, a_true_coarse=coarse_truth)
    assert coarse["coarse"][0] == pytest.approx(errors["coarse"][1])
    with pytest.raises(ShapeError, match=r"`a_est` must have the shape of `a_true`"):
        coefficient_errors(est[:, :9, :9], a_true)
