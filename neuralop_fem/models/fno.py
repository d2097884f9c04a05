r"""Fourier Neural Operator baselines (Li et al. 2021) without batch norm, as in Cao 2021.

FNO1d, input (B, n, C_in) on the periodic grid ``x_i = i/n``; FNO2d, input (B, n, n, C_in)
on the node grid ``x_i = i/(n-1)``::

    h = Linear(C_in + m -> width)(concat(u, coords))
    h = ReLU(K_l(h) + W_l h)  for l < L;   h = K_L(h) + W_L h
    y = Linear(projection -> C_out)(ReLU(Linear(width -> projection)(h)))

with ``K_l`` the spectral convolution of :mod:`~neuralop_fem.models.spectral` (real
parameters, ``init="fno"``) and ``W_l`` pointwise linear maps (the original 1x1
convolutions). No padding is applied in 2D (the original Darcy script did not pad),
so the Dirichlet boundary is left to :class:`~neuralop_fem.models.wrapper.NormalizedOperator`.
Parameter counts: 549,569 (1D defaults), 2,368,001 (2D defaults), Table 5's 550k / 2.37M.
"""

from __future__ import annotations

from typing import ClassVar

import torch
from torch import nn

from ._grid import modes_hint, node_grid_2d, periodic_grid_1d, prepare_input
from .config import FNO1dConfig, FNO2dConfig
from .spectral import SpectralConv1d, SpectralConv2d

__all__ = ["FNO1d", "FNO2d"]


class _FNO(nn.Module):
    spatial_dims: int
    #: Submodules bf16 autocast leaves in float32 (``neuralop_fem.training.amp``): the lifting
    #: and the projection.
    float32_parts: ClassVar[tuple[str, ...]] = ("lift", "proj")

    def __init__(self, config: FNO1dConfig) -> None:
        super().__init__()
        self.config = config
        conv = SpectralConv1d if self.spatial_dims == 1 else SpectralConv2d
        self.lift = nn.Linear(config.in_channels + self.spatial_dims, config.width)
        self.layers = nn.ModuleList(
            [
                conv(
                    config.width, config.width, config.modes, init="fno",
                    activation="relu" if i < config.num_layers - 1 else "none",
                )
                for i in range(config.num_layers)
            ]
        )
        self.proj = nn.Sequential(
            nn.Linear(config.width, config.projection), nn.ReLU(),
            nn.Linear(config.projection, config.out_channels),
        )

    @property
    def min_resolution(self) -> int:
        """Smallest n with room for the Fourier modes."""
        m = self.config.modes
        return max(2, 2 * m - 2) if self.spatial_dims == 1 else 2 * m

    def max_modes(self, n: int) -> int:
        """Largest ``modes`` this architecture supports at resolution ``n`` (0: none)."""
        return n // 2 + 1 if self.spatial_dims == 1 and n >= 2 else n // 2

    def resolution_hint(self, n: int) -> str:
        """How to fit the model to a grid of ``n`` points below :attr:`min_resolution`."""
        return modes_hint(self.config.modes, self.max_modes(n), n)

    def _coords(self, n: int, x: torch.Tensor) -> torch.Tensor:
        if self.spatial_dims == 1:
            return periodic_grid_1d(n, dtype=x.dtype, device=x.device)
        return node_grid_2d(n, dtype=x.dtype, device=x.device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Predict (B, n[, n], C_out) from ``x`` (B, n[, n], C_in), in the model's dtype.

        A floating-point ``x`` of another precision (e.g. float64) is cast to the model's dtype.

        Raises
        ------
        ShapeError
            If ``x`` has the wrong layout, channel count or a resolution below
            ``min_resolution``.
        InputError
            For an empty batch (B = 0) or a tensor that is not floating point.
        """
        x, n = prepare_input(
            x, dtype=self.lift.weight.dtype, spatial_dims=self.spatial_dims,
            channels=self.config.in_channels, min_size=self.min_resolution,
            hint=self.resolution_hint,
        )
        coords = self._coords(n, x)
        h = self.lift(torch.cat((x, coords.expand(*x.shape[:-1], self.spatial_dims)), dim=-1))
        for layer in self.layers:
            h = layer(h)
        return self.proj(h)


class FNO1d(_FNO):
    """1D FNO baseline; see the module docstring. ``config``: :class:`FNO1dConfig`."""

    spatial_dims = 1


class FNO2d(_FNO):
    """2D FNO baseline; see the module docstring. ``config``: :class:`FNO2dConfig`."""

    spatial_dims = 2

    def __init__(self, config: FNO2dConfig) -> None:
        super().__init__(config)
