"""Diagnostics of a surrogate's predictions, computed only when asked for.

:func:`prediction_residual`: the relative residual of Darcy predictions in the discrete system
of the training data's solver (``Surrogate.residual``, ``Surrogate.solve_with_report``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from solvers.contract import SolverInput, as_batch
from solvers.darcy import DarcyFDSolver

from ..data.provenance import unknown_physics
from .stencil import fd_relative_residual
from .warmstart import relative_residual

__all__ = ["prediction_residual"]


def prediction_residual(sur: Any, inputs: SolverInput,
                        prediction: SolverInput) -> NDArray[np.float64]:
    """Relative residual ``||b - A u|| / ||b||`` of each prediction ``u`` of ``sur`` in the
    discrete Darcy system of the training data's solver, with coefficient ``inputs``.

    For a :class:`~solvers.darcy.DarcyFDSolver` (node grid, constant forcing) a batched 5-point
    stencil in torch on the surrogate's device
    (:func:`~neuralop_fem.surrogate.stencil.fd_relative_residual`, no sparse matrix); for the
    node-grid FEM solver its assembled system
    (:func:`~neuralop_fem.surrogate.warmstart.relative_residual`, on the CPU). NaN for every
    sample of a problem without such a system (Burgers, the inverse problem), of a solver on
    another grid, or of data without their physical parameters.

    Parameters
    ----------
    sur : Surrogate
        Its problem, provenance (the training data's solver) and device are used.
    inputs, prediction : (n_samples, n, n) or (n, n) arrays or DataArrays
        Coefficient ``a`` and the predicted solution on the same node grid.

    Returns
    -------
    (n_samples,) float64 array.
    """
    a = as_batch(inputs, name=sur.spec.input_name, core_dims=sur.spec.dims).values
    u = as_batch(prediction, name=sur.spec.output_name, core_dims=sur.spec.dims).values
    nan = np.full(len(a), np.nan)
    if (not sur.spec.can("energy_norm") or unknown_physics(sur.provenance, sur.problem)
            or a.shape != u.shape):
        return nan
    reference = sur.reference_solver()
    # The residual of the node-grid system (solvers on other grids: NaN, unknown).
    if getattr(reference, "grid", "nodes") != "nodes":
        return nan
    if isinstance(reference, DarcyFDSolver):
        return fd_relative_residual(a, u, forcing=reference.forcing,
                                    averaging=reference.averaging, device=sur.device)
    return relative_residual(reference, a, u)
