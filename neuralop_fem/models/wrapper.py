"""A model composed with its data normalisers and an optional Dirichlet boundary.

Which edge points of a 2D prediction are Dirichlet nodes depends on the data's grid
(:func:`neuralop_fem.data.grids.dirichlet_edges`): the pair ``(first, last)`` says whether the
first and the last sample point along each spatial axis lie on the boundary ``u = 0``. All
four edges on the node grid ``x_i = i/(n-1)`` (``(True, True)``, the reference Darcy model);
the first row and column on the half-open grid ``x_i = i/n`` of neuraloperator's Darcy files
(``(True, False)``: ``x = 1`` is not a sample point); none on cell centres.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import InputError, ShapeError
from ._grid import check_dtype

__all__ = ["NormalizedOperator", "dirichlet_edges_of", "pin_edges"]

#: Pinned edges ``(first, last)`` per spatial axis.
Edges = tuple[bool, bool]


def dirichlet_edges_of(dirichlet: bool | Edges) -> Edges:
    """The pinned edges ``(first, last)`` of a ``dirichlet`` setting: ``True`` is all four
    edges ``(True, True)`` (the setting of runs recorded before the edges were), ``False``
    none; a pair of booleans is returned as a tuple.

    Raises
    ------
    InputError
        For anything else.
    """
    if isinstance(dirichlet, bool):
        return (dirichlet, dirichlet)
    if (isinstance(dirichlet, tuple | list) and len(dirichlet) == 2
            and all(isinstance(v, bool) for v in dirichlet)):
        return (dirichlet[0], dirichlet[1])
    msg = f"`dirichlet` must be a bool or a pair of bools (first, last); got {dirichlet!r}."
    raise InputError(msg)


def pin_edges(y: torch.Tensor, edges: Edges) -> torch.Tensor:
    """``y`` (B, n1, n2, C) with its first (``edges[0]``) and last (``edges[1]``) row and
    column along both spatial axes set to exactly 0 (a new tensor; gradients flow to the
    rest). ``(False, False)`` returns ``y`` itself."""
    a, b = int(edges[0]), int(edges[1])
    if not (a or b):
        return y
    n1, n2 = y.shape[1], y.shape[2]
    return F.pad(y[:, a:n1 - b, a:n2 - b, :], (0, 0, a, b, a, b))


class NormalizedOperator(nn.Module):
    """``decode_out(model(encode_in(x)))`` with optional zero Dirichlet edges.

    Normalisers are duck-typed modules with ``.encode(x)`` and ``.decode(x)`` acting on
    (batch, *spatial, channels) tensors, e.g.
    ``neuralop_fem.data.normalizer.UnitGaussianNormalizer``. The pinned edges of the 2D
    prediction (B, n, n, C) are set to exactly 0 *after* de-normalisation
    (:func:`pin_edges`): with ``dirichlet=True`` the whole outer ring, as in the reference
    Darcy model.

    Parameters
    ----------
    model : nn.Module
        The operator learner.
    input_normalizer, output_normalizer : nn.Module or None
        Applied as ``input_normalizer.encode`` on the input and ``output_normalizer.decode``
        on the model output.
    dirichlet : bool or (bool, bool)
        The edges whose points are Dirichlet nodes of the data's grid (:func:`dirichlet_edges_of`):
        ``(first, last)`` along each spatial axis, ``True`` for all four, ``False`` for none.
        Kept as :attr:`dirichlet_edges`; :attr:`dirichlet` says whether any edge is pinned.
    """

    def __init__(
        self,
        model: nn.Module,
        *,
        input_normalizer: nn.Module | None = None,
        output_normalizer: nn.Module | None = None,
        dirichlet: bool | Edges = False,
    ) -> None:
        super().__init__()
        self.model = model
        self.input_normalizer = input_normalizer
        self.output_normalizer = output_normalizer
        self.dirichlet_edges = dirichlet_edges_of(dirichlet)
        self._setting = dirichlet

    @property
    def dirichlet(self) -> bool:
        """Whether any edge of the prediction is pinned to zero."""
        return any(self.dirichlet_edges)

    def pin(self, y: torch.Tensor) -> torch.Tensor:
        """``y`` (B, n, n, C), de-normalised, with the pinned edges set to 0 (:func:`pin_edges`).

        Raises
        ------
        ShapeError
            Edges pinned and ``y`` not 4-D.
        """
        if not self.dirichlet:
            return y
        if y.ndim != 4:
            msg = (
                f"`dirichlet={self._setting!r}` needs a 2D prediction of shape "
                f"(batch, n, n, channels); got {tuple(y.shape)}."
            )
            raise ShapeError(msg)
        return pin_edges(y, self.dirichlet_edges)

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
        return self.pin(y)
