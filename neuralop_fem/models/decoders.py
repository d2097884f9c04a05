"""Decoders mapping latent fields (B, *spatial, d) to predictions (B, *spatial, C_out).

:class:`SpectralRegressor` (reference decoder ``ifft`` / ``ifft2``)::

    [h = Linear(d + m -> freq_dim)(concat(coords, x))          # 2D only ("spacial fc")]
    h = SpectralConv(... -> freq_dim)  x num_layers              # each followed by SiLU
    y = Linear(ff -> C_out)(SiLU(Linear(freq_dim -> ff)(h)))

:class:`PointwiseRegressor` (reference decoder ``pointwise``, inverse problem)::

    h = Linear(d + m -> d)(concat(coords, x))
    h = Dropout(SiLU(Linear(d -> d)(h)))  x num_layers
    y = Linear(d -> C_out)(h)
"""

from __future__ import annotations

import torch
from torch import nn

from .spectral import SpectralConv1d, SpectralConv2d

__all__ = ["PointwiseRegressor", "SpectralRegressor"]


def _with_coords(x: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
    c = coords.to(x.dtype).expand(*x.shape[:-1], coords.shape[-1])
    return torch.cat((x, c), dim=-1)


class SpectralRegressor(nn.Module):
    """Spectral-convolution decoder (see the module docstring).

    Parameters
    ----------
    in_channels : int
        Latent width d.
    out_channels : int
        Predicted channels.
    spatial_dims : {1, 2}
        Dimension of the grid.
    freq_dim, modes, num_layers, ff_dim : int
        Width and modes of the spectral convolutions, their number, final MLP width.
    coordinate_fc : bool
        Concatenate coordinates and apply ``Linear(d + m -> freq_dim)`` first.
    dropout : float
        Dropout on each spectral path's input.
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        *,
        spatial_dims: int,
        freq_dim: int,
        modes: int,
        num_layers: int,
        ff_dim: int,
        coordinate_fc: bool,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        conv = SpectralConv1d if spatial_dims == 1 else SpectralConv2d
        self.fc = nn.Linear(in_channels + spatial_dims, freq_dim) if coordinate_fc else None
        width = freq_dim if coordinate_fc else in_channels
        self.layers = nn.ModuleList(
            [
                conv(width if i == 0 else freq_dim, freq_dim, modes, dropout=dropout)
                for i in range(num_layers)
            ]
        )
        self.head = nn.Sequential(
            nn.Linear(freq_dim, ff_dim), nn.SiLU(), nn.Linear(ff_dim, out_channels)
        )

    def forward(self, x: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
        """Decode ``x`` (B, *spatial, d) with ``coords`` (*spatial, m)."""
        h = self.fc(_with_coords(x, coords)) if self.fc is not None else x
        for layer in self.layers:
            h = layer(h)
        return self.head(h)


class PointwiseRegressor(nn.Module):
    """Pointwise MLP decoder with coordinates (see the module docstring)."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        *,
        spatial_dims: int,
        num_layers: int,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        self.fc = nn.Linear(in_channels + spatial_dims, in_channels)
        self.layers = nn.Sequential(
            *[
                nn.Sequential(nn.Linear(in_channels, in_channels), nn.SiLU(), nn.Dropout(dropout))
                for _ in range(num_layers)
            ]
        )
        self.out = nn.Linear(in_channels, out_channels)

    def forward(self, x: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
        """Decode ``x`` (B, *spatial, d) with ``coords`` (*spatial, m)."""
        return self.out(self.layers(self.fc(_with_coords(x, coords))))
