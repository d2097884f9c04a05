r"""Attention token mixers: Galerkin, Fourier, softmax and linear (Cao 2021, §4).

Notation: a layer input ``x`` of shape (B, N, d) (N grid points, flattened), H heads of
width d_k = d/H, coordinates ``pos`` of shape (N, m). Per head h,

.. math::

    Q = x W_Q + b_Q,\quad K = x W_K + b_K,\quad V = x W_V + b_V
    \quad(\text{each split into } H \text{ heads of width } d_k),

the head-wise normalisation (``norm=True``, the paper's scheme) applies a *separate*
LayerNorm(d_k) per head to K and V (galerkin, linear) or to Q and K (fourier, softmax);
then the coordinates are prepended to each of Q, K, V, so every head carries
d' = d_k + m features, and

.. math::

    \text{galerkin:}\quad z = \tilde Q\,(\tilde K^\top \tilde V)/N
    \qquad
    \text{fourier:}\quad z = (\tilde Q \tilde K^\top / s)\,\tilde V / N

    \text{softmax:}\quad
    z = \operatorname{softmax}_{\text{row}}(\tilde Q\tilde K^\top/\sqrt{d'})\,\tilde V
    \qquad
    \text{linear:}\quad
    z = \sigma_{\text{feat}}(\tilde Q)\,(\sigma_{\text{seq}}(\tilde K)^\top \tilde V)

with ``s = sqrt(d')`` (``fourier_scale="sqrt"``, the reference code) or 1 (``"none"``,
the paper). The heads, each (B, N, d'), are concatenated to (B, N, H d') and mapped by
``out_proj = Linear(d + H m -> d)``.

Differences from the reference code (scaomath/galerkin-transformer; docs/models.md):

* Dropout on the attention matrix (d' x d' for galerkin/linear, N x N for fourier/
  softmax) uses the configured rate and is active in training only. The reference
  applies an always-on 50 % dropout (also in ``eval()``), which we do not copy.
* The linear attention is Shen et al.'s efficient attention without the reference's
  extra 1/N (the sequence softmax of K already averages over positions).
* The Fourier attention's sqrt(d') divisor is kept by default: with LayerNorm'd Q, K
  the scores ``q_i . k_j`` grow like d', and dividing by sqrt(d') keeps the residual
  update of a diagonally initialised layer small (better conditioned early training).

The galerkin kernel is evaluated together with ``out_proj`` as ``Q~_h (A_h W_h^T)``
(associativity; mathematically identical, no (N, d') tensors). So is the fourier kernel
when no dropout acts on its N x N score matrix (evaluation, and training with
``dropout=0``, the presets' setting): ``(Q~ K~^T) V~ = Q~ (K~^T V~)``. The cost is
O(N d^2) time and O(N d + d^2) memory for galerkin, linear and dropout-free fourier, and
O(N^2 d) time and O(N^2) memory for softmax and fourier with score dropout in training.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["SimpleAttention", "diagonal_init_"]


def diagonal_init_(linear: nn.Linear, *, gain: float, diagonal: float) -> None:
    """Set ``W = gain * U + diagonal * I`` (U Xavier-uniform with gain 1) and ``b = 0``.

    This is the paper's eq. (17); ``gain=1, diagonal=0`` is the default Xavier init.
    """
    with torch.no_grad():
        nn.init.xavier_uniform_(linear.weight, gain=gain)
        n = min(linear.weight.shape)
        linear.weight[:n, :n] += diagonal * torch.eye(n, dtype=linear.weight.dtype)
        if linear.bias is not None:
            linear.bias.zero_()


def _headwise_norm(x: torch.Tensor, norms: nn.ModuleList, eps: float) -> torch.Tensor:
    """Apply LayerNorm ``norms[h]`` to head h of ``x`` (B, N, H, d_k) in one fused call.

    The statistics are computed in float32 (bfloat16-autocast safe).
    """
    dtype = x.dtype if x.dtype in (torch.float32, torch.float64) else torch.float32
    if len(norms) == 1:  # one head: the fused affine LayerNorm kernel
        ln = norms[0]
        return F.layer_norm(
            x.to(dtype), (x.shape[-1],), ln.weight.to(dtype), ln.bias.to(dtype), eps
        ).to(x.dtype)
    weight = torch.stack([ln.weight for ln in norms]).to(dtype)  # (H, d_k)
    bias = torch.stack([ln.bias for ln in norms]).to(dtype)
    out = F.layer_norm(x.to(dtype), (x.shape[-1],), eps=eps)
    return torch.addcmul(bias, out, weight).to(x.dtype)


class SimpleAttention(nn.Module):
    """Multi-head attention with coordinates prepended to every head.

    Parameters
    ----------
    d_model : int
        Feature width d of the input and output, (B, N, d).
    num_heads : int
        Number of heads H; d must be divisible by H.
    kind : {"galerkin", "fourier", "softmax", "linear"}
        Attention kernel (see the module docstring for the exact formulas).
    pos_dim : int
        Number m of coordinates prepended to each head.
    norm : bool
        Head-wise LayerNorm inside attention (the paper's scheme). ``False`` for the
        regular post-LN scheme, where the encoder layer normalises instead.
    norm_eps : float
        LayerNorm epsilon.
    dropout : float
        Dropout rate on the attention matrix, applied in training only.
    xavier_gain, diagonal_weight : float
        Initialisation of W_Q, W_K, W_V (:func:`diagonal_init_`).
    fourier_scale : {"sqrt", "none"}
        Score divisor sqrt(d') for the fourier kernel, or none.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        *,
        kind: str,
        pos_dim: int,
        norm: bool = True,
        norm_eps: float = 1e-5,
        dropout: float = 0.0,
        xavier_gain: float = 1e-2,
        diagonal_weight: float = 1e-2,
        fourier_scale: str = "sqrt",
    ) -> None:
        super().__init__()
        if kind not in ("galerkin", "fourier", "softmax", "linear"):
            msg = f"`kind` must be 'galerkin', 'fourier', 'softmax' or 'linear'; got {kind!r}."
            raise ValueError(msg)
        self.kind = kind
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.pos_dim = pos_dim
        self.norm = norm
        self.norm_eps = norm_eps
        self.dropout = dropout
        d_prime = self.d_k + pos_dim
        self.score_scale = 1.0 / math.sqrt(d_prime) if fourier_scale == "sqrt" else 1.0
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        for lin in (self.q_proj, self.k_proj, self.v_proj):
            diagonal_init_(lin, gain=xavier_gain, diagonal=diagonal_weight)
        # Which two of Q, K, V carry the head-wise LayerNorms.
        self.normed = ("k", "v") if kind in ("galerkin", "linear") else ("q", "k")
        # One LayerNorm(d_k) module per head and per normalised tensor: norms["k"][h].
        self.norms = nn.ModuleDict(
            {
                name: nn.ModuleList(
                    [nn.LayerNorm(self.d_k, eps=norm_eps) for _ in range(num_heads)]
                )
                for name in (self.normed if norm else ())
            }
        )
        self.out_proj = nn.Linear(d_model + num_heads * pos_dim, d_model)

    def _heads(self, t: torch.Tensor) -> torch.Tensor:
        b, n, _ = t.shape
        return t.view(b, n, self.num_heads, self.d_k)  # (B, N, H, d_k)

    def forward(self, x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        """Attend over the N points of ``x`` (B, N, d) with coordinates ``pos`` (N, m).

        Returns a (B, N, d) tensor.
        """
        b, n, _ = x.shape
        h, m = self.num_heads, self.pos_dim
        q = self.q_proj(x)
        k = self._heads(self.k_proj(x))
        v = self._heads(self.v_proj(x))
        if self.norm:
            k = _headwise_norm(k, self.norms["k"], self.norm_eps)
            if "v" in self.norms:
                v = _headwise_norm(v, self.norms["v"], self.norm_eps)
        k, v = k.transpose(1, 2), v.transpose(1, 2)  # (B, H, N, d_k)
        p = pos.to(x.dtype)  # (N, m)
        drop = self.dropout if self.training else 0.0
        if self.kind == "galerkin":
            return self._reassociated(q, k, v, p, drop, 1.0)
        q = self._heads(q)
        if self.norm and "q" in self.norms:
            q = _headwise_norm(q, self.norms["q"], self.norm_eps)
        if self.kind == "fourier" and drop == 0.0:
            # Without dropout on the N x N score matrix the product reassociates:
            # (Q~ K~^T) V~ = Q~ (K~^T V~), O(N d'^2) instead of O(N^2 d').
            return self._reassociated(q.reshape(b, n, -1), k, v, p, 0.0, self.score_scale)
        pe = p.expand(b, h, n, m)
        q, k, v = (torch.cat((pe, t), dim=-1) for t in (q.transpose(1, 2), k, v))
        if self.kind == "fourier":
            scores = torch.matmul(q, k.transpose(-2, -1)) * (self.score_scale / n)
            z = torch.matmul(F.dropout(scores, drop, self.training), v)
        elif self.kind == "softmax":
            z = F.scaled_dot_product_attention(q, k, v, dropout_p=drop)
        else:  # linear
            mat = torch.matmul(k.softmax(dim=-2).transpose(-2, -1), v)
            z = torch.matmul(q.softmax(dim=-1), F.dropout(mat, drop, self.training))
        return self.out_proj(z.transpose(1, 2).reshape(b, n, h * (self.d_k + m)))

    def _reassociated(self, q, k, v, p, drop, scale):
        """Galerkin attention followed by ``out_proj``, reassociated.

        Also evaluates the Fourier kernel without score dropout (``scale`` the score
        divisor 1/s, q already normalised): (Q~ K~^T / s) V~ / N = Q~ (K~^T V~) / (s N).
        With Q~_h = [p, q_h], A_h = scale [p, k_h]^T [p, v_h] / N (d' x d') and W_h the
        columns of ``out_proj`` that read head h, the output is
        ``sum_h Q~_h (A_h W_h^T) + bias``: the small (d' x d) products A_h W_h^T are
        formed first, so no (N, d') tensor is built and no O(N d'^2) product Q~ A is
        needed. Mathematically identical to ``out_proj(concat_h(Q~_h A_h))``.
        """
        b, n, _ = q.shape
        h, m, dk = self.num_heads, self.pos_dim, self.d_k
        a_kv = torch.matmul(k.transpose(-2, -1), v)  # (B, H, d_k, d_k)
        a_kp = torch.matmul(k.transpose(-2, -1), p)  # (B, H, d_k, m)
        a_pv = torch.matmul(p.transpose(0, 1), v)  # (B, H, m, d_k)
        a_pp = torch.matmul(p.transpose(0, 1), p).expand(b, h, m, m)
        mat = torch.cat((torch.cat((a_pp, a_pv), -1), torch.cat((a_kp, a_kv), -1)), -2)
        mat = mat * (scale / n)
        mat = F.dropout(mat, drop, self.training)  # the (d', d') attention matrix
        w = self.out_proj.weight.view(-1, h, m + dk).permute(1, 2, 0)  # (H, d', d)
        proj = torch.matmul(mat, w)  # (B, H, d', d)
        proj_pos = proj[:, :, :m].sum(dim=1)  # (B, m, d): p is shared by the heads
        proj_feat = proj[:, :, m:].reshape(b, h * dk, -1)  # rows in q's column order
        base = torch.matmul(p, proj_pos) + self.out_proj.bias
        return torch.baddbmm(base, q, proj_feat)
