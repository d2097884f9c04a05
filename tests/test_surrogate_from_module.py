"""Surrogate.from_module: any torch module behind the solver contract and compare."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neuralop_fem import Surrogate, compare
from neuralop_fem.errors import InputError, ShapeError
from solvers.darcy import DarcyFDSolver


class CumsumChannelsFirst(torch.nn.Module):
    """(batch, 1, n) -> cumulative sum along the grid: wrong axes would show."""

    def forward(self, x):
        assert x.shape[1] == 1
        return torch.cumsum(x, dim=-1)


class CumsumChannelsLast(torch.nn.Module):
    def forward(self, x):
        assert x.shape[-1] == 1
        return torch.cumsum(x, dim=-2)


@pytest.mark.parametrize(("module", "layout"), [
    (CumsumChannelsFirst(), "channels_first"),
    (CumsumChannelsLast(), "channels_last"),
    (torch.nn.Flatten(0, 0), "no_channel"),  # identity on (batch, n)
])
def test_layouts_against_a_direct_call(rng, module, layout):
    u0 = rng.standard_normal((5, 16))
    got = Surrogate.from_module(module, problem="burgers", resolution=16, layout=layout,
                                device="cpu", batch_size=2).solve(u0)
    # The naive reference: the same computation on the float32 inputs, by hand.
    x = u0.astype(np.float32)
    want = x if layout == "no_channel" else np.cumsum(x, axis=-1, dtype=np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


class SecondChannel(torch.nn.Module):
    """Returns the y coordinate channel of a channels-first (batch, 3, n, n) input."""

    def forward(self, x):
        return x[:, 2:3]


def test_coordinates_are_appended_on_the_problem_grid(rng):
    a = rng.random((2, 9, 9)) + 1.0
    s = Surrogate.from_module(SecondChannel(), problem="darcy", resolution=9,
                              layout="channels_first", with_coordinates=True, device="cpu")
    y = np.linspace(0, 1, 9)
    np.testing.assert_allclose(s.solve(a), np.broadcast_to(y, (2, 9, 9)), atol=1e-7)


class SolverInside(torch.nn.Module):
    """An oracle: the reference solver itself, behind a channels-first torch module."""

    def __init__(self):
        super().__init__()
        self.anchor = torch.nn.Parameter(torch.zeros((), dtype=torch.float64))

    def forward(self, x):
        u = DarcyFDSolver().solve(x[:, 0].detach().numpy())
        return torch.from_numpy(u)[:, None] + self.anchor


def test_compare_an_oracle_module_gives_zero_error(rng):
    a = np.where(rng.standard_normal((3, 17, 17)) > 0, 12.0, 3.0)
    surrogate = Surrogate.from_module(SolverInside(), problem="darcy", resolution=17,
                                      layout="channels_first", device="cpu")
    result = compare(DarcyFDSolver(), surrogate, a)
    # float64 module (its parameter's type): the same numbers as the reference.
    assert float(result["rel_l2"].max()) < 1e-12


def test_bad_layout_and_bad_output_are_clear(rng):
    with pytest.raises(InputError, match="`layout` must be one of"):
        Surrogate.from_module(torch.nn.Identity(), problem="burgers", resolution=8,
                              layout="NCHW")
    wrong = Surrogate.from_module(torch.nn.Flatten(), problem="darcy", resolution=8,
                                  layout="channels_first", device="cpu")
    with pytest.raises(ShapeError, match=r"one channel on the input grid, shape \(1, 1, 8, 8\)"):
        wrong.solve(np.ones((1, 8, 8)))


def test_a_neuraloperator_fno_runs_through_compare(rng):
    neuralop = pytest.importorskip("neuralop")
    torch.manual_seed(0)
    fno = neuralop.models.FNO(n_modes=(4, 4), in_channels=1, out_channels=1,
                              hidden_channels=8, n_layers=2)
    s = Surrogate.from_module(fno, problem="darcy", resolution=16, layout="channels_first",
                              device="cpu")
    a = np.where(rng.standard_normal((2, 16, 16)) > 0, 12.0, 3.0)
    with torch.no_grad():
        want = fno(torch.from_numpy(a[:, None]).float())[:, 0].double().numpy()
    np.testing.assert_allclose(s.solve(a), want, rtol=1e-6, atol=1e-7)
    result = compare(DarcyFDSolver(), s, a)
    assert np.isfinite(result["rel_l2"].values).all()
