"""Grid coordinates, resolution rules and input-shape checks shared by the models.

The coordinates are those of :mod:`solvers.grids` (``"periodic"``: ``x_i = i/n``; ``"nodes"``:
``x_i = i/(n-1)``), built with torch on the input's device inside ``forward`` (no host copy,
traceable by ``torch.compile``): :func:`periodic_grid_1d` equals
:func:`solvers.grids.grid_coordinates` exactly, :func:`node_grid_2d` to torch's ``linspace``
round-off (a unit in the last place; tested).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from ..errors import InputError, ShapeError

__all__ = [
    "check_dtype",
    "check_input",
    "coarse_size",
    "middle_size",
    "modes_hint",
    "node_grid_2d",
    "periodic_grid_1d",
    "prepare_input",
]


def periodic_grid_1d(n: int, *, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """Periodic grid ``x_i = i/n``, ``i = 0..n-1`` on [0, 1), shape (n, 1)
    (:func:`solvers.grids.grid_coordinates` ``("periodic", n)``).

    The reference code uses ``linspace(0, 1, n)`` (both endpoints) although the Burgers
    problem is periodic; we use the grid the data are sampled on (no duplicated endpoint).
    """
    return (torch.arange(n, dtype=dtype, device=device) / n).unsqueeze(-1)


def node_grid_2d(n: int, *, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """Node grid of [0, 1]^2 with ``x_i = i/(n-1)``, shape (n, n, 2)
    (:func:`solvers.grids.grid_coordinates` ``("nodes", n)`` per axis, to round-off).

    Component 0 is the coordinate along tensor axis 1 of a (batch, n, n, channels) field
    (``x``), component 1 the coordinate along axis 2 (``y``), matching the data layout
    ``a(sample, x, y)``.
    """
    t = torch.linspace(0.0, 1.0, n, dtype=dtype, device=device)
    gx, gy = torch.meshgrid(t, t, indexing="ij")
    return torch.stack((gx, gy), dim=-1)


def _round_half_up(value: float) -> int:
    return int(math.floor(value + 0.5))


def coarse_size(n: int, ratio: float) -> int:
    """Coarse attention grid size ``n_c = round(ratio * (n - 1)) + 1`` (at least 2).

    With ``ratio = 0.3``: 141 -> 43, 211 -> 64, 421 -> 127; with ``ratio = 0.25``:
    141 -> 36, 211 -> 54. The reference uses ``n_c = 420/s_a + 1`` with an integer
    stride ``s_a``, which this rule reproduces at 141.
    """
    return max(2, _round_half_up(ratio * (n - 1)) + 1)


def middle_size(n: int, n_coarse: int) -> int:
    """Intermediate CiNN grid size ``n_m = round(sqrt(n * n_c))`` (141/43 -> 78, 141/36 -> 71)."""
    return _round_half_up(math.sqrt(n * n_coarse))


def modes_hint(modes: int, largest: int, n: int) -> str:
    """The fix for a grid of ``n`` points too coarse for ``modes`` Fourier modes, of which
    ``largest`` fit: one sentence naming the override (``--set modes=K``)."""
    if largest >= 1:
        return (f"Its {modes} Fourier modes need a finer grid: lower them to at most {largest} "
                f"(`--set modes={largest}` on the command line, `config.replace(modes={largest})` "
                "in Python) or use a finer grid.")
    return f"Not even one Fourier mode fits n={n}: use a finer grid."


def check_input(
    x: torch.Tensor, *, spatial_dims: int, channels: int, min_size: int, name: str = "x",
    hint: Callable[[int], str] | None = None,
) -> int:
    """Validate a channels-last field and return its resolution ``n``.

    ``hint(n)``, when given, is appended to the message of a grid below ``min_size`` (how to
    fit the model to it, e.g. :func:`modes_hint`).

    Raises
    ------
    ShapeError
        If ``x`` is not (batch, n[, n], channels) with square grid, the right channel
        count and ``n >= min_size``.
    """
    layout = "(batch, n, channels)" if spatial_dims == 1 else "(batch, n, n, channels)"
    if not isinstance(x, torch.Tensor):
        msg = f"`{name}` must be a torch.Tensor of shape {layout}; got {type(x).__name__}."
        raise ShapeError(msg)
    shape = tuple(x.shape)
    if x.ndim != spatial_dims + 2:
        msg = f"`{name}` must have shape {layout} with channels={channels}; got {shape}."
        raise ShapeError(msg)
    if shape[-1] != channels:
        msg = f"`{name}` must have {channels} channel(s) in the last axis {layout}; got {shape}."
        raise ShapeError(msg)
    n = shape[1]
    if spatial_dims == 2 and shape[2] != n:
        msg = f"`{name}` must be on a square n x n grid {layout}; got {shape}."
        raise ShapeError(msg)
    if n < min_size:
        msg = f"`{name}` must have resolution n >= {min_size} for this model; got n={n} {shape}."
        if hint is not None:
            msg = f"{msg} {hint(n)}"
        raise ShapeError(msg)
    return n


def prepare_input(
    x: torch.Tensor, *, dtype: torch.dtype, spatial_dims: int, channels: int, min_size: int,
    name: str = "x", hint: Callable[[int], str] | None = None,
) -> tuple[torch.Tensor, int]:
    """The model input ``x`` checked, and its resolution.

    The forward entry of every model: :func:`check_input` (layout, channels, grid size), then
    the dtype. As for torch's own layers, the input must have the model's ``dtype``: a model
    never changes the precision of its input silently (float64 data into a float32 model would
    come back float32 with float32 accuracy). Cast one of the two (``x.float()``, or
    ``model.double()`` for a float64 model); :class:`~neuralop_fem.Surrogate` does this for
    numpy input, documented there.

    Raises
    ------
    ShapeError
        As :func:`check_input`.
    InputError
        For an empty batch (no sample to predict), a tensor that is not floating point
        (integer, bool or complex), or one of another floating-point dtype than the model's.
    """
    n = check_input(x, spatial_dims=spatial_dims, channels=channels, min_size=min_size, name=name,
                    hint=hint)
    if x.shape[0] == 0:
        msg = (f"`{name}` must hold at least one sample; got an empty batch of shape "
               f"{tuple(x.shape)}.")
        raise InputError(msg)
    if not x.is_floating_point():
        msg = f"`{name}` must be a floating-point tensor; got dtype {x.dtype}."
        raise InputError(msg)
    check_dtype(x, dtype, name=name)
    return x, n


def check_dtype(x: torch.Tensor, dtype: torch.dtype, *, name: str = "x") -> None:
    """Raise :class:`InputError` unless the floating-point tensor ``x`` has the model's
    ``dtype`` (the message says how to cast either side)."""
    if x.dtype != dtype:
        msg = (f"`{name}` must have the model's dtype {dtype}; got {x.dtype}. Cast the input "
               f"(`x.to({dtype})`) or the model (`model.to({x.dtype})`): a model does not "
               "change the precision of its input silently.")
        raise InputError(msg)
