"""Training batches moved by exact symmetries of the problem (``TrainConfig.augment``).

A symmetry maps every solution pair of the problem to another one, so a moved training pair is
a sample of the same operator: more data at no solver cost. Each problem states its symmetries
(:attr:`~neuralop_fem.problems.ProblemKit.symmetries`); the data's grid convention keeps those
that map its sample points onto themselves (:func:`grid_symmetries`):

* ``"shift"`` (1D periodic): ``u(x) -> u(x + s)`` by a whole number of sample points of the
  coarsest field (a periodic problem whose law does not depend on ``x``; the Gaussian random
  fields of the inputs are stationary);
* ``"reflect"`` (1D periodic): ``u(x) -> u(-x)`` (a problem even in ``x``);
* ``"reflect-negate"`` (1D periodic): ``u(x) -> -u(-x)``: Burgers' ``u_t + u u_x = nu u_xx``
  is invariant under it (both the convective and the diffusive term keep their form);
* ``"d4"`` (2D, square): the 8 rotations and reflections of the square: Darcy's
  ``-div(a grad u) = f`` with constant ``f`` and ``u = 0`` on the boundary, forward and
  inverse (the coefficient fields are isotropic);
* ``"transpose"`` (2D): ``(x, y) -> (y, x)`` alone, the part of ``"d4"`` that a grid missing
  the edges ``x = 1`` and ``y = 1`` (neuraloperator's ``x_i = i/n``) keeps.

The periodic grid ``x_i = i/n`` maps index ``j`` to ``-j mod n`` under reflection; node and
cell-centred grids map ``i`` to ``n - 1 - i``. Scalar fields (``input``, ``target``,
``coefficient``) move as values, the gradient ``target_grad`` as a vector (a reflected axis
negates its component, a transposition swaps the two); the coordinates (``grid``,
``grid_fine``) stay: the model sees the moved fields on its usual grid.

Each training sample of a batch gets its own group element, drawn from
``SeedSequence([seed, epoch, batch, rank])``: the same draws when a run is resumed, whichever
way its batches are loaded.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import numpy as np
import torch

from solvers.problems import get_problem

from ..errors import ConfigError
from ..problems import get_kit

__all__ = ["SYMMETRIES", "BatchAugmenter", "grid_symmetries", "training_augmenter"]

_log = logging.getLogger(__name__)

#: Symmetry kinds by spatial dimension.
SYMMETRIES = {1: ("shift", "reflect", "reflect-negate"), 2: ("d4", "transpose")}
#: Batch entries that move as scalar fields, as a gradient, or stay.
_SCALARS = ("input", "target", "coefficient")
_GRADIENTS = ("target_grad",)
_FIXED = ("grid", "grid_fine")


def grid_symmetries(symmetries: tuple[str, ...], grid: str) -> tuple[str, ...]:
    """The symmetries of ``symmetries`` that map the sample points of ``grid`` onto themselves.

    >>> grid_symmetries(("shift", "reflect-negate"), "periodic")
    ('shift', 'reflect-negate')
    >>> grid_symmetries(("d4",), "nodes"), grid_symmetries(("d4",), "half-open")
    (('d4',), ('transpose',))
    """
    kept = []
    for s in symmetries:
        if grid in ("nodes", "cell-centred") and s in ("d4", "transpose"):
            kept.append(s)
        elif grid == "half-open" and s in ("d4", "transpose"):
            kept.append("transpose")
        elif grid == "periodic" and s in SYMMETRIES[1]:
            kept.append(s)
    return tuple(dict.fromkeys(kept))


class BatchAugmenter:
    """Moves each sample of a training batch by a random element of the symmetry group.

    Parameters
    ----------
    symmetries : tuple of str
        Kinds of :data:`SYMMETRIES` for one spatial dimension (1D: any of ``"shift"`` and one
        of ``"reflect"``, ``"reflect-negate"``; 2D: ``"d4"`` or ``"transpose"``).
    ndim : int
        Spatial dimensions of the fields (1 or 2).
    seed : int
        The run's seed.
    rank : int
        The process's rank (distributed training): each draws its own elements.

    Raises
    ------
    ConfigError
        No symmetry, a kind unknown for ``ndim``, or two reflections.
    """

    def __init__(self, symmetries: tuple[str, ...], *, ndim: int, seed: int,
                 rank: int = 0) -> None:
        if ndim not in SYMMETRIES:
            msg = f"`ndim` must be 1 or 2; got {ndim!r}."
            raise ConfigError(msg)
        symmetries = tuple(symmetries)
        bad = [s for s in symmetries if s not in SYMMETRIES[ndim]]
        if not symmetries or bad:
            msg = (f"`symmetries` must be some of {list(SYMMETRIES[ndim])} in {ndim}D; "
                   f"got {list(symmetries)}.")
            raise ConfigError(msg)
        if "reflect" in symmetries and "reflect-negate" in symmetries:
            msg = ("`symmetries` may hold one of 'reflect' and 'reflect-negate'; "
                   "got both.")
            raise ConfigError(msg)
        self.symmetries, self.ndim, self.seed, self.rank = symmetries, ndim, int(seed), int(rank)
        #: The 1D reflection among the symmetries, if any.
        self.reflect = next((s for s in symmetries if s.startswith("reflect")), None)

    def _draws(self, size: int, high: int, *, epoch: int, index: int) -> np.ndarray:
        seq = np.random.SeedSequence([self.seed, int(epoch), int(index), self.rank])
        # per sample: an element index in [0, high) and a coin for the 1D reflection
        return np.random.default_rng(seq).integers(0, [high, 2], size=(size, 2))

    def __call__(self, batch: Mapping[str, torch.Tensor], *, epoch: int,
                 index: int) -> dict[str, torch.Tensor]:
        """The batch with sample ``b`` of every field moved by the same element.

        ``epoch`` and ``index`` (the batch's position in the epoch) seed the draws.

        Raises
        ------
        ConfigError
            An entry the augmentation does not know how to move.
        """
        unknown = sorted(set(batch) - {*_SCALARS, *_GRADIENTS, *_FIXED})
        if unknown:
            msg = (f"the batch entries {unknown} have no rule under a symmetry; "
                   f"known: {[*_SCALARS, *_GRADIENTS, *_FIXED]}.")
            raise ConfigError(msg)
        moving = [k for k in batch if k not in _FIXED]
        size = int(batch[moving[0]].shape[0])
        if self.ndim == 1:
            coarsest = min(int(batch[k].shape[1]) for k in moving)
            uneven = [k for k in moving if int(batch[k].shape[1]) % coarsest]
            if uneven:
                msg = (f"the batch entries {uneven} must have a multiple of the "
                       f"coarsest entry's {coarsest} points to be shifted together.")
                raise ConfigError(msg)
            draws = self._draws(size, coarsest, epoch=epoch, index=index)
        else:
            coarsest, draws = 0, self._draws(size, 8, epoch=epoch, index=index)
        out = dict(batch)
        for key in moving:
            gradient = key in _GRADIENTS
            field = batch[key]
            if self.ndim == 1:
                samples = [self._move_1d(field[b], int(draws[b, 0]), bool(draws[b, 1]),
                                         coarsest, gradient=gradient) for b in range(size)]
            else:
                samples = [self._move_2d(field[b], int(draws[b, 0]), gradient=gradient)
                           for b in range(size)]
            out[key] = torch.stack(samples)
        return out

    def _move_1d(self, f: torch.Tensor, steps: int, flip: bool, coarsest: int, *,
                 gradient: bool) -> torch.Tensor:
        """``f`` of shape (n, C) on ``x_i = i/n``: reflected if ``flip`` (and a reflection is
        one of the symmetries), then shifted by ``steps`` points of a ``coarsest``-point grid
        (if ``"shift"`` is)."""
        n = int(f.shape[0])
        if self.reflect is not None and flip:
            f = torch.roll(torch.flip(f, [0]), 1, 0)  # index j -> -j mod n
            # d/dx of u(-x) is -u'(-x); negating the values negates it back
            if gradient != (self.reflect == "reflect-negate"):
                f = -f
        if "shift" in self.symmetries:
            f = torch.roll(f, shifts=-steps * (n // coarsest), dims=0)  # u(x) -> u(x + s)
        return f

    def _move_2d(self, f: torch.Tensor, k: int, *, gradient: bool) -> torch.Tensor:
        """``f`` of shape (n, n, C); ``k`` in 0..7: bit 0 transposes, bits 1 and 2 reverse the
        first and the second axis (``"transpose"``: bit 0 only)."""
        if "d4" not in self.symmetries:
            k &= 1
        if k & 1:
            f = f.transpose(0, 1)
            if gradient:
                f = f[..., [1, 0]]
        for axis in (0, 1):
            if k >> (axis + 1) & 1:
                f = torch.flip(f, [axis])
                if gradient:
                    sign = torch.ones(f.shape[-1], dtype=f.dtype, device=f.device)
                    sign[axis] = -1
                    f = f * sign
        return f.contiguous()


def training_augmenter(task: str, augment: str, grid: str, *, seed: int,
                       rank: int = 0) -> BatchAugmenter | None:
    """The augmenter of a run of ``task`` on data of grid convention ``grid``, or None for
    ``augment="none"``.

    Raises
    ------
    ConfigError
        ``augment="symmetries"`` for a problem that states none its grid keeps.
    """
    if augment == "none":
        return None
    kit, problem = get_kit(task), get_problem(task)
    kept = grid_symmetries(kit.symmetries, grid)
    if not kept:
        stated = list(kit.symmetries) or "none"
        msg = (f"`augment` 'symmetries' needs a symmetry of the {task} problem that "
               f"its data's {grid} grid keeps; the problem states {stated}. Use "
               "augment 'none'.")
        raise ConfigError(msg)
    if rank == 0:
        _log.info("training samples moved by the symmetries %s", ", ".join(kept))
    return BatchAugmenter(kept, ndim=problem.ndim, seed=seed, rank=rank)
