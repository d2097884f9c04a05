"""Interpolation-based CNNs (CiNN) that move a 2D field between the fine and coarse grids.

Both work on channels-last tensors (B, n, n, C) and convert to channels-first inside.
All convolutions are 3x3, stride 1, padding 1, without bias; interpolations are
bilinear with ``align_corners=True`` (node grids: corner nodes map onto corner nodes).

Down (Cao 2021, Fig. 6; reference ``Interp2dEncoder``), n_f -> n_c with an intermediate
n_m ~ sqrt(n_f n_c)::

    a0 = ReLU(Drop(Conv(C_in -> d)(x)))
    a1 = ReLU(Interp_{n_m}(a0))
    b1 = ReLU(Drop(Conv(d -> d1)(a1))); b2 = ReLU(Drop(Conv(d1 -> d1)(b1)));
    b3 = ReLU(Drop(Conv(d1 -> d3)(b2)))        with d1 = floor(d/3), d3 = d - 2 d1
    out = ReLU(Interp_{n_c}(concat(b1, b2, b3)))

Up (Fig. 7; reference ``Interp2dUpsample``), n_c -> n_f::

    out = Interp_{n_f}(SiLU(Drop(SiLU(Drop(Conv(d -> d)(Interp_{n_m}(x)))))))

For the inverse problem (output on the coarse grid) both interpolations are skipped and
only the convolution block runs. As in the reference there are no skip connections
(the paper's text mentions one), and SiLU with dropout is applied twice in the up
sampler. The reference interpolates to 78 on the way down and 77 on the way up for
141/43; we use the same n_m for both.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["CiNNDownsampler", "CiNNUpsampler"]


def _conv(c_in: int, c_out: int) -> nn.Conv2d:
    return nn.Conv2d(c_in, c_out, kernel_size=3, padding=1, bias=False)


def _interp(x: torch.Tensor, size: int) -> torch.Tensor:
    return F.interpolate(x, size=(size, size), mode="bilinear", align_corners=True)


class CiNNDownsampler(nn.Module):
    """Fine (B, n_f, n_f, C_in) -> coarse (B, n_c, n_c, d) feature extractor.

    Parameters
    ----------
    in_channels, d_model : int
        Input channels and output width d (d >= 3).
    dropout : float
        Dropout after every convolution.
    """

    def __init__(self, in_channels: int, d_model: int, *, dropout: float = 0.0) -> None:
        super().__init__()
        d1 = d_model // 3
        self.conv0 = _conv(in_channels, d_model)
        self.conv1 = _conv(d_model, d1)
        self.conv2 = _conv(d1, d1)
        self.conv3 = _conv(d1, d_model - 2 * d1)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, *, middle: int, coarse: int) -> torch.Tensor:
        h = x.permute(0, 3, 1, 2)
        h = F.relu(self.dropout(self.conv0(h)))
        h = F.relu(_interp(h, middle))
        b1 = F.relu(self.dropout(self.conv1(h)))
        b2 = F.relu(self.dropout(self.conv2(b1)))
        b3 = F.relu(self.dropout(self.conv3(b2)))
        h = F.relu(_interp(torch.cat((b1, b2, b3), dim=1), coarse))
        return h.permute(0, 2, 3, 1)


class CiNNUpsampler(nn.Module):
    """Coarse (B, n_c, n_c, d) -> fine (B, n_f, n_f, d); sizes ``None`` skip interpolation.

    Parameters
    ----------
    d_model : int
        Channels d (unchanged).
    dropout : float
        Dropout after the convolution and after the first SiLU.
    """

    def __init__(self, d_model: int, *, dropout: float = 0.0) -> None:
        super().__init__()
        self.conv = _conv(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self, x: torch.Tensor, *, middle: int | None, fine: int | None
    ) -> torch.Tensor:
        h = x.permute(0, 3, 1, 2)
        if middle is not None:
            h = _interp(h, middle)
        h = F.silu(self.dropout(self.conv(h)))
        h = F.silu(self.dropout(h))
        if fine is not None:
            h = _interp(h, fine)
        return h.permute(0, 2, 3, 1)
