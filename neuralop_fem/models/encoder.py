r"""Encoder layer: token mixer + pointwise feed-forward network (Cao 2021, eqs. 4 and 7).

For ``x`` of shape (B, *spatial, d) with coordinates ``pos`` of shape (*spatial, m):

* ``norm_scheme="attention"`` (the paper's scheme, eq. 4; LayerNorm only inside attention)::

      y = x + drop(Attn(x, pos));   out = y + drop(FFN(y))

* ``norm_scheme="post"`` (regular post-LN, Remark 4.1 / eq. 7)::

      y = LN1(x + drop(Attn(x, pos)));   out = LN2(y + drop(FFN(y)))

``FFN(y) = Linear(d_ff -> d)(Dropout(ReLU(Linear(d -> d_ff)(y))))`` and ``drop`` is the
residual ("encoder") dropout. For the AFNO mixer, ``"attention"`` means a pre-LayerNorm
on the mixer's input (AFNO has no internal normalisation).

Unlike the reference, softmax and linear attention do not force the encoder dropout to
0.1: the presets set it explicitly.
"""

from __future__ import annotations

import torch
from torch import nn

from .afno import AFNOMixer
from .attention import SimpleAttention

__all__ = ["EncoderLayer", "FeedForward"]


class FeedForward(nn.Module):
    """Pointwise two-layer MLP with ReLU, (..., d) -> (..., d)."""

    def __init__(self, d_model: int, d_ff: int, *, dropout: float = 0.0) -> None:
        super().__init__()
        self.lin1 = nn.Linear(d_model, d_ff)
        self.lin2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin2(self.dropout(torch.relu(self.lin1(x))))


class EncoderLayer(nn.Module):
    """One encoder layer on a (B, *spatial, d) field (see the module docstring).

    Parameters
    ----------
    d_model, d_ff, num_heads, pos_dim : int
        Width, FFN width, heads and coordinate dimension m.
    attention : {"galerkin", "fourier", "softmax", "linear", "afno"}
        Token mixer.
    norm_scheme : {"attention", "post"}
        Where the LayerNorms are.
    norm_eps : float
        LayerNorm epsilon (all LayerNorms of the layer).
    attention_dropout, encoder_dropout, ffn_dropout : float
        Attention-matrix, residual-branch and FFN dropout rates.
    xavier_gain, diagonal_weight : float
        Diagonal initialisation of the attention projections.
    fourier_scale : {"sqrt", "none"}
        See :class:`~neuralop_fem.models.attention.SimpleAttention`.
    afno_blocks, afno_hidden_factor, afno_sparsity : int, int, float
        AFNO mixer settings (used when ``attention="afno"``).
    """

    def __init__(
        self,
        d_model: int,
        d_ff: int,
        *,
        num_heads: int,
        pos_dim: int,
        attention: str,
        norm_scheme: str = "attention",
        norm_eps: float = 1e-5,
        attention_dropout: float = 0.0,
        encoder_dropout: float = 0.0,
        ffn_dropout: float = 0.0,
        xavier_gain: float = 1e-2,
        diagonal_weight: float = 1e-2,
        fourier_scale: str = "sqrt",
        afno_blocks: int = 8,
        afno_hidden_factor: int = 1,
        afno_sparsity: float = 0.01,
    ) -> None:
        super().__init__()
        self.post_norm = norm_scheme == "post"
        self.pre_norm = attention == "afno" and not self.post_norm
        self.mixer: nn.Module
        if attention == "afno":
            self.mixer = AFNOMixer(
                d_model, num_blocks=afno_blocks, hidden_factor=afno_hidden_factor,
                sparsity=afno_sparsity,
            )
        else:
            self.mixer = SimpleAttention(
                d_model, num_heads, kind=attention, pos_dim=pos_dim,
                norm=not self.post_norm, norm_eps=norm_eps, dropout=attention_dropout,
                xavier_gain=xavier_gain, diagonal_weight=diagonal_weight,
                fourier_scale=fourier_scale,
            )
        self.is_attention = attention != "afno"
        self.ffn = FeedForward(d_model, d_ff, dropout=ffn_dropout)
        self.dropout1 = nn.Dropout(encoder_dropout)
        self.dropout2 = nn.Dropout(encoder_dropout)
        if self.post_norm or self.pre_norm:
            self.norm1 = nn.LayerNorm(d_model, eps=norm_eps)
        if self.post_norm:
            self.norm2 = nn.LayerNorm(d_model, eps=norm_eps)

    def forward(self, x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        """Map ``x`` (B, *spatial, d) with ``pos`` (*spatial, m) to (B, *spatial, d)."""
        if self.is_attention:
            b, d = x.shape[0], x.shape[-1]
            mixed = self.mixer(x.reshape(b, -1, d), pos.reshape(-1, pos.shape[-1]))
            mixed = mixed.reshape(x.shape)
        else:
            mixed = self.mixer(self.norm1(x) if self.pre_norm else x)
        y = x + self.dropout1(mixed)
        if self.post_norm:
            y = self.norm1(y)
        y = y + self.dropout2(self.ffn(y))
        if self.post_norm:
            y = self.norm2(y)
        return y
