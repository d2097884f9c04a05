"""Galerkin / Fourier Transformer operator learners (Cao 2021, §5.1-5.3).

:class:`Transformer1d` (Burgers, Fig. 4), input (B, n, C_in) on the periodic grid
``x_i = i/n``::

    Linear(C_in -> d) -> num_layers x EncoderLayer(pos = x_i) -> Dropout
    -> SpectralRegressor(1D) -> (B, n, C_out)

:class:`Transformer2d` (Darcy, Fig. 5), input (B, n, n, C_in) on the node grid
``x_i = i/(n-1)``; the attention grid ``n_c`` and the CiNN intermediate ``n_m`` are
derived from n by the rule in :class:`~neuralop_fem.models.config.Transformer2dConfig`::

    CiNN down (n -> n_m -> n_c) -> Dropout -> num_layers x EncoderLayer(pos = coarse grid)
    -> CiNN up (n_c -> n_m -> n, or conv only when output_grid="coarse") -> Dropout
    -> SpectralRegressor(2D, fine coords) | PointwiseRegressor(coarse coords)
    -> (B, n, n, C_out)  or  (B, n_c, n_c, C_out) for output_grid="coarse"

The models contain no data normalisers and no boundary condition: wrap them in
:class:`~neuralop_fem.models.wrapper.NormalizedOperator` for that.
The same weights run at any resolution that is large enough for the Fourier modes.
"""

from __future__ import annotations

from typing import ClassVar

import torch
from torch import nn

from ._grid import (
    coarse_size,
    middle_size,
    modes_hint,
    node_grid_2d,
    periodic_grid_1d,
    prepare_input,
)
from .config import Transformer1dConfig, Transformer2dConfig
from .decoders import PointwiseRegressor, SpectralRegressor
from .encoder import EncoderLayer
from .sampling import CiNNDownsampler, CiNNUpsampler

__all__ = ["Transformer1d", "Transformer2d"]


def _encoder_layers(
    config: Transformer1dConfig | Transformer2dConfig, pos_dim: int
) -> nn.ModuleList:
    return nn.ModuleList(
        [
            EncoderLayer(
                config.d_model, config.d_ff, num_heads=config.num_heads, pos_dim=pos_dim,
                attention=config.attention, norm_scheme=config.norm_scheme,
                norm_eps=config.norm_eps, attention_dropout=config.attention_dropout,
                encoder_dropout=config.encoder_dropout, ffn_dropout=config.ffn_dropout,
                xavier_gain=config.xavier_gain, diagonal_weight=config.diagonal_weight,
                fourier_scale=config.fourier_scale, afno_blocks=config.afno_blocks,
                afno_hidden_factor=config.afno_hidden_factor,
                afno_sparsity=config.afno_sparsity,
            )
            for _ in range(config.num_layers)
        ]
    )


def _dtype_of(model: nn.Module) -> torch.dtype:
    return next(model.parameters()).dtype


class Transformer1d(nn.Module):
    """1D attention-based operator learner (Burgers; the reference ``SimpleTransformer``).

    Parameters
    ----------
    config : Transformer1dConfig
        All hyper-parameters; see the config's docstring.

    Examples
    --------
    >>> import torch
    >>> from neuralop_fem.models import build_model
    >>> model = build_model("burgers-galerkin")
    >>> model(torch.zeros(2, 64, 1)).shape
    torch.Size([2, 64, 1])
    """

    #: Submodules bf16 autocast leaves in float32 (``neuralop_fem.training.amp``): the input
    #: layer and the decoder, so the residual stream between them is a float32 sum.
    float32_parts: ClassVar[tuple[str, ...]] = ("input_proj", "decoder")

    def __init__(self, config: Transformer1dConfig) -> None:
        super().__init__()
        self.config = config
        self.input_proj = nn.Linear(config.in_channels, config.d_model)
        self.layers = _encoder_layers(config, pos_dim=1)
        self.dropout = nn.Dropout(config.dropout)
        self.decoder = SpectralRegressor(
            config.d_model, config.out_channels, spatial_dims=1, freq_dim=config.freq_dim,
            modes=config.modes, num_layers=config.num_regressor_layers,
            ff_dim=config.decoder_ff, coordinate_fc=False, dropout=config.decoder_dropout,
        )

    @property
    def min_resolution(self) -> int:
        """Smallest n the spectral decoder supports (``modes <= n // 2 + 1``)."""
        return max(2, 2 * self.config.modes - 2)

    def max_modes(self, n: int) -> int:
        """Largest ``modes`` the spectral decoder supports at resolution ``n`` (0: none)."""
        return n // 2 + 1 if n >= 2 else 0

    def resolution_hint(self, n: int) -> str:
        """How to fit the model to a grid of ``n`` points below :attr:`min_resolution`."""
        return modes_hint(self.config.modes, self.max_modes(n), n)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Predict (B, n, C_out) from the input function ``x`` (B, n, C_in).

        A floating-point ``x`` of another precision (e.g. float64) is cast to the model's
        dtype, in which the prediction is returned.

        Raises
        ------
        ShapeError
            If ``x`` is not (B, n, in_channels) with ``n >= min_resolution``.
        InputError
            For an empty batch (B = 0) or a tensor that is not floating point.
        """
        x, n = prepare_input(
            x, dtype=_dtype_of(self), spatial_dims=1,
            channels=self.config.in_channels, min_size=self.min_resolution,
            hint=self.resolution_hint,
        )
        pos = periodic_grid_1d(n, dtype=x.dtype, device=x.device)
        h = self.input_proj(x)
        for layer in self.layers:
            h = layer(h, pos)
        return self.decoder(self.dropout(h), pos)


class Transformer2d(nn.Module):
    """2D attention-based operator learner with CiNN samplers (the reference
    ``FourierTransformer2D``), for the Darcy forward and inverse problems.

    Parameters
    ----------
    config : Transformer2dConfig
        All hyper-parameters; see the config's docstring.

    Examples
    --------
    >>> import torch
    >>> from neuralop_fem.models import build_model
    >>> model = build_model("darcy-galerkin")
    >>> model(torch.zeros(1, 29, 29, 1)).shape
    torch.Size([1, 29, 29, 1])
    >>> model.grid_sizes(141)
    (43, 78)
    """

    #: Submodules bf16 autocast leaves in float32 (``neuralop_fem.training.amp``): the decoder.
    float32_parts: ClassVar[tuple[str, ...]] = ("decoder",)

    def __init__(self, config: Transformer2dConfig) -> None:
        super().__init__()
        self.config = config
        self.downsampler = CiNNDownsampler(
            config.in_channels, config.d_model, dropout=config.downsampler_dropout
        )
        self.layers = _encoder_layers(config, pos_dim=2)
        self.dropout = nn.Dropout(config.dropout)
        self.upsampler = CiNNUpsampler(config.d_model, dropout=config.upsampler_dropout)
        self.decoder: nn.Module
        if config.decoder == "spectral":
            self.decoder = SpectralRegressor(
                config.d_model, config.out_channels, spatial_dims=2,
                freq_dim=config.freq_dim, modes=config.modes,
                num_layers=config.num_regressor_layers, ff_dim=config.decoder_ff,
                coordinate_fc=True, dropout=config.decoder_dropout,
            )
        else:
            self.decoder = PointwiseRegressor(
                config.d_model, config.out_channels, spatial_dims=2,
                num_layers=config.num_regressor_layers, dropout=config.decoder_dropout,
            )

    def grid_sizes(self, n: int) -> tuple[int, int]:
        """Coarse attention grid n_c and CiNN intermediate n_m for input resolution n."""
        n_c = coarse_size(n, self.config.coarse_ratio)
        return n_c, middle_size(n, n_c)

    def output_size(self, n: int) -> int:
        """Resolution of the prediction for input resolution n (n, or n_c if coarse)."""
        return n if self.config.output_grid == "fine" else self.grid_sizes(n)[0]

    @property
    def min_resolution(self) -> int:
        """Smallest n supported: the decoder's grid needs ``2 * modes <= size``."""
        if self.config.decoder != "spectral":
            return 3
        n = 2 * self.config.modes
        while self.output_size(n) < 2 * self.config.modes:
            n += 1
        return n

    def max_modes(self, n: int) -> int | None:
        """Largest ``modes`` the spectral decoder supports at input resolution ``n`` (0: none;
        None: a pointwise decoder, which has no Fourier modes)."""
        if self.config.decoder != "spectral":
            return None
        return self.output_size(n) // 2 if n >= 2 else 0

    def resolution_hint(self, n: int) -> str:
        """How to fit the model to a grid of ``n`` points below :attr:`min_resolution`."""
        largest = self.max_modes(n)
        if largest is None:
            return "Use a finer grid."
        return modes_hint(self.config.modes, largest, n)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Predict from the input function ``x`` (B, n, n, C_in) on the node grid.

        Returns (B, n, n, C_out), or (B, n_c, n_c, C_out) when ``output_grid="coarse"``, in
        the model's dtype (a floating-point ``x`` of another precision is cast to it).

        Raises
        ------
        ShapeError
            If ``x`` is not (B, n, n, in_channels) with ``n >= min_resolution``.
        InputError
            For an empty batch (B = 0) or a tensor that is not floating point.
        """
        x, n = prepare_input(
            x, dtype=_dtype_of(self), spatial_dims=2, channels=self.config.in_channels,
            min_size=self.min_resolution, hint=self.resolution_hint,
        )
        n_c, n_m = self.grid_sizes(n)
        pos = node_grid_2d(n_c, dtype=x.dtype, device=x.device)
        h = self.downsampler(x, middle=n_m, coarse=n_c)
        h = self.dropout(h)
        for layer in self.layers:
            h = layer(h, pos)
        if self.config.output_grid == "fine":
            h = self.upsampler(h, middle=n_m, fine=n)
            coords = node_grid_2d(n, dtype=x.dtype, device=x.device)
        else:
            h = self.upsampler(h, middle=None, fine=None)
            coords = pos
        return self.decoder(self.dropout(h), coords)
