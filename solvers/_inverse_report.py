"""The per-sample report of :class:`solvers.darcy_inverse.DarcyInverseSolver` (private module;
the class is public as ``solvers.InverseSolveReport``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np
from numpy.typing import NDArray

from .errors import InputError

__all__ = ["InverseSolveReport"]

Array = NDArray[np.float64]


@dataclass(frozen=True, kw_only=True)
class InverseSolveReport:
    """Per-sample diagnostics of one :meth:`DarcyInverseSolver.solve_with_report` call.

    Every array has one entry per sample. ``iterations``, ``residual`` and ``solve_time`` carry
    the names of :class:`~solvers.SolveReport` fields, so code that reads those keeps working.

    Attributes
    ----------
    iterations : int array
        L-BFGS-B iterations on the observation grid (0: the starting coefficient already met
        the stopping rule).
    forward_solves, adjoint_solves, pde_solves : int arrays
        Linear PDE solves on all grids (the coarse grids of the multilevel start included):
        forward, adjoint (one each per evaluation of the objective) and their sum.
    equivalent_solves : float array
        The same work in observation-grid solves: each solve weighted by its number of
        unknowns relative to the observation grid (a solve on ``(n - 1) / 2`` intervals
        counts 1/4).
    residual : float array
        Final relative misfit ``||F(a) - u_obs|| / ||u_obs||`` over the interior nodes.
    regularization : float array
        Final regularisation term ``alpha * TV`` of the objective.
    solve_time : float array
        Wall time per sample in seconds.
    stop_reason : str array
        ``"discrepancy"`` (misfit <= tau * delta), ``"misfit_tol"`` (noise-free data:
        relative misfit <= misfit_tol), ``"stationary"`` (L-BFGS-B converged before the misfit
        target), ``"maxiter"`` (iteration or evaluation cap), ``"stalled"`` (line search failed),
        ``"failed"`` (the sample could not be inverted: see ``error``; its coefficient is NaN,
        the other samples are kept).
    linear_fallbacks : int array
        Linear solves whose iterative method missed ``tol`` and that were redone by sparse LU
        (0 with ``linear_solver="direct"``; default all 0).
    error : str array
        Why a ``"failed"`` sample failed ("" for the others; default all "").
    method : str
    """

    iterations: NDArray[np.int64]
    forward_solves: NDArray[np.int64]
    adjoint_solves: NDArray[np.int64]
    pde_solves: NDArray[np.int64]
    equivalent_solves: Array
    residual: Array
    regularization: Array
    solve_time: Array
    stop_reason: NDArray[np.str_]
    linear_fallbacks: NDArray[np.int64] | None = None
    error: NDArray[np.str_] | None = None
    method: str = ""

    def __post_init__(self) -> None:
        n = len(self.iterations)
        if self.linear_fallbacks is None:
            object.__setattr__(self, "linear_fallbacks", np.zeros(n, dtype=np.int64))
        if self.error is None:
            object.__setattr__(self, "error", np.full(n, "", dtype=str))
        sizes = {f.name: len(getattr(self, f.name)) for f in fields(self) if f.name != "method"}
        if len(set(sizes.values())) != 1:
            msg = f"InverseSolveReport fields must have one entry per sample; got {sizes}."
            raise InputError(msg)

    @classmethod
    def concatenate(cls, reports: Sequence[InverseSolveReport]) -> InverseSolveReport:
        """Join the reports of consecutive chunks of samples."""
        if not reports:
            msg = "`reports` must hold at least one InverseSolveReport; got none."
            raise InputError(msg)
        names = [f.name for f in fields(cls) if f.name != "method"]
        joined = {name: np.concatenate([getattr(r, name) for r in reports]) for name in names}
        return cls(**joined, method=reports[0].method)
