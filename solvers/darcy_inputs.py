"""The input checks of the Darcy solvers, shared by every solver of the coefficient problem.

:func:`coefficient_batch` validates a coefficient ``a`` (square grid, finite, > 0) and
:func:`nodal_field` an ``initial_guess`` or ``forcing`` of its shape; the numpy solvers
(:mod:`solvers.darcy`, :mod:`solvers.darcy_grid_variants`) and their torch twins
(:mod:`neuralop_fem.torch_solvers`) call these, so every Darcy solver refuses the same inputs
with the same messages.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .checks import plain
from .contract import Batch, SolverInput, as_batch, check_finite, ordered_values
from .errors import InputError, ShapeError

__all__ = ["coefficient_batch", "nodal_field", "system_inputs"]


def coefficient_batch(inputs: SolverInput, *, minimum: int = 3,
                      grid: str = "node grid") -> Batch:
    """Validate a coefficient ``a`` of shape ``(n_samples, n, n)`` or ``(n, n)``: a square
    ``grid`` (its name in the message) of at least ``minimum`` points per side, finite, > 0
    everywhere.

    >>> coefficient_batch(np.ones((2, 5, 5))).values.shape
    (2, 5, 5)
    """
    batch = as_batch(inputs, name="a", core_dims=("x", "y"))
    a = batch.values
    n, ny = a.shape[1:]
    if n != ny or n < minimum:
        msg = f"`a` must be on a square n x n {grid} with n >= {minimum}; got shape {a.shape[1:]}."
        raise ShapeError(msg)
    if (a <= 0).any():
        first = tuple(int(i) for i in np.argwhere(a <= 0)[0])
        msg = (f"`a` must be > 0 everywhere; got {np.count_nonzero(a <= 0)} value(s) <= 0, "
               f"the first {plain(a[first])} at index {first}.")
        raise InputError(msg)
    return batch


def nodal_field(values: ArrayLike | None, batch: Batch, *, name: str,
                broadcast: bool = False) -> NDArray[np.float64] | None:
    """``initial_guess`` / ``forcing`` (``name``) as a ``(n_samples, n, n)`` float64 array of
    the coefficient's shape (``broadcast``: also one field for every sample); None passes.
    A DataArray is read by its dim names."""
    if values is None:
        return None
    arr = ordered_values(values, core_dims=("x", "y"), name=name)  # a DataArray by dim name
    want = batch.values.shape
    if arr.dtype.kind not in "fiu":
        msg = f"`{name}` must be a real array; got dtype {arr.dtype}."
        raise InputError(msg)
    shapes = {want, want[1:]} if broadcast else {want[1:] if batch.single else want}
    if arr.shape not in shapes:
        expected = " or ".join(str(s) for s in sorted(shapes, key=len))
        msg = f"`{name}` must have shape {expected} to match `a`; got {arr.shape}."
        raise ShapeError(msg)
    check_finite(arr, name=name)
    return np.broadcast_to(arr.astype(np.float64), want)


def system_inputs(inputs: SolverInput, initial_guess: ArrayLike | None,
                  forcing: ArrayLike | None, *, default_forcing: float, minimum: int = 3,
                  grid: str = "node grid"
                  ) -> tuple[Batch, NDArray[np.float64] | None, NDArray[np.float64]]:
    """The checked inputs of one ``solve_with_report`` call: the coefficient batch
    (:func:`coefficient_batch`), the initial guess (None passes) and the forcing as a
    ``(n_samples, n, n)`` array (the constant ``default_forcing`` where none is given).

    >>> batch, guess, f = system_inputs(np.ones((2, 5, 5)), None, None, default_forcing=1.0)
    >>> guess is None, f.shape, float(f.max())
    (True, (2, 5, 5), 1.0)
    """
    batch = coefficient_batch(inputs, minimum=minimum, grid=grid)
    guess = nodal_field(initial_guess, batch, name="initial_guess")
    f = (np.full_like(batch.values, default_forcing) if forcing is None
         else nodal_field(forcing, batch, name="forcing", broadcast=True))
    return batch, guess, f
