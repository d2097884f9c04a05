"""Mixed precision of the training forward pass (:class:`AmpForward`)."""

from __future__ import annotations

import torch
from torch import nn

from ..models import NormalizedOperator

__all__ = ["AmpForward"]


class AmpForward(nn.Module):
    """Forward of a :class:`NormalizedOperator` with only the model body under autocast.

    The input normaliser, the output normaliser (decode) and the boundary ring run in float32;
    with ``amp="bf16"`` the model runs under ``torch.autocast(bfloat16)`` (its FFTs upcast
    themselves to float32) and its output is cast back to float32.
    """

    def __init__(self, operator: NormalizedOperator, *, amp: str, device_type: str) -> None:
        super().__init__()
        self.operator = operator
        self.amp = amp
        self.device_type = device_type

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        op = self.operator
        if self.amp == "none":
            return op(x)
        if op.input_normalizer is not None:
            x = op.input_normalizer.encode(x)
        with torch.autocast(self.device_type, dtype=torch.bfloat16):
            y = op.model(x)
        y = y.float()
        if op.output_normalizer is not None:
            y = op.output_normalizer.decode(y)
        if op.dirichlet:
            y = nn.functional.pad(y[:, 1:-1, 1:-1, :], (0, 0, 1, 1, 1, 1))
        return y
