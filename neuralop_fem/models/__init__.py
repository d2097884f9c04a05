"""Operator learners: Galerkin / Fourier Transformers (Cao 2021) and FNO / AFNO baselines.

This package owns the networks, their frozen configs, the registry of model families and
presets (:func:`register_model`), the size limits a config must respect (``size``), the
model file (``io``) and the precision of a forward pass (``precision``); it knows nothing of
datasets, runs or training. Models take the input
function on the uniform grid, (batch, n, channels) in 1D and (batch, n, n, channels) in 2D,
and return (batch, n[, n], out_channels); grid coordinates are derived inside from the shape.
Build them by name::

    from neuralop_fem.models import PRESETS, build_model
    model = build_model("darcy-galerkin", encoder_dropout=0.0)

Modules: ``config`` (frozen configs), ``attention``, ``afno``, ``encoder``, ``spectral``,
``sampling`` (CiNN), ``decoders``, ``transformer``, ``fno``, ``presets`` (the registry),
``size``, ``wrapper`` (normalisers + Dirichlet boundary), ``io`` (save / load), ``precision``
(the bf16 forward pass with its float32 parts, shared by training and inference).
"""

from __future__ import annotations

from ._grid import coarse_size
from .afno import AFNOMixer
from .attention import SimpleAttention, diagonal_init_
from .config import (
    ATTENTION_KINDS,
    FNO1dConfig,
    FNO2dConfig,
    ModelConfigBase,
    Transformer1dConfig,
    Transformer2dConfig,
)
from .decoders import PointwiseRegressor, SpectralRegressor
from .encoder import EncoderLayer, FeedForward
from .fno import FNO1d, FNO2d
from .io import load_model, save_model
from .presets import MODEL_FAMILIES, PRESETS, build_model, register_model, unregister_model
from .sampling import CiNNDownsampler, CiNNUpsampler
from .spectral import SpectralConv1d, SpectralConv2d
from .transformer import Transformer1d, Transformer2d
from .wrapper import NormalizedOperator

__all__ = [
    "coarse_size",
    "AFNOMixer",
    "ATTENTION_KINDS",
    "CiNNDownsampler",
    "CiNNUpsampler",
    "EncoderLayer",
    "FNO1d",
    "FNO1dConfig",
    "FNO2d",
    "FNO2dConfig",
    "FeedForward",
    "MODEL_FAMILIES",
    "ModelConfigBase",
    "NormalizedOperator",
    "PRESETS",
    "PointwiseRegressor",
    "SimpleAttention",
    "SpectralConv1d",
    "SpectralConv2d",
    "SpectralRegressor",
    "Transformer1d",
    "Transformer1dConfig",
    "Transformer2d",
    "Transformer2dConfig",
    "build_model",
    "diagonal_init_",
    "load_model",
    "register_model",
    "save_model",
    "unregister_model",
]
