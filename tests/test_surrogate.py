"""Surrogate: the solver contract, batching, resampling, OOD warnings, bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import xarray as xr

from neuralop_fem.data import load_dataset
from neuralop_fem.errors import InputError, ShapeError
from neuralop_fem.surrogate import OODWarning, Surrogate, resample_nodes, resample_periodic
from neuralop_fem.surrogate.warmstart import relative_residual
from tests._surrogate_fixtures import burgers_run, darcy_run


@pytest.fixture(scope="module")
def burgers(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("burgers")
    run = burgers_run(tmp)
    return Surrogate.load(run, device="cpu"), load_dataset(tmp / "b.nc")


@pytest.fixture(scope="module")
def darcy(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("darcy")
    run = darcy_run(tmp)
    return Surrogate.load(run, device="cpu"), load_dataset(tmp / "d.nc")


def _naive(sur: Surrogate, x: np.ndarray) -> np.ndarray:
    """Reference: one forward pass per sample, written out by hand."""
    out = []
    with torch.no_grad():
        for s in x:
            t = torch.tensor(s[None, ..., None], dtype=torch.float32)
            out.append(sur.operator(t)[0, ..., 0].double().numpy())
    return np.stack(out)


def test_burgers_matches_naive_forward_and_is_float64(burgers):
    sur, ds = burgers
    u0 = np.asarray(ds.u0.values)
    pred = sur.solve(u0)
    assert pred.dtype == np.float64
    assert pred.shape == u0.shape
    # float32 model: batched and per-sample passes agree to float32 round-off
    np.testing.assert_allclose(pred, _naive(sur, u0), rtol=1e-5, atol=1e-6)


def test_precision_rule_inputs_cast_to_the_model_dtype_and_float64_out(burgers):
    """The documented rule: any real input dtype in, computed in ``Surrogate.dtype``, float64
    out; float32 and float64 inputs that round to the same float32 values give one answer."""
    sur, ds = burgers
    u0 = np.asarray(ds.u0.values)[:3]
    assert sur.dtype == torch.float32
    ref = sur.solve(u0)
    for x in (u0.astype(np.float32), u0.astype(np.float32).astype(np.float64)):
        pred = sur.solve(x)
        assert pred.dtype == np.float64
        np.testing.assert_array_equal(pred, sur.solve(u0.astype(np.float32)))
    np.testing.assert_allclose(ref, sur.solve(u0.astype(np.float32)), rtol=1e-5, atol=1e-6)
    with pytest.raises(InputError, match=r"model's dtype torch.float32; got torch.float64"):
        sur.operator(torch.from_numpy(u0[..., None]))  # the torch operator refuses float64


def test_batch_size_and_single_sample_do_not_change_results(burgers):
    sur, ds = burgers
    u0 = np.asarray(ds.u0.values)
    small = Surrogate(sur.operator, problem="burgers", resolution=64, batch_size=5, device="cpu")
    # float32 kernels may reorder sums with the batch size: round-off level only
    np.testing.assert_allclose(small.solve(u0), sur.solve(u0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sur.solve(u0[3]), sur.solve(u0)[3], rtol=1e-5, atol=1e-6)


def test_xarray_in_xarray_out(burgers):
    sur, ds = burgers
    out = sur.solve(ds.u0)
    assert isinstance(out, xr.DataArray)
    assert out.dims == ("sample", "x")
    assert out.name == "u"
    np.testing.assert_array_equal(out["x"].values, ds["x"].values)
    np.testing.assert_array_equal(out["sample"].values, ds["sample"].values)
    one = sur.solve(ds.u0.isel(sample=0))
    assert one.dims == ("x",)


def test_darcy_xarray_in_either_dim_order(darcy):
    """(sample, y, x), as plain xr.open_dataset returns a file's fields, is read by name and
    the prediction comes back in that order."""
    sur, ds = darcy
    a = ds.a.isel(sample=slice(0, 2)).load()
    want = sur.solve(a)
    got = sur.solve(a.transpose("sample", "y", "x"))
    assert got.dims == ("sample", "y", "x")
    xr.testing.assert_identical(got, want.transpose("sample", "y", "x"))
    assert not np.allclose(want.values, want.values.transpose(0, 2, 1))  # order matters here


def test_report_and_metadata(burgers):
    sur, ds = burgers
    _, rep = sur.solve_with_report(ds.u0.values[:3])
    assert (rep.iterations == 0).all()
    assert np.isnan(rep.residual).all()
    assert (rep.solve_time > 0).all()
    assert sur.validation_error == 0.5
    assert sur.test_error == 0.6
    assert sur.provenance["problem"] == "burgers"
    np.testing.assert_allclose(sur.grid, np.arange(64) / 64)
    assert type(sur.reference_solver()).__name__ == "BurgersSpectralSolver"


def test_darcy_report_residual_is_discrete_residual(darcy):
    sur, ds = darcy
    a = np.asarray(ds.a.values[:2])
    pred, rep = sur.solve_with_report(a)
    np.testing.assert_array_equal(pred[:, 0, :], 0.0)  # Dirichlet ring of the wrapper
    np.testing.assert_allclose(rep.residual, relative_residual(sur.reference_solver(), a, pred))


def test_resample_round_trip(burgers, darcy):
    sur, ds = burgers
    u0 = np.asarray(ds.u0.values[:2])
    fine = np.repeat(u0, 2, axis=1)  # on 128 points; strided back to 64 gives u0 exactly
    out = sur.solve(fine, resample=True)
    assert out.shape == (2, 128)
    np.testing.assert_allclose(out[:, ::2], sur.solve(u0), rtol=1e-6, atol=1e-7)
    dsur, dds = darcy
    a = np.asarray(dds.a.values[:1])
    out = dsur.solve(resample_nodes(a, 33, order=0), resample=True)
    assert out.shape == (1, 33, 33)
    np.testing.assert_allclose(out[:, ::2, ::2], dsur.solve(a), rtol=1e-6, atol=1e-7)


def test_resampling_helpers_are_exact_on_linear_data():
    x = np.linspace(0, 1, 9)
    lin = (x[:, None] + 2 * x[None, :])[None]
    want = np.linspace(0, 1, 7)
    np.testing.assert_allclose(resample_nodes(lin, 7)[0], want[:, None] + 2 * want[None, :],
                               atol=1e-12)
    np.testing.assert_array_equal(resample_periodic(np.arange(8.0)[None], 4), [[0, 2, 4, 6]])


def test_in_distribution_inputs_do_not_warn_but_scaled_ones_do(burgers):
    sur, ds = burgers
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sur.solve(ds.u0.values)  # training inputs: d^2 <= (N-1)^2/N < chi2 threshold
    # x100: log-amplitude shift 4.6 vs a training spread of ~0.55 -> d^2 ~ 70 > 13.8
    with pytest.warns(OODWarning, match="out-of-distribution score"):
        sur.solve(100.0 * ds.u0.values)
    assert np.all(sur.ood_score(100.0 * ds.u0.values) > sur.ood_reference.threshold)


def test_darcy_values_off_the_training_set_warn(darcy):
    sur, ds = darcy
    a = np.asarray(ds.a.values[:2]).copy()
    a[a > 5] = 30.0
    with pytest.warns(OODWarning, match="outside the training set"):
        sur.solve(a)


def _ood_message(sur: Surrogate, a: np.ndarray) -> str:
    with pytest.warns(OODWarning) as record:
        sur.solve(a)
    assert len(record) == 1
    return str(record[0].message)


def test_the_ood_warning_gives_only_the_reasons_that_apply(darcy):
    """The training coefficients take the values 3 and 12 (contrast 4). A constant 3 has no
    value off that set: the warning names its contrast, not values off the set; doubled
    training inputs keep the contrast and have every value off the set."""
    sur, ds = darcy
    assert sur.ood_reference.value_set == (3.0, 12.0)
    text = _ood_message(sur, np.full((2, 17, 17), 3.0))
    assert "the coefficient's contrast max/min is 1 in every input (the training set's is 4)" \
        in text
    assert "outside the training set" not in text
    assert "0.0%" not in text

    a = np.asarray(ds.a.values[:2])
    text = _ood_message(sur, 2.0 * a)
    assert ("every input has coefficient values outside the training set's values 3 and 12 "
            "(at up to 100.0% of the nodes)") in text
    assert "contrast" not in text

    # one input of two: the reason names it, and a mix of causes gives both
    text = _ood_message(sur, np.stack([a[0], np.full((17, 17), 3.0)]))
    assert "contrast max/min is 1 in 1 of 2 inputs" in text
    assert "outside the training set" not in text
    text = _ood_message(sur, np.stack([2.0 * a[0], np.full((17, 17), 3.0)]))
    assert "1 of 2 inputs have coefficient values outside the training set's values" in text
    assert "contrast max/min is 1 in 1 of 2 inputs" in text


def test_grid_mismatch_is_refused(burgers):
    sur, ds = burgers
    with pytest.raises(ShapeError, match=r"must be on the model grid \(64,\).*resample=True"):
        sur.solve(np.zeros((2, 128)))


def test_nan_input_is_refused(burgers):
    sur, ds = burgers
    u0 = np.array(ds.u0.values[:2])
    u0[1, 5] = np.nan
    with pytest.raises(InputError, match=r"`u0` must be finite"):
        sur.solve(u0)


def test_wrong_problem_is_refused(burgers):
    sur, _ = burgers
    with pytest.raises(ShapeError, match="for this burgers surrogate.*input of another problem"):
        sur.solve(np.ones((2, 64, 64, 1)))


#: What each surrogate takes, as its shape errors begin.
_BURGERS_SHAPES = ("`u0` must be (n_samples, 64) or (64,) for this burgers surrogate (or another "
                   "grid, with resample=True); got shape ")
_DARCY_SHAPES = ("`a` must be (n_samples, 17, 17) or (17, 17) for this darcy surrogate (or "
                 "another square grid, with resample=True); got shape ")
_OTHER = ": input of another problem?"


@pytest.mark.parametrize(("which", "shape", "message"), [
    # a batch of Burgers inputs given to Darcy, and a batch of Darcy inputs given to Burgers
    ("darcy", (2, 512), f"{_DARCY_SHAPES}(2, 512), which looks like a batch of 1-D inputs{_OTHER}"),
    ("burgers", (2, 17, 17),
     f"{_BURGERS_SHAPES}(2, 17, 17), which looks like a batch of 2-D inputs{_OTHER}"),
    ("darcy", (512,), f"{_DARCY_SHAPES}(512,), which looks like one 1-D input{_OTHER}"),
    ("darcy", (2, 3, 17, 17),
     f"{_DARCY_SHAPES}(2, 3, 17, 17), which looks like a batch of 3-D inputs{_OTHER}"),
    ("darcy", (2, 17, 16), f"{_DARCY_SHAPES}(2, 17, 16), which is not a square grid."),
    ("darcy", (17, 16), f"{_DARCY_SHAPES}(17, 16), which is not a square grid."),
])
def test_a_shape_error_names_the_shapes_the_surrogate_takes(which, shape, message, request):
    """Either problem's surrogate says what it takes (model grid, batch or single input) and,
    for the other problem's input, what the input looks like."""
    sur, _ = request.getfixturevalue(which)
    with pytest.raises(ShapeError) as info:
        sur.solve(np.full(shape, 3.0))
    assert str(info.value) == message


def test_a_square_batch_off_the_model_grid_may_be_one_input_of_another_problem(burgers):
    sur, _ = burgers
    with pytest.raises(ShapeError, match=r"got \(17,\) \(from shape \(17, 17\), which could also "
                                         r"be one 2-D input: input of another problem\?\)\. Pass "
                                         r"resample=True"):
        sur.solve(np.ones((17, 17)))


def test_nonpositive_coefficient_is_refused(darcy):
    sur, _ = darcy
    with pytest.raises(InputError, match=r"`a` must be > 0"):
        sur.solve(-np.ones((17, 17)))
    a = np.full((2, 17, 17), 3.0)
    a[1, 4, 4] = -3.0
    with pytest.raises(InputError) as info:
        sur.solve(a)
    assert str(info.value) == "`a` must be > 0 everywhere; got minimum -3.0."  # not np.float64
    # its training solver says the same plainly
    with pytest.raises(InputError, match=r"the first -3\.0 at index \(1, 4, 4\)\.$"):
        sur.reference_solver().solve(a)


@pytest.mark.parametrize("which", ["burgers", "darcy"])
def test_an_empty_batch_is_refused_like_the_classical_solver_does(which, request):
    """Shape (0, n) / (0, n, n): an InputError naming the input, as the training data's solver
    (both go through ``solvers.contract.as_batch``), for numpy and xarray input alike."""
    sur, ds = request.getfixturevalue(which)
    name = sur.spec.input_name
    empty = ds[name].isel(sample=slice(0, 0))
    solver = sur.reference_solver()
    for inputs in (empty.values, empty):
        for obj in (sur, solver):
            with pytest.raises(InputError, match=r"must hold at least one sample; got shape "
                                                 r"\(0, "):
                obj.solve(inputs)
    with pytest.raises(InputError, match=rf"`{name}` must hold at least one sample"):
        sur.solve_with_report(empty.values)


def test_initial_guess_is_refused(burgers):
    sur, ds = burgers
    with pytest.raises(InputError, match="`initial_guess` must be None"):
        sur.solve(ds.u0.values, initial_guess=ds.u0.values)


def test_not_a_run_dir(tmp_path):
    with pytest.raises(InputError, match="run.json"):
        Surrogate.load(tmp_path)


def test_absurd_inputs_give_a_clear_error_not_non_finite_values(burgers):
    sur, ds = burgers
    u0 = ds["u0"].values[:2]
    with pytest.warns(OODWarning), pytest.raises(InputError, match="non-finite values for 2 of 2"):
        sur.solve(u0 * 1e300)
