"""Any torch module behind :class:`~neuralop_fem.surrogate.Surrogate`'s convention.

:class:`Surrogate` calls its operator with the input function on the model grid as
``(batch, *grid, 1)`` in physical units and expects the prediction the same way.
:class:`ModuleAdapter` turns that into what another code's model takes: channels first
``(batch, C, *grid)`` (neuraloperator, most CNNs), channels last ``(batch, *grid, C)`` (the
original FNO scripts, this package's models) or no channel axis ``(batch, *grid)``, with the
grid coordinates appended as channels for models that expect them (``with_coordinates``:
``x`` or ``x, y`` after the input, on the problem's grid convention). A module that works on
normalised data must include its normalisers: the adapter passes physical values through.

>>> import torch
>>> adapter = ModuleAdapter(torch.nn.Identity(), layout="channels_first", problem="burgers")
>>> adapter(torch.ones(2, 8, 1)).shape
torch.Size([2, 8, 1])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

import torch

from solvers.problems import get_problem

from ..data.provenance import dataset_provenance
from ..errors import InputError, ShapeError
from ..runs import DataRecord, RunRecord

if TYPE_CHECKING:  # pragma: no cover
    from ..data.ood import OODReference

__all__ = ["LAYOUTS", "ModuleAdapter", "surrogate_from_module"]

#: The input / output layouts a wrapped module may use.
LAYOUTS = ("channels_last", "channels_first", "no_channel")

#: The Surrogate class (``cls`` of the classmethod ``Surrogate.from_module``).
_S = TypeVar("_S")


class ModuleAdapter(torch.nn.Module):
    """Wrap ``module`` so that it maps ``(batch, *grid, 1)`` to ``(batch, *grid, 1)``.

    Parameters
    ----------
    module : torch.nn.Module
        Maps the input function (and the coordinates, with ``with_coordinates``) to the
        prediction, in ``layout``, with one output channel.
    layout : {"channels_last", "channels_first", "no_channel"}
        ``(batch, *grid, C)``, ``(batch, C, *grid)`` or ``(batch, *grid)`` (then C = 1 and no
        coordinates).
    problem : str
        A problem of :func:`solvers.problems.get_problem` (its grid convention and dims).
    with_coordinates : bool
        Append the grid coordinates as channels after the input (C = 1 + ndim).
    dtype : torch.dtype or None
        Float type the module computes in; None: its parameters' (float32 without any).
    """

    def __init__(self, module: torch.nn.Module, *, layout: str, problem: str,
                 with_coordinates: bool = False, dtype: torch.dtype | None = None) -> None:
        super().__init__()
        if not isinstance(module, torch.nn.Module):
            msg = f"`module` must be a torch.nn.Module; got {type(module).__name__}."
            raise InputError(msg)
        if layout not in LAYOUTS:
            msg = f"`layout` must be one of {LAYOUTS}; got {layout!r}."
            raise InputError(msg)
        if layout == "no_channel" and with_coordinates:
            msg = "`with_coordinates` needs a channel axis; got layout='no_channel'."
            raise InputError(msg)
        self.module = module
        self.layout = layout
        self.spec = get_problem(problem)
        self.with_coordinates = bool(with_coordinates)
        param = next(module.parameters(), None)
        self.input_dtype = dtype or (param.dtype if param is not None else torch.float32)

    def _coordinates(self, x: torch.Tensor) -> torch.Tensor:
        """``(batch, *grid, ndim)`` coordinates of the problem's grid of ``x``'s size."""
        n = x.shape[1]
        axis = torch.as_tensor(self.spec.coordinates(n), dtype=x.dtype, device=x.device)
        grids = torch.meshgrid(*([axis] * self.spec.ndim), indexing="ij")
        coords = torch.stack(grids, dim=-1)
        return coords.expand(x.shape[0], *coords.shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(batch, *grid, 1)`` in, ``(batch, *grid, 1)`` out (the module's float type)."""
        x = x.to(self.input_dtype)
        if self.with_coordinates:
            x = torch.cat([x, self._coordinates(x)], dim=-1)
        if self.layout == "channels_first":
            x = torch.movedim(x, -1, 1)
        elif self.layout == "no_channel":
            x = x[..., 0]
        y = self.module(x)
        if self.layout == "channels_first":
            y = torch.movedim(y, 1, -1) if isinstance(y, torch.Tensor) and y.ndim > 1 else y
        elif self.layout == "no_channel" and isinstance(y, torch.Tensor):
            y = y[..., None]
        want = (*x.shape[:1], *self._grid_shape(x), 1)
        if not isinstance(y, torch.Tensor) or tuple(y.shape) != want:
            got = tuple(y.shape) if isinstance(y, torch.Tensor) else type(y).__name__
            msg = (f"the wrapped module must return one channel on the input grid, shape "
                   f"{self._layout_shape(want)} in layout {self.layout!r}; got {got} (after "
                   "moving the channel axis last).")
            raise ShapeError(msg)
        return y

    def _grid_shape(self, x: torch.Tensor) -> tuple[int, ...]:
        if self.layout == "channels_first":
            return tuple(x.shape[2:])
        if self.layout == "no_channel":
            return tuple(x.shape[1:])
        return tuple(x.shape[1:-1])

    def _layout_shape(self, want: tuple[int, ...]) -> tuple[int, ...]:
        if self.layout == "channels_first":
            return (want[0], 1, *want[1:-1])
        if self.layout == "no_channel":
            return want[:-1]
        return want


def surrogate_from_module(cls: type[_S], module: torch.nn.Module, *, problem: str,
                          resolution: int, layout: str = "channels_last",
                          with_coordinates: bool = False, dataset: Any = None,
                          name: str | None = None, device: str | torch.device | None = None,
                          batch_size: int | None = None,
                          ood_reference: OODReference | None = None) -> _S:
    """A surrogate from any torch module (another package's model, one trained elsewhere).

    Reached as ``Surrogate.from_module(module, problem=..., resolution=..., ...)``.

    Parameters
    ----------
    module : torch.nn.Module
        Maps the input function in physical units to the prediction with one output channel,
        in ``layout`` (wrapped in a :class:`ModuleAdapter`; normalisers belong inside it).
    problem : str
        ``"burgers"``, ``"darcy"`` or ``"darcy-inverse"``.
    resolution : int
        The grid the module takes (``n`` points per axis); other grids go through
        ``solve(..., resample=True)``.
    layout : {"channels_last", "channels_first", "no_channel"}
        ``(batch, *grid, C)``, ``(batch, C, *grid)`` (neuraloperator) or ``(batch, *grid)``.
    with_coordinates : bool
        Append the grid coordinates as input channels (the original FNO scripts).
    dataset : xarray.Dataset, optional
        The data the module learnt from: its provenance picks the reference solver of
        ``reference_solver()`` (e.g. the viscosity of an imported PDEBench file) and its
        attributes show in ``provenance``.
    name, device, batch_size, ood_reference
        As for the :class:`~neuralop_fem.surrogate.Surrogate` constructor.
    """
    adapter = ModuleAdapter(module, layout=layout, problem=problem,
                            with_coordinates=with_coordinates)
    record = RunRecord() if dataset is None else \
        RunRecord(data=DataRecord.from_dict(dataset_provenance(dataset, None)))
    return cls(adapter, problem=problem, resolution=resolution, run_info=record, device=device,
               batch_size=batch_size, ood_reference=ood_reference,
               name=name or f"{type(module).__name__} ({problem})")
