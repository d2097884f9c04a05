"""Configs, presets, build_model errors, save/load and the normalising wrapper."""

from __future__ import annotations

import json

import pytest
import torch
from torch import nn

from neuralop_fem.models import (
    PRESETS,
    NormalizedOperator,
    Transformer1dConfig,
    Transformer2dConfig,
    build_model,
    load_model,
    save_model,
)
from solvers.errors import InputError, ShapeError


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_config_json_round_trip(name: str) -> None:
    config = PRESETS[name]
    data = json.loads(json.dumps(config.to_dict()))
    assert type(config).from_dict(data) == config


def test_from_dict_rejects_unknown_keys() -> None:
    data = PRESETS["burgers-galerkin"].to_dict() | {"n_hidden": 96}
    with pytest.raises(InputError, match=r"Unknown Transformer1dConfig key\(s\) \['n_hidden'\]"):
        Transformer1dConfig.from_dict(data)


def test_unknown_preset_lists_presets() -> None:
    match = r"Unknown preset 'darcy-gt'\. Available: .*'darcy-galerkin'"
    with pytest.raises(InputError, match=match):
        build_model("darcy-gt")


def test_unknown_override_lists_valid_names() -> None:
    with pytest.raises(InputError, match=r"\['hidden'\]; valid keys: in_channels, .*d_model"):
        build_model("burgers-galerkin", hidden=3)


def test_build_model_rejects_other_objects() -> None:
    with pytest.raises(InputError, match=r"`preset_or_config` must be a preset name or one of"):
        build_model({"d_model": 4})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("attention", "cosine", r"`attention` must be one of 'galerkin'.*got 'cosine'"),
        ("norm_scheme", "pre", r"`norm_scheme` must be one of 'attention', 'post'; got 'pre'"),
        ("d_model", 0, r"`d_model` must be an integer >= 1; got 0"),
        ("num_heads", 5, r"`d_model` must be divisible by `num_heads`=5; got 96"),
        ("encoder_dropout", 1.0, r"`encoder_dropout` must be a rate in \[0, 1\); got 1.0"),
        ("norm_eps", 0.0, r"`norm_eps` must be a finite number > 0; got 0.0"),
        ("fourier_scale", "d", r"`fourier_scale` must be one of 'sqrt', 'none'; got 'd'"),
    ],
)
def test_invalid_config_values(field: str, value: object, match: str) -> None:
    with pytest.raises(InputError, match=match):
        Transformer1dConfig(**{field: value})


def test_invalid_coarse_ratio() -> None:
    with pytest.raises(InputError, match=r"`coarse_ratio` must be a float in \(0, 1\]; got 1.5"):
        Transformer2dConfig(coarse_ratio=1.5)


def test_configs_are_frozen() -> None:
    with pytest.raises(AttributeError):
        PRESETS["burgers-galerkin"].d_model = 3  # type: ignore[misc]


@pytest.mark.parametrize("name", ["burgers-fourier", "darcy-inverse-galerkin", "darcy-fno"])
def test_save_load_gives_identical_outputs(name: str, tmp_path) -> None:
    torch.manual_seed(0)
    model = build_model(name, num_layers=2).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.01 * torch.randn_like(p))  # not the init: the weights must be restored
    path = tmp_path / "model.pt"
    save_model(model, path)
    loaded = load_model(path)
    assert loaded.config == model.config
    assert not loaded.training
    x = torch.randn((2, 29, 29, 1) if name.startswith("darcy") else (2, 40, 1))
    with torch.no_grad():
        torch.testing.assert_close(loaded(x), model(x), rtol=0, atol=0)


def test_save_rejects_foreign_model(tmp_path) -> None:
    match = r"`model` must be built by neuralop_fem.models.build_model"
    with pytest.raises(InputError, match=match):
        save_model(nn.Linear(2, 2), tmp_path / "x.pt")


def test_load_rejects_foreign_file(tmp_path) -> None:
    path = tmp_path / "x.pt"
    torch.save({"weights": torch.zeros(2)}, path)
    with pytest.raises(InputError, match=r"`path` must be a model file written by save_model"):
        load_model(path)


class _Affine(nn.Module):
    """Stand-in normaliser with the UnitGaussianNormalizer interface."""

    def __init__(self, mean: float, std: float) -> None:
        super().__init__()
        self.mean, self.std = mean, std

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.mean) / self.std

    def decode(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.std + self.mean


def test_wrapper_normalises_and_zeroes_the_dirichlet_ring() -> None:
    torch.manual_seed(0)
    model = build_model("darcy-galerkin", num_layers=1).eval()
    wrapped = NormalizedOperator(
        model, input_normalizer=_Affine(7.0, 4.0), output_normalizer=_Affine(5.0, 2.0),
        dirichlet=True,
    )
    x = 3.0 + 9.0 * torch.rand(2, 29, 29, 1)
    with torch.no_grad():
        y = wrapped(x)
        inner = model((x - 7.0) / 4.0) * 2.0 + 5.0
    ring = torch.ones(29, 29, dtype=torch.bool)
    ring[1:-1, 1:-1] = False
    assert torch.all(y[:, ring] == 0.0)
    torch.testing.assert_close(y[:, 1:-1, 1:-1], inner[:, 1:-1, 1:-1], rtol=0, atol=0)


def test_wrapper_without_normalisers_is_the_model() -> None:
    model = build_model("burgers-galerkin", num_layers=1).eval()
    x = torch.randn(1, 32, 1)
    with torch.no_grad():
        torch.testing.assert_close(NormalizedOperator(model)(x), model(x), rtol=0, atol=0)


def test_wrapper_dirichlet_needs_2d_output() -> None:
    wrapped = NormalizedOperator(build_model("burgers-galerkin", num_layers=1), dirichlet=True)
    with pytest.raises(ShapeError, match=r"`dirichlet=True` needs a 2D prediction"):
        wrapped(torch.randn(1, 32, 1))
