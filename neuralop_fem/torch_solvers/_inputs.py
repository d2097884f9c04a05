"""Input checks of the Darcy twin: the numpy solver's, on its public contract (private).

The same rules and messages as :class:`solvers.darcy.DarcyFDSolver`: a square node grid with
``n >= 3``, finite and positive coefficients; an ``initial_guess`` / ``forcing`` of the
coefficient's shape (``forcing`` also as one field for every sample).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from solvers.checks import plain
from solvers.contract import Batch, SolverInput, as_batch, check_finite, ordered_values
from solvers.errors import InputError, ShapeError

__all__ = ["coefficient_batch", "nodal_field"]


def coefficient_batch(inputs: SolverInput) -> Batch:
    """Validate a nodal coefficient: square node grid with n >= 3, finite, > 0."""
    batch = as_batch(inputs, name="a", core_dims=("x", "y"))
    a = batch.values
    n, ny = a.shape[1:]
    if n != ny or n < 3:
        msg = f"`a` must be on a square n x n node grid with n >= 3; got shape {a.shape[1:]}."
        raise ShapeError(msg)
    if (a <= 0).any():
        first = tuple(int(i) for i in np.argwhere(a <= 0)[0])
        msg = (f"`a` must be > 0 everywhere; got {np.count_nonzero(a <= 0)} value(s) <= 0, "
               f"the first {plain(a[first])} at index {first}.")
        raise InputError(msg)
    return batch


def nodal_field(values: ArrayLike | None, batch: Batch, *, name: str,
                broadcast: bool = False) -> NDArray[np.float64] | None:
    """``initial_guess`` / ``forcing`` as a (n_samples, n, n) float64 array (None passes)."""
    if values is None:
        return None
    arr = ordered_values(values, core_dims=("x", "y"))  # a DataArray by dim name
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
