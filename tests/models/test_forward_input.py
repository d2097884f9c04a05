"""The models' forward entry: input of another precision, an empty batch and non-float input
are refused with a message that says what to do."""

from __future__ import annotations

import pytest
import torch

from neuralop_fem.data.normalizer import UnitGaussianNormalizer
from neuralop_fem.models import NormalizedOperator, build_model
from solvers.errors import InputError

TINY = {
    "burgers-galerkin": {"d_model": 8, "num_layers": 1, "d_ff": 8, "modes": 4, "freq_dim": 4},
    "burgers-fno": {"width": 4, "num_layers": 2, "modes": 4, "projection": 8},
    "darcy-galerkin": {"d_model": 12, "num_layers": 1, "d_ff": 8, "modes": 4, "freq_dim": 4},
    "darcy-fno": {"width": 4, "num_layers": 2, "modes": 4, "projection": 8},
}


def _model(name):
    torch.manual_seed(0)
    return build_model(name, **TINY[name]).eval()


def _shape(name, batch=2):
    return (batch, 29, 29, 1) if name.startswith("darcy") else (batch, 32, 1)


@pytest.mark.parametrize("name", sorted(TINY))
@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_input_of_another_precision_is_refused_with_the_cast_to_make(name, dtype):
    """Like torch's layers, a model never changes its input's precision silently."""
    model = _model(name)
    x = torch.rand(_shape(name), dtype=dtype)
    with pytest.raises(InputError, match=rf"`x` must have the model's dtype torch.float32; got "
                                         rf"{dtype}\. Cast the input"):
        model(x)
    with torch.no_grad():
        assert model(x.float()).dtype == torch.float32


def test_a_float64_model_takes_float64_and_refuses_float32():
    model = _model("burgers-galerkin").double()
    x = torch.rand(_shape("burgers-galerkin"), dtype=torch.float64)
    with torch.no_grad():
        assert model(x).dtype == torch.float64
    with pytest.raises(InputError, match=r"model's dtype torch.float64; got torch.float32"):
        model(x.float())


def test_the_wrapper_refuses_float64_before_its_float32_normalisers():
    model = _model("darcy-galerkin")
    fields = torch.rand(4, 29, 29, 1) + 1.0
    op = NormalizedOperator(model, input_normalizer=UnitGaussianNormalizer.fit(fields),
                            output_normalizer=UnitGaussianNormalizer.fit(fields), dirichlet=True)
    with pytest.raises(InputError, match=r"model's dtype torch.float32; got torch.float64"):
        op(fields[:2].double())
    with torch.no_grad():
        y = op(fields[:2])
    assert y.shape == (2, 29, 29, 1)
    assert y.dtype == torch.float32


@pytest.mark.parametrize("name", sorted(TINY))
def test_an_empty_batch_is_a_clear_error(name):
    model = _model(name)
    shape = _shape(name, batch=0)
    with pytest.raises(InputError, match=rf"`x` must hold at least one sample; got an empty "
                                         rf"batch of shape \({shape[0]}, {shape[1]}"):
        model(torch.zeros(shape))
    with pytest.raises(InputError, match="at least one sample"):
        NormalizedOperator(model)(torch.zeros(shape))


@pytest.mark.parametrize("dtype", [torch.int64, torch.bool, torch.complex64])
def test_non_floating_input_is_a_clear_error(dtype):
    model = _model("burgers-fno")
    with pytest.raises(InputError, match=rf"`x` must be a floating-point tensor; got dtype "
                                         rf"{dtype}"):
        model(torch.zeros(_shape("burgers-fno"), dtype=dtype))
