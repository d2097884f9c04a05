"""Unit-Gaussian normalisation of fields (Darcy inputs/targets, Burgers targets; docs/training.md).

``encode(x) = (x - mu) / (sigma + eps)``, ``decode(x) = x * (sigma + eps) + mu`` with ``mu``
and ``sigma`` the pointwise mean and population standard deviation (ddof = 0) over the
training samples, ``eps = 1e-5``. With ``pointwise=False`` (:meth:`UnitGaussianNormalizer.fit`)
the statistics are one mean and one standard deviation per channel over all samples *and* grid
points: stored with spatial shape ``(1, ..., 1)``, they broadcast to any grid, and a
translation-equivariant model stays equivariant.

Resolution change: when a field's spatial shape differs from the fitted one, ``mu`` and
``sigma`` are resampled to it: by striding when the new grid is reachable (periodic 1D:
``n_fit % n == 0``; node grid: ``(n_fit-1) % (n-1) == 0``), otherwise by linear (1D) /
bilinear (2D) interpolation - on the node grid with ``align_corners=True`` (nodes at both ends),
on the periodic 1D grid with wrap-around.
"""

from __future__ import annotations

from typing import TypedDict

import numpy as np
import torch
from numpy.typing import ArrayLike, NDArray
from torch import nn

from ..errors import ShapeError

__all__ = ["NormalizerDict", "UnitGaussianNormalizer"]

EPS = 1e-5


class NormalizerDict(TypedDict):
    """A normaliser as plain Python (:meth:`UnitGaussianNormalizer.to_dict`)."""

    mean: NDArray[np.floating]
    std: NDArray[np.floating]
    eps: float
    periodic: bool


class UnitGaussianNormalizer(nn.Module):
    """Pointwise mean/std normaliser over a set of training fields.

    Parameters
    ----------
    mean, std : array_like, shape ``(*spatial, channels)``
        Pointwise statistics, e.g. ``(n, n, 1)``.
    eps : float
        Added to ``std`` in both directions (default 1e-5).
    periodic : bool
        True for the periodic 1D grid ``x_i = i/n``; False for the node grid ``i/(n-1)``.

    Notes
    -----
    ``mean``, ``std``, ``eps`` and ``periodic`` are buffers: they are in ``state_dict()``, move
    with ``.to(device)`` and load with ``torch.load(..., weights_only=True)``.
    """

    mean: torch.Tensor
    std: torch.Tensor
    eps: torch.Tensor
    periodic: torch.Tensor

    def __init__(self, mean: torch.Tensor | ArrayLike, std: torch.Tensor | ArrayLike, *,
                 eps: float = EPS, periodic: bool = False) -> None:
        super().__init__()
        mean_t = torch.as_tensor(np.asarray(mean)) if not torch.is_tensor(mean) else mean
        std_t = torch.as_tensor(np.asarray(std)) if not torch.is_tensor(std) else std
        if mean_t.shape != std_t.shape or mean_t.ndim < 2:
            msg = (
                "`mean` and `std` must have one shape (*spatial, channels); got "
                f"{tuple(mean_t.shape)} and {tuple(std_t.shape)}."
            )
            raise ShapeError(msg)
        self.register_buffer("mean", mean_t.detach().clone())
        self.register_buffer("std", std_t.detach().clone())
        self.register_buffer("eps", torch.tensor(float(eps), dtype=torch.float64))
        self.register_buffer("periodic", torch.tensor(bool(periodic)))

    @classmethod
    def fit(
        cls, x: torch.Tensor, *, eps: float = EPS, periodic: bool = False, pointwise: bool = True
    ) -> UnitGaussianNormalizer:
        """Fit to training fields ``x`` of shape ``(n_train, *spatial, channels)``.

        ``pointwise=True``: statistics per grid point and channel, shape ``(*spatial, channels)``.
        ``pointwise=False``: per channel over samples and grid points, shape
        ``(1, ..., 1, channels)`` (a global normaliser, valid at any resolution).
        Statistics are accumulated in float64 and stored in ``x``'s dtype.
        """
        x = torch.as_tensor(x)
        if x.ndim < 3 or x.shape[0] < 1:
            msg = f"`x` must have shape (n_train, *spatial, channels); got {tuple(x.shape)}."
            raise ShapeError(msg)
        x64 = x.to(torch.float64)
        dims = (0,) if pointwise else tuple(range(x.ndim - 1))
        mean = x64.mean(dim=dims, keepdim=not pointwise)
        std = x64.std(dim=dims, unbiased=False, keepdim=not pointwise)
        if not pointwise:
            mean, std = mean[0], std[0]
        return cls(mean.to(x.dtype), std.to(x.dtype), eps=eps, periodic=periodic)

    @classmethod
    def from_state_dict(cls, state: dict[str, torch.Tensor]) -> UnitGaussianNormalizer:
        """Rebuild from :meth:`state_dict` (e.g. from ``torch.load(weights_only=True)``)."""
        return cls(
            state["mean"], state["std"], eps=float(state["eps"]), periodic=bool(state["periodic"])
        )

    def to_dict(self) -> NormalizerDict:
        """Plain-Python copy: numpy ``mean``/``std``, float ``eps``, bool ``periodic``."""
        return {
            "mean": self.mean.detach().cpu().numpy(),
            "std": self.std.detach().cpu().numpy(),
            "eps": float(self.eps),
            "periodic": bool(self.periodic),
        }

    @classmethod
    def from_dict(cls, data: NormalizerDict) -> UnitGaussianNormalizer:
        """Inverse of :meth:`to_dict`."""
        return cls(data["mean"], data["std"], eps=data["eps"], periodic=data["periodic"])

    # -- resampling -------------------------------------------------------------------------

    def _resample(self, field: torch.Tensor, spatial: tuple[int, ...]) -> torch.Tensor:
        fitted = tuple(field.shape[:-1])
        if spatial == fitted or (all(n == 1 for n in fitted) and len(spatial) == len(fitted)):
            return field  # same grid, or global statistics that broadcast
        if len(spatial) != len(fitted):
            msg = (
                f"`x` must have {len(fitted)} spatial dimension(s) like the fitted shape {fitted}; "
                f"got spatial shape {spatial}."
            )
            raise ShapeError(msg)
        periodic = bool(self.periodic)
        strides = []
        for n_fit, n in zip(fitted, spatial, strict=True):
            if periodic and n_fit % n == 0:
                strides.append(n_fit // n)
            elif not periodic and n >= 2 and (n_fit - 1) % (n - 1) == 0:
                strides.append((n_fit - 1) // (n - 1))
            else:
                strides.append(0)
        if all(strides):
            index = tuple(slice(None, None, s) for s in strides)
            return field[index]
        return _interpolate(field, spatial, periodic=periodic)

    def _stats(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n_spatial = self.mean.ndim - 1
        if x.shape[-1] != self.mean.shape[-1] or x.ndim not in (n_spatial + 1, n_spatial + 2):
            msg = (
                f"`x` must have shape (batch, *spatial, {self.mean.shape[-1]}) with "
                f"{n_spatial} spatial dimension(s); got {tuple(x.shape)}."
            )
            raise ShapeError(msg)
        spatial = tuple(x.shape[-n_spatial - 1 : -1])
        mean = self._resample(self.mean, spatial).to(dtype=x.dtype)
        std = self._resample(self.std, spatial).to(dtype=x.dtype)
        return mean, std + self.eps.to(x.dtype)

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """``(x - mu) / (sigma + eps)`` for ``x`` of shape ``([batch,] *spatial, channels)``."""
        mean, scale = self._stats(x)
        return (x - mean) / scale

    def decode(self, x: torch.Tensor) -> torch.Tensor:
        """``x * (sigma + eps) + mu``, the inverse of :meth:`encode`."""
        mean, scale = self._stats(x)
        return x * scale + mean

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Same as :meth:`encode`."""
        return self.encode(x)

    def extra_repr(self) -> str:
        return (f"shape={tuple(self.mean.shape)}, eps={float(self.eps):g}, "
                f"periodic={bool(self.periodic)}")


def _interpolate(field: torch.Tensor, spatial: tuple[int, ...], *, periodic: bool) -> torch.Tensor:
    """Linear/bilinear resampling of a ``(*fitted, channels)`` field to ``spatial``."""
    f64 = field.to(torch.float64)
    if periodic:
        if len(spatial) != 1:
            msg = f"periodic resampling is 1D only; got spatial shape {spatial}."
            raise ShapeError(msg)
        n_fit, n = field.shape[0], spatial[0]
        pos = torch.arange(n, dtype=torch.float64, device=field.device) * (n_fit / n)
        i0 = torch.floor(pos).long()
        w = (pos - i0)[:, None]
        out = (1 - w) * f64[i0 % n_fit] + w * f64[(i0 + 1) % n_fit]
        return out.to(field.dtype)
    mode = {1: "linear", 2: "bilinear"}.get(len(spatial))
    if mode is None:
        msg = f"resampling supports 1 or 2 spatial dimensions; got {spatial}."
        raise ShapeError(msg)
    chan_first = torch.movedim(f64, -1, 0)[None]  # (1, C, *fitted)
    out = torch.nn.functional.interpolate(chan_first, size=spatial, mode=mode, align_corners=True)
    return torch.movedim(out[0], 0, -1).to(field.dtype)
