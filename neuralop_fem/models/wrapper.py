"""A model composed with its data normalisers and an optional Dirichlet boundary."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from solvers.errors import ShapeError

from ._grid import check_dtype

__all__ = ["NormalizedOperator"]


class NormalizedOperator(nn.Module):
    """``decode_out(model(encode_in(x)))`` with an optional zero Dirichlet ring.

    Normalisers are duck-typed modules with ``.encode(x)`` and ``.decode(x)`` acting on
    (batch, *spatial, channels) tensors, e.g.
    ``neuralop_fem.data.normalizer.UnitGaussianNormalizer``. With ``dirichlet=True`` the
    outer ring of the 2D prediction (B, n, n, C) is set to exactly 0 *after*
    de-normalisation, as in the reference Darcy model.

    Parameters
    ----------
    model : nn.Module
        The operator learner.
    input_normalizer, output_normalizer : nn.Module or None
        Applied as ``input_normalizer.encode`` on the input and ``output_normalizer.decode``
        on the model output.
    dirichlet : bool
        Zero the boundary nodes of a 2D prediction.
    """

    def __init__(
        self,
        model: nn.Module,
        *,
        input_normalizer: nn.Module | None = None,
        output_normalizer: nn.Module | None = None,
        dirichlet: bool = False,
    ) -> None:
        super().__init__()
        self.model = model
        self.input_normalizer = input_normalizer
        self.output_normalizer = output_normalizer
        self.dirichlet = dirichlet

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Predict in physical units from ``x`` (B, *spatial, C_in) in physical units.

        ``x`` must have the model's floating-point dtype (float32 unless the operator was
        cast): float64 data into a float32 operator is an
        :class:`~neuralop_fem.errors.InputError` that says how to cast, as is an empty batch
        (raised by the model). :class:`~neuralop_fem.Surrogate` casts numpy input itself.
        """
        param = next(self.model.parameters(), None)
        if param is not None and x.is_floating_point():
            check_dtype(x, param.dtype)
        if self.input_normalizer is not None:
            x = self.input_normalizer.encode(x)
        y = self.model(x)
        if self.output_normalizer is not None:
            y = self.output_normalizer.decode(y)
        if self.dirichlet:
            if y.ndim != 4:
                msg = (
                    "`dirichlet=True` needs a 2D prediction of shape (batch, n, n, channels); "
                    f"got {tuple(y.shape)}."
                )
                raise ShapeError(msg)
            y = F.pad(y[:, 1:-1, 1:-1, :], (0, 0, 1, 1, 1, 1))
        return y
