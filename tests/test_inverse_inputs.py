"""The inverse path's inputs, as a user hands them over: DataArrays read by their dim names,
sign-flipped observations, contradictory options and absurd arguments refused by name."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
import xarray as xr

from neuralop_fem import Surrogate
from neuralop_fem.errors import InputError, ShapeError
from neuralop_fem.evaluation import compare
from neuralop_fem.evaluation.inverse_comparison import compare_inverse
from neuralop_fem.evaluation.run_comparison import compare_run
from solvers import DarcyFDSolver, DarcyInverseSolver
from solvers.darcy_inverse import (
    add_noise,
    admissible_start,
    coefficient_errors,
    paper_noise_to_relative,
    pool_coefficient,
)
from tests._surrogate_fixtures import inverse_run as _inverse_run

from .test_cli_errors import run_cli

N = 17


def _two_phase(n: int, k: int, seed: int) -> np.ndarray:
    """``k`` coefficients that differ along x and y (a transposed field is another one)."""
    rng = np.random.default_rng(seed)
    x = np.linspace(0.0, 1.0, n)
    out = []
    for _ in range(k):
        cx, cy = rng.uniform(0.2, 0.8, 2)
        out.append(np.where((x[:, None] - cx) ** 2 + 2 * (x[None, :] - cy) ** 2 < 0.1, 12.0, 3.0))
    return np.stack(out)


@pytest.fixture(scope="module")
def fields():
    a = _two_phase(N, 2, seed=4)
    a[:, : N // 2] *= 1.5  # not symmetric under x <-> y
    u = DarcyFDSolver().solve(a)
    return a, u


def _yx(values: np.ndarray, name: str) -> xr.DataArray:
    """``values`` (sample, x, y) as a DataArray stored (sample, y, x), as files store it."""
    x = np.linspace(0.0, 1.0, values.shape[-1])
    da = xr.DataArray(values, dims=("sample", "x", "y"), coords={"x": x, "y": x}, name=name)
    return da.transpose("sample", "y", "x")


def test_every_dataarray_input_is_read_by_dim_name(fields):
    """The inverse path's helpers take a (sample, y, x) DataArray as the (x, y) field it
    names, never by position."""
    a, u = fields
    assert not np.allclose(a, a.transpose(0, 2, 1))  # the test can tell the two orders apart
    est = a * 1.1
    est[:, 0, :] = 20.0  # an error along one edge x = 0 only
    want = coefficient_errors(est, a, pool=4)
    for got in (coefficient_errors(_yx(est, "a"), a, pool=4),
                coefficient_errors(est, _yx(a, "a"), pool=4)):
        for key in want:
            np.testing.assert_array_equal(got[key], want[key])
    np.testing.assert_array_equal(pool_coefficient(_yx(est, "a"), factor=4),
                                  pool_coefficient(est, factor=4))
    np.testing.assert_array_equal(admissible_start(_yx(est - 4.0, "a")),
                                  admissible_start(est - 4.0))
    sigma = u.std(axis=0) + 1e-3 * np.linspace(0.0, 1.0, N)[:, None]  # varies along x
    noisy = add_noise(_yx(u, "u"), 0.1, rng=np.random.default_rng(1), std_field=sigma)
    np.testing.assert_array_equal(
        noisy, add_noise(u, 0.1, rng=np.random.default_rng(1), std_field=sigma))
    np.testing.assert_array_equal(paper_noise_to_relative(0.1, _yx(u, "u"), observed=u),
                                  paper_noise_to_relative(0.1, u, observed=u))
    # the inversion: observations and start by name too
    solver = DarcyInverseSolver(maxiter=3, levels=1)
    from_yx = solver.solve(_yx(u, "u"), initial_guess=_yx(a, "a"))
    np.testing.assert_allclose(from_yx.transpose("sample", "x", "y").values,
                               solver.solve(u, initial_guess=a), rtol=0, atol=1e-12)


_CALLS = {  # the argument named in the message: the call with a DataArray of other dims
    "initial_guess": lambda u, odd: DarcyInverseSolver(maxiter=1).solve(u, initial_guess=odd),
    "a_true": lambda u, odd: coefficient_errors(odd.values, odd),
    "u": lambda u, odd: add_noise(odd, 0.1, rng=np.random.default_rng(0)),
    "a": lambda u, odd: admissible_start(odd),
}


@pytest.mark.parametrize("name", sorted(_CALLS))
def test_a_dataarray_with_other_dims_is_refused_naming_the_argument(fields, name):
    a, u = fields
    odd = xr.DataArray(a, dims=("sample", "row", "col"))
    with pytest.raises(ShapeError, match=rf"^`{name}` must have dims \('sample', 'x', 'y'\) or "
                                         r"\('x', 'y'\).*got \('sample', 'row', 'col'\)"):
        _CALLS[name](u, odd)


def test_partly_sign_flipped_observations_warn(fields):
    _, u = fields
    flipped = u.copy()
    flipped[0, :, : N // 3] *= -1.0  # a third of the domain of sample 0 of the wrong sign
    solver = DarcyInverseSolver(maxiter=2, levels=1)
    with pytest.warns(UserWarning, match=r"`u_obs` looks sign-flipped: with forcing 1 the "
                                         r"solution is positive inside .* sample 0 .*\(1 of 2 "
                                         r"samples like it\)"):
        solver.solve(flipped)
    noisy = add_noise(u, 0.3, rng=np.random.default_rng(2))  # noise crosses 0 near the edges
    assert (noisy[:, 1:-1, 1:-1] < 0).any()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        solver.solve(noisy, noise_level=0.3)  # what its noise explains: no warning
    with pytest.raises(InputError, match="must have the sign of the forcing"):
        solver.solve(-u)  # wholly flipped: no coefficient gives it


def test_absurd_lbfgs_memory_and_noise_levels_are_refused_by_name(fields):
    a, u = fields
    with pytest.raises(InputError, match=r"`memory` must be an int in \[1, 1000\].*got "
                                         r"1000000000"):
        DarcyInverseSolver(memory=10**9)

    class Constant:  # a candidate answering with the truth itself
        problem = "darcy-inverse"

        def solve(self, inputs):
            return a.copy()

        def solve_with_report(self, inputs):
            raise NotImplementedError

    with pytest.raises(ShapeError, match=r"`noise_level` must be a number or have shape "
                                         r"\(2,\), one per sample; got shape \(3,\)"):
        compare_inverse(DarcyInverseSolver(maxiter=1), Constant(), u, truth=a,
                        noise_level=[0.01, 0.02, 0.03])
    with pytest.raises(InputError, match=r"`warm_phases` snap the start of the warm-started "
                                         r"inversion, so they cannot go with warm_start=False"):
        compare(DarcyInverseSolver(maxiter=1), Constant(), u, reference_solution=a,
                warm_phases=(3.0, 12.0))


@pytest.fixture(scope="module")
def inverse_run(tmp_path_factory):
    return _inverse_run(tmp_path_factory.mktemp("inverse"), n=29)


def test_an_inverse_surrogate_warns_on_sign_flipped_observations(inverse_run):
    run, _, _ = inverse_run
    sur = Surrogate.load(run)
    u, _ = sur.test_split(max_samples=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        sur.solve(u)
    with pytest.warns(UserWarning, match=r"darcy-inverse surrogate: `u` looks sign-flipped"):
        sur.solve(-u)
    # dims by name: observations stored (sample, y, x) give the answer of (sample, x, y)
    np.testing.assert_array_equal(sur.solve(u.transpose("sample", "y", "x"))
                                  .transpose("sample", "x", "y").values, sur.solve(u).values)


def test_contradictory_warm_start_options_are_one_line_and_write_nothing(inverse_run, tmp_path):
    run, data, _ = inverse_run
    out = tmp_path / "report"
    proc = run_cli(["compare", str(run), "--data", str(data), "--out", str(out),
                    "--no-warm-start", "--snap-warm-start"])
    assert proc.returncode == 2
    assert proc.stderr == ("neuralop-fem compare: error: --snap-warm-start snaps the start of "
                           "the warm-started inversion, so it cannot go with --no-warm-start "
                           "(no warm start); got both.\n")
    assert not out.exists()


def test_an_unwritable_report_folder_is_refused_before_the_work(inverse_run, tmp_path,
                                                              monkeypatch):
    """``compare_run`` into a folder it cannot write: an InputError naming `out` before
    anything is loaded or solved (not a PermissionError once the report is written). The
    tests may run as root, whom permissions do not stop: the folder's access is denied by
    replacing ``os.access``."""
    run, data, _ = inverse_run
    locked = tmp_path / "locked"
    locked.mkdir()
    real = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, *a, **k: False if os.fspath(path) ==
                        os.fspath(locked) else real(path, mode, *a, **k))
    loaded = []
    monkeypatch.setattr(Surrogate, "load", classmethod(lambda cls, *a, **k: loaded.append(a)))
    with pytest.raises(InputError, match=r"`out` must be a writable directory; got "
                                         r".*locked/report.* is not writable\)"):
        compare_run(run, data=data, out=locked / "report")
    assert loaded == []
    assert list(locked.iterdir()) == []
