"""A new model architecture in one module and one registration line: a pointwise MLP.

Used by ``tests/models/test_model_registry.py`` (registered for that module's tests only): the
config is a frozen dataclass on :class:`~neuralop_fem.models.ModelConfigBase` naming its family
and grid dimension, the model maps ``(batch, n, channels)`` to ``(batch, n, out_channels)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch
from torch import nn

from neuralop_fem.models import ModelConfigBase, register_model


@dataclass(frozen=True, kw_only=True)
class ToyConfig(ModelConfigBase):
    """A two-layer MLP applied at every grid point (no coupling between points)."""

    family: ClassVar[str] = "toy1d"
    spatial_dims: ClassVar[int] = 1

    in_channels: int = 1
    out_channels: int = 1
    width: int = 8

    def __post_init__(self) -> None:
        self._positive_int("in_channels", "out_channels", "width")


class ToyModel(nn.Module):
    """``u(x) = W2 gelu(W1 a(x) + b1) + b2`` at every point x."""

    def __init__(self, config: ToyConfig) -> None:
        super().__init__()
        self.config = config
        self.net = nn.Sequential(nn.Linear(config.in_channels, config.width), nn.GELU(),
                                 nn.Linear(config.width, config.out_channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def register() -> None:
    """The one registration line."""
    register_model(ToyConfig, ToyModel, presets={"burgers-toy": ToyConfig()})
