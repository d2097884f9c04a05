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
* whether the labels vanish on the sample points at the edges (:func:`zero_boundary`), which
  decides if a model's prediction is set to zero there (only on the node grid);
* coarsening by striding (:func:`reachable`): node grids ``(n_full - 1) % (n - 1) == 0``,
  ``x_i = i/n`` grids ``n_full % n == 0``; a cell-centred grid is not strided (the centres of
  a coarser grid are not points of a finer one), so only its own resolution is reachable.

The models see every grid through the coordinates their dataset hands them (the node
coordinates of the same number of points for non-node grids; a relabelling the model cannot
tell apart), so a model trained on one convention must be evaluated on data of the same one.
"""

from __future__ import annotations

from collections.abc import Mapping

from solvers.grids import describe_grid, grid_coordinates, grid_spacing
from solvers.problems import get_problem

from ..errors import DatasetError, InputError
from .names import GRID

__all__ = [
    "GRID",
    "dataset_grid",
    "describe_grid",
    "grid_coordinates",
    "grid_solver_name",
    "grid_spacing",
    "grid_stride",
    "problem_grids",
    "reachable",
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


def reachable(grid: str, n_full: int) -> list[int]:
    """Resolutions reachable from ``n_full`` points of ``grid`` by strided subsampling."""
    if grid == "nodes":
        return [n for n in range(2, n_full + 1) if (n_full - 1) % (n - 1) == 0]
    if grid == "cell-centred":
        return [n_full]
    return [n for n in range(1, n_full + 1) if n_full % n == 0]


def grid_stride(grid: str, n_full: int, n: int) -> int:
    """The stride that takes ``n_full`` points of ``grid`` to ``n`` points.

    Raises
    ------
    InputError
        ``n`` is not :func:`reachable`; the message lists the reachable resolutions.
    """
    valid = reachable(grid, n_full)
    if n not in valid:
        msg = (f"`resolution` must be reachable from {n_full} by strided subsampling on the "
               f"{grid} grid: one of {valid}; got {n}.")
        raise InputError(msg)
    return (n_full - 1) // (n - 1) if grid == "nodes" else n_full // n
