r"""Adaptive Fourier Neural Operator token mixer (Guibas et al. 2021).

For a field ``x`` of shape (B, *spatial, d) (channels last),

.. math::

    z = \mathcal F(x),\qquad
    \tilde z^{(\ell)} = S_\lambda\!\big(W_2^{(\ell)}\,
        \mathrm{ReLU}(W_1^{(\ell)} z^{(\ell)} + b_1^{(\ell)}) + b_2^{(\ell)}\big),
        \quad \ell = 1..k,\qquad
    y = \mathcal F^{-1}(\tilde z),

with :math:`\mathcal F` the real FFT over the spatial axes (``norm="ortho"``), the d
channels split into k blocks of d/k (block-diagonal complex MLP, weights shared by all
frequencies), ReLU applied to the real and imaginary parts separately, and the soft
threshold :math:`S_\lambda(u) = \mathrm{sign}(u)\max(|u| - \lambda, 0)` on the real and
imaginary parts (sparsity in frequency). Cost O(N log N d + N d^2 / k).

Unlike the AFNO reference block, the mixer does not add its input back (the encoder
layer's residual connection plays that role), and it keeps all modes.
The FFTs run in float32 (autocast-safe).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .spectral import at_least_fp32

__all__ = ["AFNOMixer"]


class AFNOMixer(nn.Module):
    """Block-diagonal complex MLP in Fourier space with soft-thresholding.

    Parameters
    ----------
    d_model : int
        Channels d; must be divisible by ``num_blocks``.
    num_blocks : int
        Number k of diagonal blocks (the AFNO analogue of heads).
    hidden_factor : int
        Width multiplier of the block MLP's hidden layer.
    sparsity : float
        Soft-threshold lambda (>= 0).
    """

    def __init__(
        self, d_model: int, *, num_blocks: int = 8, hidden_factor: int = 1, sparsity: float = 0.01
    ) -> None:
        super().__init__()
        self.num_blocks = num_blocks
        self.block = d_model // num_blocks
        hidden = self.block * hidden_factor
        scale = 0.02
        self.w1 = nn.Parameter(scale * torch.randn(num_blocks, self.block, hidden, 2))
        self.b1 = nn.Parameter(scale * torch.randn(num_blocks, hidden, 2))
        self.w2 = nn.Parameter(scale * torch.randn(num_blocks, hidden, self.block, 2))
        self.b2 = nn.Parameter(scale * torch.randn(num_blocks, self.block, 2))
        self.sparsity = sparsity

    def forward(self, x: torch.Tensor, pos: torch.Tensor | None = None) -> torch.Tensor:
        """Mix ``x`` (B, *spatial, d) along its spatial axes; ``pos`` is ignored."""
        spatial = tuple(x.shape[1:-1])
        axes = tuple(range(1, x.ndim - 1))
        with torch.autocast(device_type=x.device.type, enabled=False):
            z = torch.fft.rfftn(at_least_fp32(x), dim=axes, norm="ortho")
            z = z.reshape(*z.shape[:-1], self.num_blocks, self.block)
            w1 = torch.view_as_complex(self.w1.to(z.real.dtype))
            w2 = torch.view_as_complex(self.w2.to(z.real.dtype))
            b1 = torch.view_as_complex(self.b1.to(z.real.dtype))
            b2 = torch.view_as_complex(self.b2.to(z.real.dtype))
            h = torch.einsum("...kb,kbh->...kh", z, w1) + b1
            h = torch.complex(F.relu(h.real), F.relu(h.imag))
            o = torch.einsum("...kh,khb->...kb", h, w2) + b2
            o = torch.complex(
                F.softshrink(o.real, self.sparsity), F.softshrink(o.imag, self.sparsity)
            )
            o = o.reshape(*o.shape[:-2], -1)
            y = torch.fft.irfftn(o, s=spatial, dim=axes, norm="ortho")
        return y.to(x.dtype)
