"""Surrogate inference path: no diagnostics in ``solve``, the residual stencil, precision and
batch size (neuralop_fem.surrogate.inference, neuralop_fem.surrogate.stencil)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neuralop_fem.data import load_dataset
from neuralop_fem.errors import InputError
from neuralop_fem.surrogate import Surrogate
from neuralop_fem.surrogate import inference as inference_module
from neuralop_fem.surrogate.inference import auto_batch_size, predict
from neuralop_fem.surrogate.stencil import apply_fd_operator, fd_relative_residual
from neuralop_fem.surrogate.warmstart import relative_residual
from solvers import DarcyFDSolver, DarcyFEMSolver
from solvers._darcy_fd import assemble_fd
from tests._surrogate_fixtures import burgers_run, darcy_run


@pytest.fixture(scope="module")
def darcy(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("darcy")
    return Surrogate.load(darcy_run(tmp), device="cpu"), load_dataset(tmp / "d.nc")


@pytest.fixture(scope="module")
def burgers(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("burgers")
    return Surrogate.load(burgers_run(tmp), device="cpu"), load_dataset(tmp / "b.nc")


def _no_assembly(monkeypatch):
    """Make every sparse assembly of the Darcy system raise."""
    def refuse(*args, **kwargs):
        msg = "a sparse Darcy system was assembled"
        raise AssertionError(msg)

    monkeypatch.setattr("solvers._darcy_fd.assemble_fd", refuse)
    monkeypatch.setattr("solvers.darcy.assemble_fd", refuse)
    monkeypatch.setattr(DarcyFDSolver, "systems", refuse)
    monkeypatch.setattr(DarcyFEMSolver, "systems", refuse)


def test_solve_builds_no_sparse_system(darcy, monkeypatch):
    sur, ds = darcy
    a = np.asarray(ds.a.values[:3])
    want = sur.solve(a)
    _no_assembly(monkeypatch)
    np.testing.assert_array_equal(sur.solve(a), want)
    np.testing.assert_array_equal(sur.solve(a[0]), want[0])


def test_the_report_residual_needs_no_sparse_system_either(darcy, monkeypatch):
    """With the FD solver as reference, the report's residual is the torch stencil's."""
    sur, ds = darcy
    a = np.asarray(ds.a.values[:3])
    pred = sur.solve(a)
    want = relative_residual(sur.reference_solver(), a, pred)
    _no_assembly(monkeypatch)
    _, rep = sur.solve_with_report(a)
    # Same float64 sums in another order: round-off of the residual (~1e-16 * ||A u||/||b||).
    np.testing.assert_allclose(rep.residual, want, rtol=1e-10)


@pytest.mark.parametrize("averaging", ["harmonic", "arithmetic"])
def test_stencil_is_the_sparse_operator(averaging):
    rng = np.random.default_rng(0)
    n = 13
    a = np.exp(rng.normal(size=(3, n, n)))
    u = rng.normal(size=(3, n, n))
    mats = assemble_fd(a, averaging=averaging)
    want = np.stack([(m @ u[s, 1:-1, 1:-1].ravel()).reshape(n - 2, n - 2)
                     for s, m in enumerate(mats)])
    got = apply_fd_operator(torch.from_numpy(a), torch.from_numpy(u), averaging=averaging)
    # float64, at most 5 products summed in another order: a few ulp of the largest term.
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-13, atol=1e-13 * np.abs(want).max())
    solver = DarcyFDSolver(averaging=averaging, forcing=2.5)
    np.testing.assert_allclose(
        fd_relative_residual(a, u, forcing=2.5, averaging=averaging),
        relative_residual(solver, a, u), rtol=1e-12)


def test_stencil_residual_of_a_solution_is_the_solver_tolerance():
    a = np.exp(np.random.default_rng(1).normal(size=(2, 17, 17)))
    solver = DarcyFDSolver(linear_solver="direct")
    u = solver.solve(a)
    res = fd_relative_residual(a, u, forcing=1.0)
    assert (res < 1e-12).all()
    u_bad = u.copy()
    u_bad[1, 5, 5] = np.nan
    res = fd_relative_residual(a, u_bad, forcing=1.0)
    assert np.isfinite(res[0])
    assert np.isnan(res[1])


def test_stencil_checks_its_arguments():
    a = np.ones((1, 5, 5))
    with pytest.raises(InputError, match="`averaging` must be one of"):
        fd_relative_residual(a, a, forcing=1.0, averaging="geometric")
    with pytest.raises(InputError, match="`forcing` must be a finite nonzero"):
        fd_relative_residual(a, a, forcing=0.0)
    with pytest.raises(InputError, match=r"shape \(n_samples, n, n\)"):
        fd_relative_residual(a, np.ones((1, 5, 4)), forcing=1.0)


def test_residual_is_nan_without_a_discrete_system(burgers):
    sur, ds = burgers
    u0 = np.asarray(ds.u0.values[:2])
    assert np.isnan(sur.residual(u0, sur.solve(u0))).all()


def test_predict_in_parts_gives_whole_batches_and_all_samples(monkeypatch):
    calls = []

    def forward(x):
        calls.append(len(x))
        return 2.0 * x

    values = np.arange(10 * 4, dtype=np.float64).reshape(10, 4)
    # 4 float32 values = 16 bytes a sample: parts of 2 batches of 3 (96 of at most 100 bytes)
    monkeypatch.setattr(inference_module, "TRANSFER_BYTES", 100)
    out = predict(forward, values, device=torch.device("cpu"), dtype=torch.float32,
                  batch_size=3)
    np.testing.assert_array_equal(out, 2.0 * values)
    assert out.dtype == np.float64
    assert calls == [3, 3, 3, 1]
    calls.clear()
    monkeypatch.setattr(inference_module, "TRANSFER_BYTES", 8)  # under one sample: one batch
    out = predict(forward, values, device=torch.device("cpu"), dtype=torch.float32,
                  batch_size=4)
    np.testing.assert_array_equal(out, 2.0 * values)
    assert calls == [4, 4, 2]


def test_auto_batch_size_follows_memory():
    assert auto_batch_size(2**20, 2**30) == 512
    assert auto_batch_size(2**20, 2**40) == 1024  # capped
    assert auto_batch_size(3 * 2**20, 2**30) == 128
    assert auto_batch_size(2**31, 2**30) == 1


def test_batch_size_and_precision_options(darcy):
    sur, ds = darcy
    assert Surrogate(sur.operator, problem="darcy", resolution=17, device="cpu").batch_size == 16
    assert sur.config["precision"] == "float32"
    with pytest.raises(InputError, match="`batch_size`"):
        Surrogate(sur.operator, problem="darcy", resolution=17, device="cpu", batch_size=0)
    with pytest.raises(InputError, match="`precision` must be one of"):
        Surrogate(sur.operator, problem="darcy", resolution=17, device="cpu", precision="fp8")
    with pytest.raises(InputError, match="'tf32' needs a CUDA device"):
        Surrogate(sur.operator, problem="darcy", resolution=17, device="cpu", precision="tf32")


def test_bf16_inference_is_close_to_float32_and_leaves_the_model_alone(darcy):
    sur, ds = darcy
    a = np.asarray(ds.a.values[:4])
    want = sur.solve(a)
    low = Surrogate(sur.operator, problem="darcy", resolution=17, device="cpu",
                    precision="bf16", run_info=sur.run_info)
    got = low.solve(a)
    assert got.dtype == np.float64
    rel = np.linalg.norm((got - want).reshape(4, -1), axis=1) / np.linalg.norm(
        want.reshape(4, -1), axis=1)
    # bf16 keeps 8 significant bits (relative rounding 2^-9 ~ 2e-3 per value) in the model
    # body; a tiny one-layer model moves its output by that order, not more than 10x it.
    assert 0 < rel.max() < 2e-2
    np.testing.assert_array_equal(sur.solve(a), want)  # the float32 surrogate is unchanged
