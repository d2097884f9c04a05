"""torch datasets over neuralop_fem netCDF datasets.

Each item is a dict of float32 tensors, channels-last like the models' forward
(``(n, 1)`` in 1D, ``(n, n, c)`` in 2D):

=====================  =====================  ==========================  ======================
dataset                ``input``              ``target``                  extras
=====================  =====================  ==========================  ======================
BurgersDataset         u0 ``(n, 1)``          u ``(n, 1)``                ``grid (n, 1)``,
                                                                          ``target_grad (n, 1)``
DarcyDataset           a ``(n, n, 1)``        u ``(n, n, 1)``             ``grid (n, n, 2)``,
                                                                          ``target_grad (n, n, 2)``,
                                                                          ``coefficient (n, n, 1)``
DarcyInverseDataset    u (+noise) at n_f      pooled a at n_c             ``grid (n_c, n_c, 2)``,
                       ``(n_f, n_f, 1)``      ``(n_c, n_c, 1)``           ``grid_fine (n_f,n_f,2)``
=====================  =====================  ==========================  ======================

Fields are strided subsamples of the stored full-resolution data (see
:mod:`~neuralop_fem.data.subsample`); ``target_grad`` is computed on the full-resolution target
and then subsampled. Samples are selected by position (``indices``) for train/test splits.
By default items are read lazily, one sample at a time, from the (dask-backed) dataset; with
``in_memory=True`` the selected samples are read once at construction.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeAlias

import numpy as np
import torch
import xarray as xr
from numpy.typing import NDArray
from torch.utils.data import Dataset

from solvers.problems import get_problem

from ..errors import DatasetError, InputError
from . import schema as S
from .dim_order import in_api_order
from .grids import dataset_grid, grid_spacing, grid_stride
from .io import load_dataset, read_values
from .subsample import average_pool_nodes, node_gradient, periodic_derivative, subsample_stride
from .validation import validate

if TYPE_CHECKING:  # pragma: no cover
    from .normalizer import UnitGaussianNormalizer

__all__ = ["BurgersDataset", "DarcyDataset", "DarcyInverseDataset"]

#: A dataset or the path of its file.
_Data: TypeAlias = "xr.Dataset | str | os.PathLike[str]"
#: Positions of the selected samples (None: all of them).
_Indices: TypeAlias = "Sequence[int] | NDArray[np.integer] | slice | None"


def _open(data: _Data, problem: str) -> xr.Dataset:
    if isinstance(data, str | os.PathLike):
        data = load_dataset(data)
    if not isinstance(data, xr.Dataset):
        msg = f"`data` must be an xarray.Dataset or a path; got {type(data).__name__}."
        raise InputError(msg)
    validate(data, source="`data`")
    if data.attrs["problem"] != problem:
        msg = f"`data` must be a {problem} dataset; got a {data.attrs['problem']} dataset."
        raise DatasetError(msg)
    return in_api_order(data)  # a file opened with plain xarray is (sample, y, x)


def _indices(indices: _Indices, n_total: int) -> np.ndarray:
    if indices is None:
        return np.arange(n_total)
    if isinstance(indices, slice):
        return np.arange(n_total)[indices]
    idx = np.asarray(indices)
    if idx.ndim != 1 or (idx.size and idx.dtype.kind not in "iu"):
        msg = f"`indices` must be a 1D sequence of integer positions; got {indices!r}."
        raise InputError(msg)
    idx = idx.astype(np.int64)
    if idx.size and (idx.min() < -n_total or idx.max() >= n_total):
        msg = f"`indices` must be positions in [0, {n_total}); got values {idx.min()}..{idx.max()}."
        raise InputError(msg)
    return np.where(idx < 0, idx + n_total, idx)


def _t(a: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32))


class _FieldDataset(Dataset):
    """Shared machinery: selection, lazy or in-memory reads, batched tensor export."""

    problem: str
    _names: tuple[str, ...]

    def __init__(self, data: _Data, *, indices: _Indices, in_memory: bool) -> None:
        self.data = _open(data, self.problem)
        self.indices = _indices(indices, self.data.sizes[S.SAMPLE])
        self.in_memory = bool(in_memory)
        self._cache: dict[str, np.ndarray] | None = None
        if self.in_memory:
            self._cache = {k: read_values(self.data, k, sample=self.indices)
                           for k in self._names}

    def __len__(self) -> int:
        return int(self.indices.size)

    def _read(self, i: int) -> dict[str, np.ndarray]:
        if not -len(self) <= i < len(self):
            msg = f"index must be in [0, {len(self)}); got {i}."
            raise IndexError(msg)
        if self._cache is not None:
            return {k: v[i] for k, v in self._cache.items()}
        k = int(self.indices[i])
        return {name: read_values(self.data, name, sample=k) for name in self._names}

    def stacked(self, key: str) -> torch.Tensor:
        """All selected items' ``key`` stacked: ``(len(self), *item_shape)`` (e.g. to fit a
        :class:`~neuralop_fem.data.normalizer.UnitGaussianNormalizer` on the training split)."""
        return torch.stack([self[i][key] for i in range(len(self))])


class BurgersDataset(_FieldDataset):
    """Burgers items at resolution ``n`` (``input`` u0, ``target`` u, ``target_grad`` du/dx).

    Parameters
    ----------
    data : xarray.Dataset or path
        A Burgers dataset (grid ``x_i = i/n_full``).
    resolution : int, optional
        Target ``n`` with ``n_full % n == 0`` (stride ``n_full // n``); default ``n_full``.
    indices : sequence of int or slice, optional
        Positions of the selected samples (e.g. ``range(1024)`` for training).
    in_memory : bool
        Read the selected samples once at construction.

    Notes
    -----
    ``target_grad = (u[i+1] - u[i-1]) / (2h)`` on the full grid with ``h = 1/n_full`` and the
    true periodic neighbours, then subsampled; second order.

    Another 1D periodic problem of the registry (one input and one output field on ``x``)
    reuses it by a subclass that sets ``problem`` to its name.
    """

    problem = "burgers"

    @property
    def _names(self) -> tuple[str, str]:  # type: ignore[override]
        spec = get_problem(self.problem)
        return (spec.input_name, spec.output_name)

    def __init__(
        self,
        data: _Data,
        *,
        resolution: int | None = None,
        indices: _Indices = None,
        in_memory: bool = False,
    ) -> None:
        super().__init__(data, indices=indices, in_memory=in_memory)
        self.n_full = self.data.sizes[S.X]
        self.resolution = self.n_full if resolution is None else int(resolution)
        self.stride = subsample_stride(self.n_full, self.resolution, periodic=True)
        self.grid = _t(S.burgers_grid(self.n_full)[:: self.stride, None])

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        f = self._read(i)
        s = self.stride
        name_in, name_out = self._names
        du = periodic_derivative(f[name_out], h=1.0 / self.n_full)
        return {
            "input": _t(f[name_in][::s, None]),
            "target": _t(f[name_out][::s, None]),
            "grid": self.grid,
            "target_grad": _t(du[::s, None]),
        }


class DarcyDataset(_FieldDataset):
    """Darcy forward items at resolution ``n``: ``input`` a, ``target`` u, gradient and K.

    Parameters
    ----------
    data : xarray.Dataset or path
        A Darcy dataset on the ``n_full x n_full`` node grid (or another grid convention,
        :mod:`neuralop_fem.data.grids`: its values are handed to the model with the node
        coordinates ``grid`` of the same size).
    resolution : int, optional
        ``n`` with ``(n_full - 1) % (n - 1) == 0`` (e.g. 421 -> 211, 141, 85); on ``x_i = i/n``
        points ``n_full % n == 0``; on cell centres ``n_full`` only. Default full.
    indices, in_memory
        As in :class:`BurgersDataset`.

    Notes
    -----
    ``target_grad[..., 0] = du/dx``, ``[..., 1] = du/dy`` by central differences on the full grid
    (``h = 1/(n_full-1)`` on nodes, ``1/n_full`` on the other grids) and second-order one-sided
    differences on the boundary, then subsampled. ``coefficient`` is the raw subsampled a (the
    H1 weight K).
    """

    problem = "darcy"
    _names = (S.A, S.U)

    def __init__(
        self,
        data: _Data,
        *,
        resolution: int | None = None,
        indices: _Indices = None,
        in_memory: bool = False,
    ) -> None:
        super().__init__(data, indices=indices, in_memory=in_memory)
        self.n_full = self.data.sizes[S.X]
        self.resolution = self.n_full if resolution is None else int(resolution)
        self.grid_convention = dataset_grid(self.data.attrs, "darcy")
        self.stride = (subsample_stride(self.n_full, self.resolution, periodic=False)
                       if self.grid_convention == "nodes"
                       else grid_stride(self.grid_convention, self.n_full, self.resolution))
        # Models see every grid as the node coordinates of its size (neuralop_fem.data.grids).
        self.grid = _node_grid(self.resolution)
        self.spacing = grid_spacing(self.grid_convention, self.n_full)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        f = self._read(i)
        s = self.stride
        grad = node_gradient(f[S.U], h=self.spacing)
        a = _t(f[S.A][::s, ::s, None])
        return {
            "input": a,
            "target": _t(f[S.U][::s, ::s, None]),
            "grid": self.grid,
            "target_grad": _t(grad[::s, ::s]),
            "coefficient": a,
        }


def _node_grid(n: int) -> torch.Tensor:
    x = S.darcy_grid(n)
    gx, gy = np.meshgrid(x, x, indexing="ij")
    return _t(np.stack((gx, gy), axis=-1))


class DarcyInverseDataset(_FieldDataset):
    """Darcy inverse items (Cao 2021; docs/data_format.md): recover the coefficient from the
    solution.

    ``input``: u subsampled to ``n_fine`` (stride ``s_f = (n_full-1)/(n_fine-1)``), plus fixed
    noise; ``target``: the coefficient average-pooled by ``s_f`` to ``n_fine`` and again by
    ``(n_fine-1)/(n_coarse-1)`` to ``n_coarse`` (see
    :func:`~neuralop_fem.data.subsample.average_pool_nodes`: centred windows clipped at the
    boundary), so targets are smoothed at interfaces, not two-valued.

    Parameters
    ----------
    data : xarray.Dataset or path
    n_fine, n_coarse : int
        e.g. 141 and 36, or 211 and 71, from 421.
    noise : float
        Relative noise level epsilon >= 0. The input gets ``epsilon * (sigma + 1e-5) * z`` with
        ``z ~ N(0, 1)`` pointwise and ``sigma`` the pointwise training std of ``input_normalizer``,
        i.e. exactly ``epsilon * z`` added to the *normalised* input.
    noise_seed : int
        Required when ``noise > 0``. The noise of global sample index k is drawn from
        ``np.random.default_rng(np.random.SeedSequence([noise_seed, k]))``: fixed once and for
        all (the same every epoch, independent of selection and order).
    input_normalizer : UnitGaussianNormalizer
        Fitted on the noise-free training inputs at ``n_fine`` (use
        ``DarcyInverseDataset(train, ..., noise=0).stacked("input")``); required when ``noise > 0``.
    indices, in_memory
        As in :class:`BurgersDataset`.
    """

    problem = "darcy"
    _names = (S.A, S.U)

    def __init__(
        self,
        data: _Data,
        *,
        n_fine: int,
        n_coarse: int,
        noise: float = 0.0,
        noise_seed: int | None = None,
        input_normalizer: UnitGaussianNormalizer | None = None,
        indices: _Indices = None,
        in_memory: bool = False,
    ) -> None:
        super().__init__(data, indices=indices, in_memory=in_memory)
        self.n_full = self.data.sizes[S.X]
        self.n_fine, self.n_coarse = int(n_fine), int(n_coarse)
        self.stride = subsample_stride(self.n_full, self.n_fine, periodic=False)
        self.pool = subsample_stride(self.n_fine, self.n_coarse, periodic=False)
        if not (np.isfinite(noise) and noise >= 0):
            msg = f"`noise` must be a finite number >= 0; got {noise!r}."
            raise InputError(msg)
        self.noise = float(noise)
        self._noise_scale: np.ndarray | None = None
        if self.noise > 0:
            if noise_seed is None or input_normalizer is None:
                msg = ("`noise_seed` and `input_normalizer` must be given when `noise` > 0; "
                       "got None.")
                raise InputError(msg)
            std = input_normalizer.std.detach().cpu().numpy().astype(np.float64)
            if std.shape != (self.n_fine, self.n_fine, 1):
                msg = (
                    f"`input_normalizer` must be fitted at {(self.n_fine, self.n_fine, 1)}; "
                    f"got statistics of shape {std.shape}."
                )
                raise InputError(msg)
            self._noise_scale = self.noise * (std[..., 0] + float(input_normalizer.eps))
        self.noise_seed = noise_seed
        self.grid = _node_grid(self.n_coarse)
        self.grid_fine = _node_grid(self.n_fine)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        f = self._read(i)
        s = self.stride
        u = f[S.U][::s, ::s].astype(np.float64)
        if self._noise_scale is not None:
            k = int(self.data[S.SAMPLE].values[self.indices[i]])
            rng = np.random.default_rng(np.random.SeedSequence([int(self.noise_seed), k]))
            u = u + self._noise_scale * rng.standard_normal(u.shape)
        a = average_pool_nodes(average_pool_nodes(f[S.A], factor=s), factor=self.pool)
        return {
            "input": _t(u[..., None]),
            "target": _t(a[..., None]),
            "grid": self.grid,
            "grid_fine": self.grid_fine,
        }

