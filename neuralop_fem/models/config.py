"""Frozen, JSON-serialisable configurations of the operator learners.

One dataclass per model family, each a :class:`~neuralop_fem.config_base.FrozenConfig`. Every
field is a plain ``int``, ``float``, ``str`` or ``bool``; ``to_dict()`` / ``from_dict()``
round-trip through JSON and ``from_dict`` rejects unknown keys. Shared parameter meanings are
documented once, on :class:`Transformer1dConfig`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..config_base import (
    FrozenConfig,
    choice,
    nonnegative_float,
    positive_float,
    positive_int,
    rate,
)
from ..errors import ConfigError

__all__ = [
    "ATTENTION_KINDS",
    "FNO1dConfig",
    "FNO2dConfig",
    "ModelConfigBase",
    "Transformer1dConfig",
    "Transformer2dConfig",
]

#: Token mixers usable in the encoder layer.
ATTENTION_KINDS = ("galerkin", "fourier", "softmax", "linear", "afno")
NORM_SCHEMES = ("attention", "post")
FOURIER_SCALES = ("sqrt", "none")


class _ConfigMixin(FrozenConfig):
    """The shared base (:class:`~neuralop_fem.config_base.FrozenConfig`: ``to_dict`` /
    ``from_dict`` / ``replace``) plus field-by-name validation helpers."""

    family: ClassVar[str]
    #: Space dimensions of the grid the model works on: inputs are (B, n, C) or (B, n, n, C).
    spatial_dims: ClassVar[int]

    def _positive_int(self, *names: str) -> None:
        for name in names:
            positive_int(getattr(self, name), name)

    def _rate(self, *names: str) -> None:
        for name in names:
            self._set(name, rate(getattr(self, name), name))

    def _nonneg_float(self, *names: str, strict: bool = False) -> None:
        check = positive_float if strict else nonnegative_float
        for name in names:
            self._set(name, check(getattr(self, name), name))

    def _choice(self, name: str, options: tuple[str, ...]) -> None:
        choice(getattr(self, name), name, options)


#: The base of every model config (public: a new architecture's config subclasses it, as a
#: frozen keyword-only dataclass with class variables ``family`` and ``spatial_dims``).
ModelConfigBase = _ConfigMixin


@dataclass(frozen=True, kw_only=True)
class _EncoderFields(_ConfigMixin):
    """Fields of the attention encoder shared by the 1D and 2D transformers."""

    in_channels: int = 1
    out_channels: int = 1
    d_model: int = 96
    num_layers: int = 4
    num_heads: int = 1
    d_ff: int = 192
    attention: str = "galerkin"
    norm_scheme: str = "attention"
    norm_eps: float = 1e-5
    xavier_gain: float = 1e-2
    diagonal_weight: float = 1e-2
    attention_dropout: float = 0.0
    encoder_dropout: float = 0.0
    ffn_dropout: float = 0.0
    dropout: float = 0.0
    fourier_scale: str = "sqrt"
    afno_blocks: int = 8
    afno_hidden_factor: int = 1
    afno_sparsity: float = 0.01

    def _validate_encoder(self) -> None:
        self._positive_int(
            "in_channels", "out_channels", "d_model", "num_layers", "num_heads", "d_ff",
            "afno_blocks", "afno_hidden_factor",
        )
        self._choice("attention", ATTENTION_KINDS)
        self._choice("norm_scheme", NORM_SCHEMES)
        self._choice("fourier_scale", FOURIER_SCALES)
        self._nonneg_float("norm_eps", "xavier_gain", strict=True)
        self._nonneg_float("diagonal_weight", "afno_sparsity")
        self._rate("attention_dropout", "encoder_dropout", "ffn_dropout", "dropout")
        if self.d_model % self.num_heads:
            msg = (
                f"`d_model` must be divisible by `num_heads`={self.num_heads}; "
                f"got {self.d_model}."
            )
            raise ConfigError(msg)
        if self.attention == "afno" and self.d_model % self.afno_blocks:
            msg = (
                f"`d_model` must be divisible by `afno_blocks`={self.afno_blocks}; "
                f"got {self.d_model}."
            )
            raise ConfigError(msg)


@dataclass(frozen=True, kw_only=True)
class Transformer1dConfig(_EncoderFields):
    """Configuration of :class:`~neuralop_fem.models.Transformer1d` (Burgers, Cao 2021 §5.1).

    Parameters
    ----------
    in_channels, out_channels : int
        Channels of the input function (batch, n, in_channels) and of the prediction.
    d_model : int
        Latent width d of the encoder.
    num_layers, num_heads, d_ff : int
        Encoder layers, attention heads H (d must be divisible by H) and FFN width.
    attention : {"galerkin", "fourier", "softmax", "linear", "afno"}
        Token mixer of every encoder layer (see :mod:`neuralop_fem.models.attention`).
    norm_scheme : {"attention", "post"}
        ``"attention"``: the paper's scale-preserving scheme, per-head LayerNorm inside
        attention (Galerkin/linear: on K, V; Fourier/softmax: on Q, K), no LN elsewhere.
        ``"post"``: the regular post-LN after each residual add (Remark 4.1, eq. 7).
    norm_eps : float
        LayerNorm epsilon (1e-5 in 1D, 1e-7 in the Darcy models, as in the reference).
    xavier_gain, diagonal_weight : float
        Diagonal initialisation ``W = eta U + delta I`` of W_Q, W_K, W_V (paper eq. 17).
    attention_dropout : float
        Dropout rate on the attention matrix (Galerkin/linear: the d'xd' matrix; Fourier/
        softmax: the n x n matrix), training only.
    encoder_dropout : float
        Dropout on the residual branches (after attention and after the FFN). This is
        what the reference (and Table 7's "attention" column) calls attention dropout.
    ffn_dropout : float
        Dropout after the FFN's ReLU.
    dropout : float
        Dropout between the encoder and the decoder.
    fourier_scale : {"sqrt", "none"}
        Fourier/softmax score scale: ``"sqrt"`` divides Q K^T by sqrt(d_k + m) as the
        reference code does (default, better conditioned); ``"none"`` follows the paper
        (1/n only).
    afno_blocks, afno_hidden_factor, afno_sparsity : int, int, float
        AFNO mixer: number of diagonal blocks, MLP width factor, soft-threshold lambda.
    num_regressor_layers, freq_dim, modes, decoder_ff : int
        Spectral decoder: number of spectral convolutions, their width, Fourier modes
        kept, and the width of the final pointwise MLP.
    decoder_dropout : float
        Dropout before each spectral convolution.
    """

    family: ClassVar[str] = "transformer1d"
    spatial_dims: ClassVar[int] = 1

    num_regressor_layers: int = 2
    freq_dim: int = 48
    modes: int = 16
    decoder_ff: int = 48
    decoder_dropout: float = 0.0

    def __post_init__(self) -> None:
        self._validate_encoder()
        self._positive_int("num_regressor_layers", "freq_dim", "modes", "decoder_ff")
        self._rate("decoder_dropout")


@dataclass(frozen=True, kw_only=True)
class Transformer2dConfig(_EncoderFields):
    """Configuration of :class:`~neuralop_fem.models.Transformer2d` (Darcy, §5.2 / §5.3).

    Fields shared with :class:`Transformer1dConfig` have the same meaning. Additionally:

    Parameters
    ----------
    coarse_ratio : float
        The attention runs on an ``n_c x n_c`` grid with ``n_c = round(coarse_ratio *
        (n - 1)) + 1`` (0.3: 141 -> 43, 211 -> 64; 0.25: 141 -> 36). The CiNN intermediate
        grid is ``n_m = round(sqrt(n n_c))`` (141/43 -> 78, 141/36 -> 71).
    output_grid : {"fine", "coarse"}
        ``"fine"``: the prediction is on the input's n x n grid (forward problem);
        ``"coarse"``: on the n_c x n_c attention grid (inverse problem, as the reference).
    decoder : {"spectral", "pointwise"}
        Spectral regressor (2D spectral convolutions, forward problem) or pointwise MLP.
    num_regressor_layers : int
        Spectral convolutions (spectral decoder) or hidden layers (pointwise decoder).
    freq_dim, modes, decoder_ff : int
        Spectral decoder width, modes per axis and final MLP width.
    downsampler_dropout, upsampler_dropout, decoder_dropout : float
        Dropout rates inside the CiNN down/up samplers and the decoder.
    """

    family: ClassVar[str] = "transformer2d"
    spatial_dims: ClassVar[int] = 2

    d_model: int = 128
    num_layers: int = 6
    num_heads: int = 4
    d_ff: int = 256
    norm_eps: float = 1e-7
    coarse_ratio: float = 0.3
    output_grid: str = "fine"
    decoder: str = "spectral"
    num_regressor_layers: int = 2
    freq_dim: int = 32
    modes: int = 12
    decoder_ff: int = 128
    downsampler_dropout: float = 0.0
    upsampler_dropout: float = 0.0
    decoder_dropout: float = 0.0

    def __post_init__(self) -> None:
        self._validate_encoder()
        self._positive_int("num_regressor_layers", "freq_dim", "modes", "decoder_ff")
        self._choice("output_grid", ("fine", "coarse"))
        self._choice("decoder", ("spectral", "pointwise"))
        self._rate("downsampler_dropout", "upsampler_dropout", "decoder_dropout")
        ratio = positive_float(self.coarse_ratio, "coarse_ratio")
        if ratio > 1:
            msg = f"`coarse_ratio` must be a float in (0, 1]; got {self.coarse_ratio!r}."
            raise ConfigError(msg)
        self._set("coarse_ratio", ratio)
        if self.d_model < 3:
            msg = f"`d_model` must be >= 3 (the CiNN splits it in three); got {self.d_model}."
            raise ConfigError(msg)


@dataclass(frozen=True, kw_only=True)
class FNO1dConfig(_ConfigMixin):
    """Configuration of :class:`~neuralop_fem.models.FNO1d` (Li et al. 2021, no batch norm).

    Parameters
    ----------
    in_channels, out_channels : int
        Input channels (the coordinate is appended inside) and output channels.
    width, num_layers, modes : int
        Channels of the Fourier layers, their number and Fourier modes kept.
    projection : int
        Width of the hidden layer of the output MLP.
    """

    family: ClassVar[str] = "fno1d"
    spatial_dims: ClassVar[int] = 1

    in_channels: int = 1
    out_channels: int = 1
    width: int = 64
    num_layers: int = 4
    modes: int = 16
    projection: int = 128

    def __post_init__(self) -> None:
        self._positive_int(
            "in_channels", "out_channels", "width", "num_layers", "modes", "projection"
        )


@dataclass(frozen=True, kw_only=True)
class FNO2dConfig(FNO1dConfig):
    """Configuration of :class:`~neuralop_fem.models.FNO2d`; fields as :class:`FNO1dConfig`."""

    family: ClassVar[str] = "fno2d"
    spatial_dims: ClassVar[int] = 2

    width: int = 32
    modes: int = 12
