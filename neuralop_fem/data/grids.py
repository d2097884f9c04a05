"""The grid convention of a dataset: which points its fields are values at.

A dataset states its convention in the global attribute ``grid`` (:data:`GRID`, one of
:data:`solvers.grids.GRID_CONVENTIONS`); a file without it (every file written before the
attribute existed, and imports) is on its problem's grid (:attr:`solvers.problems.Problem.grid`:
Burgers ``"periodic"``, Darcy ``"nodes"``). A problem accepts its own grid and those of its
:attr:`~solvers.problems.Problem.grid_solvers` (Darcy: ``"cell-centred"``, ``"half-open"``).

What depends on the convention, and asks here:

* the coordinates (validated against :func:`solvers.grids.grid_coordinates`);
* the classical solver (:func:`grid_solver_name`: the node grid's default, else the problem's
  solver of that grid);
* whether the labels vanish on the sample points at the edges (:func:`zero_boundary`: at
  every edge, only on the node grid) and at which edges (:func:`dirichlet_edges`: the first
  and last point per axis on nodes, the first on ``x_i = i/n``, none on cell centres), which
  decides where a model's prediction is set to zero;
* coarsening by striding (:func:`reachable`, :func:`grid_stride`): node grids
  ``(n_full - 1) % (n - 1) == 0``, ``x_i = i/n`` grids ``n_full % n == 0``; a cell-centred grid
  is not strided (the centres of a coarser grid are not points of a finer one), so only its own
  resolution is reachable;
* moving samples to another resolution (:func:`resample_input` for inputs and coefficients,
  linear or nearest node; :func:`resample_output` for solutions and predictions, Fourier on the
  periodic grid, bilinear on nodes).

The numerics (coordinates, strides, interpolations) are those of :mod:`solvers.grids`; this
module adds what a dataset decides (its attribute, its problem's solver and boundary).

The models see every grid through the coordinates their dataset hands them (the node
coordinates of the same number of points for non-node grids; a relabelling the model cannot
tell apart), so a model trained on one convention must be evaluated on data of the same one.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from solvers.grids import (
    bilinear_at_points,
    describe_grid,
    grid_coordinates,
    grid_reachable,
    grid_spacing,
    grid_stride,
    resample_input,
    resample_output,
)
from solvers.problems import get_problem

from ..errors import DatasetError
from .names import GRID

__all__ = [
    "GRID",
    "bilinear_at_points",
    "dataset_grid",
    "describe_grid",
    "dirichlet_edges",
    "grid_coordinates",
    "grid_solver_name",
    "grid_spacing",
    "grid_stride",
    "problem_grids",
    "reachable",
    "resample_input",
    "resample_output",
    "zero_boundary",
]


def problem_grids(problem: str) -> tuple[str, ...]:
    """The grid conventions a dataset of ``problem`` may use, its own first."""
    spec = get_problem(problem)
    return (spec.grid, *spec.grid_solvers)


def dataset_grid(attrs: Mapping[str, object], problem: str | None = None, *,
                 source: str = "<dataset>") -> str:
    """The grid convention stated by a dataset's attributes (its problem's grid if none).

    Raises
    ------
    DatasetError
        ``grid`` names a convention the problem does not accept.
    """
    problem = str(attrs.get("problem")) if problem is None else problem
    valid = problem_grids(problem)
    grid = attrs.get(GRID, valid[0])
    if grid not in valid:
        shown = grid if isinstance(grid, str) else repr(grid)
        msg = (f"{source}: attribute `{GRID}` of a {problem} dataset must be one of "
               f"{', '.join(map(repr, valid))}; got {shown!r}.")
        raise DatasetError(msg)
    return str(grid)


def grid_solver_name(problem: str, grid: str) -> str:
    """The short name of ``problem``'s solver on ``grid`` (its default on its own grid)."""
    spec = get_problem(problem)
    return spec.default_solver if grid == spec.grid else spec.grid_solvers[grid]


def zero_boundary(problem: str, grid: str) -> bool:
    """Whether the labels vanish at every edge point of ``grid`` (Dirichlet on sample points).

    True only for a problem with ``u = 0`` on the boundary on its node grid: cell centres lie
    half a cell inside, and ``x_i = i/n`` misses the edges ``x = 1``, ``y = 1``.
    """
    return get_problem(problem).zero_boundary_output and grid == "nodes"


def dirichlet_edges(problem: str, grid: str,
                    attrs: Mapping[str, object] | None = None) -> tuple[bool, bool]:
    """Whether the first and the last sample point along each axis are Dirichlet nodes.

    For a problem with ``u = 0`` on the boundary, an edge's points are Dirichlet nodes when
    they lie on the boundary: ``x = 0`` for the first point, ``x = 1`` for the last. The
    points are those of ``grid`` (:func:`grid_coordinates`), or where ``attrs`` records the
    source points of an import relabelled onto the node grid (``source_x_coordinate``, e.g.
    neuraloperator's ``i/n``), those: the labels were computed there.

    Returns
    -------
    (first, last)
        ``(True, True)`` on nodes, ``(True, False)`` on ``x_i = i/n`` (``"half-open"``),
        ``(False, False)`` on cell centres and for problems without a zero boundary.
    """
    if not get_problem(problem).zero_boundary_output:
        return (False, False)
    source = (attrs or {}).get("source_x_coordinate")
    points = (np.asarray(source, dtype=np.float64).ravel() if source is not None
              and np.size(source) >= 2 else grid_coordinates(grid, 3))
    # float32 coordinates of an import: 1e-6 is a few units in their last place on [0, 1].
    return (bool(abs(points[0]) < 1e-6), bool(abs(points[-1] - 1.0) < 1e-6))


#: Resolutions reachable from ``n_full`` points of a grid by strided subsampling
#: (:func:`solvers.grids.grid_reachable`).
reachable = grid_reachable
