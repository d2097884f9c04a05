"""compare(): oracle and zero candidates, FD vs FEM, Burgers, xarray, warm-start fields."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from neuralop_fem.errors import InputError, ShapeError
from neuralop_fem.evaluation import METRICS, compare
from neuralop_fem.metrics import energy_norm_error
from solvers.burgers import BurgersSpectralSolver
from solvers.darcy import DarcyFDSolver, DarcyFEMSolver
from solvers.grf import NeumannGRF, PeriodicGRF, threshold
from tests.helpers import assert_order


class Zero:
    """A 'model' that predicts zero everywhere."""

    def solve(self, inputs):
        return np.zeros_like(np.asarray(getattr(inputs, "values", inputs)))


@pytest.fixture
def coefficients(rng):
    return threshold(NeumannGRF(17).sample(3, rng=rng))


def test_solver_against_itself_has_zero_error(coefficients):
    ds = compare(DarcyFDSolver(), DarcyFDSolver(), coefficients)
    for m in METRICS:
        np.testing.assert_array_equal(ds[m].values, 0.0)
    assert ds.attrs["rel_l2_mean"] == 0.0
    assert ds.attrs["problem"] == "darcy"
    assert ds["summary"].sel(metric="rel_l2", statistic="p95") == 0.0
    assert (ds["reference_iterations"] > 0).all()
    assert (ds["candidate_time"] > 0).all()
    assert np.isfinite(ds.attrs["speedup"])


def test_zero_model_has_relative_error_one(coefficients):
    ds = compare(DarcyFDSolver(), Zero(), coefficients)
    np.testing.assert_array_equal(ds["rel_l2"].values, 1.0)  # ||0 - r|| / ||r|| exactly
    np.testing.assert_allclose(ds["rel_energy"].values, 1.0, rtol=1e-14)  # sqrt(rKr/rKr)
    np.testing.assert_allclose(ds["rel_h1"].values, 1.0, rtol=1e-6)  # 1e-10 guard in the ratio
    np.testing.assert_array_equal(ds["candidate_iterations"].values, -1)  # no report: unknown


def test_fd_vs_fem_differ_at_second_order_for_smooth_coefficient():
    errs, hs = [], []
    for n in (17, 33, 65):
        x = np.linspace(0, 1, n)
        a = (1 + 0.5 * np.sin(2 * x[:, None]) * np.cos(3 * x[None, :]))[None]
        errs.append(float(compare(DarcyFDSolver(), DarcyFEMSolver(), a)["rel_l2"][0]))
        hs.append(1 / (n - 1))
    # both schemes are O(h^2) (~7.5e-4 at n = 17), so their difference is too
    assert_order(hs, errs, 2.0, 0.15)


def test_fd_vs_fem_on_two_phase_coefficient_is_small(rng):
    a = threshold(NeumannGRF(65).sample(2, rng=rng))
    ds = compare(DarcyFDSolver(), DarcyFEMSolver(), a)
    # documented in docs/using_a_surrogate.md: ~1.6e-2 at n = 65 (O(h) at the interfaces)
    assert 1e-3 < ds.attrs["rel_l2_mean"] < 3e-2


def test_energy_norm_matches_hand_assembled_form():
    n = 9
    x = np.linspace(0, 1, n)
    a = np.full((1, n, n), 2.0)
    r = (np.sin(np.pi * x[:, None]) * np.sin(np.pi * x[None, :]))[None]
    # constant a: ||v||_a^2 = 2 * |v|_H1^2 of the P1 interpolant; for the P1 triangulation
    # of a grid the stiffness equals the 5-point Laplacian, so |v|^2 = sum of squared differences
    def semi(v):
        return 2.0 * ((np.diff(v, axis=0) ** 2).sum() + (np.diff(v, axis=1) ** 2).sum())
    e = 0.1 * r**2
    want = np.sqrt(semi(e[0]) / semi(r[0]))
    np.testing.assert_allclose(energy_norm_error(a, r + e, r), [want], rtol=1e-12)


def test_burgers_with_reference_solution_and_xarray(rng):
    u0 = PeriodicGRF(64).sample(3, rng=rng)
    solver = BurgersSpectralSolver()
    ref = solver.solve(u0)
    da = xr.DataArray(u0, dims=("sample", "x"),
                      coords={"sample": [10, 11, 12], "x": np.arange(64) / 64})
    ds = compare(solver, Zero(), da, reference_solution=ref)
    np.testing.assert_array_equal(ds["sample"].values, [10, 11, 12])
    np.testing.assert_array_equal(ds["rel_l2"].values, 1.0)
    assert np.isnan(ds["reference_time"]).all()
    assert np.isnan(ds["rel_energy"]).all()
    assert ds.attrs["problem"] == "burgers"


def test_darcy_fields_in_the_order_of_files_are_read_by_name(coefficients):
    """Inputs and reference solution as plain xr.open_dataset returns them, (sample, y, x), or
    one in each order: matched by dimension name, so the solver against its own solution has
    zero error."""
    dims = ("sample", "x", "y")
    a = xr.DataArray(coefficients, dims=dims)
    u = xr.DataArray(DarcyFDSolver().solve(coefficients), dims=dims)
    assert not np.allclose(u.values, u.values.transpose(0, 2, 1))  # a mix-up would show
    for inputs, ref in ((a.transpose("sample", "y", "x"), u.transpose("sample", "y", "x")),
                        (a, u.transpose("sample", "y", "x")),
                        (a.transpose("sample", "y", "x"), u)):
        ds = compare(DarcyFDSolver(), DarcyFDSolver(), inputs, reference_solution=ref)
        np.testing.assert_array_equal(ds["rel_l2"].values, 0.0)


def test_warm_start_and_fields(coefficients):
    # candidate: the same discretisation solved only to 1e-5, so the warm start has less to do
    ds = compare(DarcyFDSolver(linear_solver="cg"), DarcyFDSolver(linear_solver="cg", tol=1e-5),
                 coefficients, warm_start=True, keep_fields=True)
    assert (ds["warm_iterations"] < ds["reference_iterations"]).all()
    assert ds["candidate"].dims == ("sample", "x", "y")
    assert 0 < ds.attrs["warm_iteration_saving"] < 1


def test_shape_mismatch_is_refused(coefficients):
    with pytest.raises(ShapeError, match="must have the shape of the inputs"):
        compare(DarcyFDSolver(), Zero(), coefficients, reference_solution=np.zeros((3, 9, 9)))


def test_noise_level_is_refused_for_forward_problems(coefficients):
    solver = DarcyFDSolver()
    with pytest.raises(InputError, match="`noise_level` applies to inverse problems only"):
        compare(solver, solver, coefficients[:1], noise_level=0.01)
    with pytest.raises(InputError, match="`warm_phases` applies to inverse problems only"):
        compare(solver, solver, coefficients[:1], warm_phases=(3.0, 12.0))


def test_a_candidate_worse_than_zero_is_called_out_in_the_report(coefficients, tmp_path):
    from neuralop_fem.evaluation import write_report

    class Doubled:
        def solve(self, inputs):
            return -2.0 * DarcyFDSolver().solve(inputs)  # relative error 3

    ds = compare(DarcyFDSolver(), Doubled(), coefficients, keep_fields=True)
    assert ds.attrs["rel_l2_mean"] == pytest.approx(3.0)
    text = write_report(ds, tmp_path / "r")["text"]
    assert "worse than predicting zero" in text
    good = compare(DarcyFDSolver(), DarcyFDSolver(), coefficients)
    assert "worse than predicting zero" not in write_report(good, tmp_path / "g")["text"]


class Sleeper:
    """A Darcy 'solver' whose solve takes ``seconds`` per call (and predicts zero)."""

    problem = "darcy"

    def __init__(self, seconds):
        self.seconds, self.calls = seconds, 0

    def solve(self, inputs):
        import time

        self.calls += 1
        time.sleep(self.seconds)
        return np.zeros_like(np.asarray(inputs))


def test_repeated_timings_give_the_median_speedup_and_its_spread(coefficients):
    from neuralop_fem.evaluation import repeated_timings

    slow, fast = Sleeper(0.02), Sleeper(0.005)
    ds = repeated_timings(slow, fast, coefficients, repeats=3)
    assert slow.calls == fast.calls == 3
    assert ds.sizes["repeat"] == 3
    a = ds.attrs
    assert a["repeats"] == 3
    assert a["n_samples"] == 3
    assert a["speedup_min"] <= a["speedup_median"] <= a["speedup_max"]
    assert a["speedup_median"] == float(np.median(ds["speedup"]))
    np.testing.assert_allclose(ds["speedup"], ds["reference_time"] / ds["candidate_time"])
    # per-sample seconds: the sleep of one call split over the 3 samples
    assert (ds["reference_time"] >= 0.02 / 3).all()
    assert 1 < a["speedup_median"] < 10
    # a solver's own per-sample report times are used when it has them
    ds = repeated_timings(DarcyFDSolver(), Zero(), coefficients, repeats=1)
    assert ds["reference_time"].values[0] > 0


@pytest.mark.parametrize("repeats", [0, -1, 2.5, True, "3"])
def test_repeated_timings_refuse_a_bad_count(coefficients, repeats):
    from neuralop_fem.errors import InputError
    from neuralop_fem.evaluation import repeated_timings

    with pytest.raises(InputError, match=rf"`repeats` must be an integer >= 1; got {repeats!r}"):
        repeated_timings(Zero(), Zero(), coefficients, repeats=repeats)


class SlowFirstCall:
    """A Darcy 'solver' whose first call pays a one-off set-up of 0.3 s, like a model's first
    forward pass; later calls are instant."""

    problem = "darcy"

    def __init__(self) -> None:
        self.calls = 0

    def solve(self, inputs):
        import time

        self.calls += 1
        if self.calls == 1:
            time.sleep(0.3)
        return np.zeros_like(np.asarray(getattr(inputs, "values", inputs)))


def test_first_call_set_up_is_not_timed_as_a_per_sample_cost(coefficients):
    # The report's times must agree with the fair verdict's, which warms each side up.
    reference, candidate = SlowFirstCall(), SlowFirstCall()
    ds = compare(reference, candidate, coefficients)
    assert candidate.calls == reference.calls == 2  # one untimed sample, then the batch
    assert (ds["candidate_time"] < 0.05).all()
    assert (ds["reference_time"] < 0.05).all()
