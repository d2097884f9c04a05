"""The Dirichlet edges of a prediction: the mask against a loop, the settings and their files."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neuralop_fem.errors import RunDirectoryError
from neuralop_fem.models import NormalizedOperator, build_model
from neuralop_fem.models.wrapper import dirichlet_edges_of, pin_edges
from neuralop_fem.runs.weights import read_payload, save_weights
from neuralop_fem.training.amp import AmpForward
from neuralop_fem.training.checkpoint import build_operator, operator_payload
from solvers.errors import InputError

EDGES = [(True, True), (True, False), (False, True), (False, False)]


def _naive_mask(n1: int, n2: int, first: bool, last: bool) -> np.ndarray:
    """True where a point is pinned: on the first (last) row or column when ``first``
    (``last``), one point at a time."""
    mask = np.zeros((n1, n2), dtype=bool)
    for i in range(n1):
        for j in range(n2):
            on_first = i == 0 or j == 0
            on_last = i == n1 - 1 or j == n2 - 1
            mask[i, j] = (first and on_first) or (last and on_last)
    return mask


@pytest.mark.parametrize("edges", EDGES)
@pytest.mark.parametrize("shape", [(2, 5, 5, 1), (1, 4, 6, 3)])
def test_pinned_points_are_zero_and_the_rest_untouched(edges, shape):
    y = torch.randn(*shape, generator=torch.Generator().manual_seed(0)) + 10.0  # no zeros
    out = pin_edges(y, edges).numpy()
    mask = _naive_mask(shape[1], shape[2], *edges)
    assert out.shape == shape
    assert (out[:, mask] == 0).all()
    np.testing.assert_array_equal(out[:, ~mask], y.numpy()[:, ~mask])


def test_gradients_reach_the_free_points_only():
    y = torch.randn(1, 6, 6, 1, requires_grad=True)
    pin_edges(y, (True, False)).sum().backward()
    np.testing.assert_array_equal(y.grad[0, ..., 0].numpy() == 1.0,
                                  ~_naive_mask(6, 6, True, False))


def test_settings_and_their_errors():
    assert dirichlet_edges_of(True) == (True, True)
    assert dirichlet_edges_of(False) == (False, False)
    assert dirichlet_edges_of([True, False]) == (True, False)
    for bad in ("yes", (True,), (1, 0), None):
        with pytest.raises(InputError, match="`dirichlet` must be a bool or a pair of bools"):
            dirichlet_edges_of(bad)
    op = NormalizedOperator(build_model("darcy-fno", modes=2, width=4), dirichlet=(True, False))
    assert op.dirichlet
    assert op.dirichlet_edges == (True, False)
    assert not NormalizedOperator(build_model("darcy-fno", modes=2, width=4)).dirichlet


@pytest.mark.parametrize("edges", EDGES)
def test_edges_survive_checkpoint_zoo_file_and_bf16(tmp_path, edges):
    torch.manual_seed(0)
    op = NormalizedOperator(build_model("darcy-fno", modes=2, width=4), dirichlet=edges).eval()
    x = torch.rand(2, 6, 6, 1) + 1.0
    want = _naive_mask(6, 6, *edges)
    payload = operator_payload(op)
    save_weights(payload, tmp_path / "w.safetensors")
    for source in (payload, read_payload(tmp_path / "w.safetensors")):
        loaded = build_operator(source)
        assert loaded.dirichlet_edges == edges
        with torch.no_grad():
            pred = loaded(x)[..., 0].numpy()
            np.testing.assert_array_equal(pred, op(x)[..., 0].numpy())
        assert (pred[:, want] == 0).all()
        assert (pred[:, ~want] != 0).all()
    with torch.no_grad():
        rounded = AmpForward(op, amp="bf16", device_type="cpu")(x)[..., 0].numpy()
    assert (rounded[:, want] == 0).all()
    assert (rounded[:, ~want] != 0).all()


def test_a_payload_without_edges_pins_as_its_dirichlet_flag_says():
    # Files written before the edges were recorded hold `dirichlet` alone.
    op = NormalizedOperator(build_model("darcy-fno", modes=2, width=4), dirichlet=True)
    old = {k: v for k, v in operator_payload(op).items() if k != "dirichlet_edges"}
    assert build_operator(old).dirichlet_edges == (True, True)
    old["dirichlet"] = False
    assert build_operator(old).dirichlet_edges == (False, False)
    bad = {**operator_payload(op), "dirichlet_edges": [False, False]}
    with pytest.raises(RunDirectoryError, match="field `dirichlet_edges` must be two booleans"):
        build_operator(bad, source="best.pt")
