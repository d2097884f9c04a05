"""Check a dataset's labels with this package's solvers: per-sample errors, grid by grid.

:func:`check_labels` solves the dataset's inputs with the classical solver its provenance
names (the physical parameters must be known: an import records them, or refuses to guess),
on grids ``r`` times finer than the data, and compares the solution at the data's points with
the stored labels. The data's own points are used, not its relabelled grid: the recorded source
coordinates of an import (cell centres, ``x_i = i/n``) or the dataset's grid.

* Darcy: the fine grid is the node grid with ``m - 1 = r * d`` intervals that contains every
  data point (``d = n - 1`` on nodes, ``n`` for ``i/n``, ``2n`` for cell centres); the
  coefficient at a fine node is the value of the nearest data point (piecewise constant, as
  cells or phases are), the solution is read at the data points.
* Darcy on cell centres (a dataset on the ``"cell-centred"`` grid, or an import whose points
  are the centres ``(i + 1/2)/n``): :class:`~solvers.DarcyCellFDSolver` on
  ``r n x r n`` cells, each data cell split into ``r x r`` cells of its coefficient (no
  resampling of the coefficient); the solution is read at the data's centres (a fine centre
  for odd ``r``, the mean of the four fine cells around it for even ``r``). At ``r = 1`` this
  is the discretisation of a dataset generated on cell centres, so its labels agree to the
  solver's tolerance.
* Burgers (periodic): the initial condition is refined by Fourier interpolation to ``r n``
  points and the solution strided back.

The error against the labels falls as ``r`` grows while the discretisation error dominates;
where it levels off, our solution agrees with the labels as well as it can and the rest is
their discretisation (or a different equation). ``agree_at`` names the coarsest grid within
5 % of the smallest mean error, or at round-off (errors at 1e-12 in float64, 1e-6 for float32
labels, are all as good: their differences are noise).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr
from numpy.typing import NDArray

from solvers.darcy_grid_variants import DarcyCellFDSolver
from solvers.problems import get_problem

from ...errors import InputError
from ...metrics import relative_l2, summarize
from ..dim_order import in_api_order
from ..provenance import require_physics, solver_from_record

__all__ = ["agreeing_row", "check_labels"]

#: Relative L2 errors at or below which labels stored in this type agree to round-off: the
#: solvers' own round-off is 1e-16 to 1e-13 in float64; float32 storage alone rounds by about
#: 6e-8 relative. Below it, a finer grid's smaller error is noise, not better agreement.
_ROUND_OFF = {"float64": 1e-12, "float32": 1e-6}


def _axis(ds: xr.Dataset, dim: str) -> NDArray[np.float64]:
    source = ds.attrs.get(f"source_{dim}_coordinate")
    n = ds.sizes[dim]
    if source is not None and np.size(source) == n:
        return np.asarray(source, dtype=np.float64)
    return np.asarray(ds[dim].values, dtype=np.float64)


def _intervals(points: NDArray[np.float64]) -> int:
    """The fewest intervals ``d`` of a node grid on [0, 1] that holds every point."""
    for d in range(1, 8 * len(points) + 1):
        if np.allclose(points * d, np.round(points * d), rtol=0, atol=1e-6):
            return d
    msg = f"the data points {points[:3]}... lie on no uniform node grid of [0, 1]."
    raise InputError(msg)


def _darcy(solver: Any, a: NDArray[np.float64], axis: NDArray[np.float64],
           r: int) -> NDArray[np.float64]:
    m = _intervals(axis) * r + 1
    fine = np.linspace(0.0, 1.0, m)
    nearest = np.abs(fine[:, None] - axis[None, :]).argmin(axis=1)  # ties: the lower point
    a_fine = a[:, nearest][:, :, nearest]
    at = np.round(axis * (m - 1)).astype(int)
    u = np.asarray(solver.solve(a_fine))
    return u[:, at][:, :, at]


def _is_cell_centred(axis: NDArray[np.float64]) -> bool:
    n = axis.size
    want = (np.arange(n) + 0.5) / n
    # float32 coordinates of an import: 1e-6 is a few units in their last place on [0, 1].
    return bool(np.allclose(axis, want, rtol=0, atol=1e-6))


def _cell_solver(solver: Any) -> Any:
    """The cell-centred solver with the physics (and face averaging) of ``solver``."""
    if isinstance(solver, DarcyCellFDSolver):
        return solver
    return DarcyCellFDSolver(forcing=solver.forcing,
                             averaging=getattr(solver, "averaging", "harmonic"))


def _darcy_cells(solver: Any, a: NDArray[np.float64], r: int) -> NDArray[np.float64]:
    a_fine = np.repeat(np.repeat(a, r, axis=1), r, axis=2)
    u = np.asarray(solver.solve(a_fine))
    n = a.shape[-1]
    if r % 2:
        at = np.arange(n) * r + r // 2
        return u[:, at][:, :, at]
    lo = np.arange(n) * r + r // 2 - 1
    rows = 0.5 * (u[:, lo] + u[:, lo + 1])
    return 0.5 * (rows[:, :, lo] + rows[:, :, lo + 1])


def _fourier_refine(u0: NDArray[np.float64], r: int) -> NDArray[np.float64]:
    n = u0.shape[-1]
    spec = np.fft.rfft(u0, axis=-1)
    if n % 2 == 0:
        spec[..., -1] *= 0.5  # split the Nyquist mode between +-n/2
    padded = np.zeros((*u0.shape[:-1], r * n // 2 + 1), dtype=complex)
    padded[..., : spec.shape[-1]] = spec
    return np.fft.irfft(padded, n=r * n, axis=-1) * r


def agreeing_row(rows: list[dict[str, Any]], *, round_off: float) -> dict[str, Any]:
    """The row of the coarsest grid whose mean error is within 5 % of the smallest, or at
    ``round_off`` (errors there are all as good: their differences are noise).

    >>> rows = [{"refinement": r, "rel_l2": {"mean": m}}
    ...         for r, m in ((1, 2e-16), (2, 3e-15), (256, 1e-16))]
    >>> agreeing_row(rows, round_off=1e-12)["refinement"]  # not 256, the noise's minimum
    1
    """
    means = np.array([row["rel_l2"]["mean"] for row in rows])
    best = float(np.nanmin(means))
    close = [row for row, m in zip(rows, means, strict=True) if m <= max(1.05 * best, round_off)]
    return min(close, key=lambda row: row["refinement"])


def check_labels(ds: xr.Dataset, *, refinements: tuple[int, ...] = (1, 2, 4),
                 samples: int | None = 8) -> dict[str, Any]:
    """Our solver on the inputs of ``ds`` at ``refinements``, against its labels.

    Parameters
    ----------
    ds : xarray.Dataset
        A dataset of the schema (an imported file, or one of ours).
    refinements : tuple of int
        Factors ``r >= 1`` of grid refinement.
    samples : int or None
        The first ``samples`` samples (None: all).

    Returns
    -------
    dict
        ``{"problem", "samples", "solver", "grid", "ndim", "rows": [{"refinement", "grid",
        "rel_l2": summary, "per_sample": [...]}, ...], "agree_at": {...}}``; ``grid`` says
        what a row's ``grid`` counts (per side for ``ndim`` 2): ``"nodes"``, ``"cells"``
        (cell-centred data) or ``"points"`` (periodic); ``agree_at`` (:func:`agreeing_row`)
        holds ``refinement``, ``grid``, ``mean_rel_l2`` and ``round_off`` (whether that error
        is at the round-off level ``round_off_level`` of the labels' storage type).

    Raises
    ------
    DatasetError
        The dataset does not record the physical parameters of its labels.
    """
    ds = in_api_order(ds)  # (sample, x, y) by name, whichever order it holds
    problem = str(ds.attrs["problem"])
    spec = get_problem(problem)
    where = str(ds.encoding.get("source") or "dataset")  # the file, where it was opened from
    require_physics(ds.attrs, problem, source=where)
    solver = solver_from_record(ds.attrs, problem, source=where) or spec.make_solver()
    if any(not isinstance(r, int) or r < 1 for r in refinements):
        msg = f"`refinements` must be integers >= 1; got {refinements!r}."
        raise InputError(msg)
    part = ds.isel(sample=slice(None, samples))
    order = ("sample", *spec.dims)  # by name, whatever the order on disk
    inputs = np.asarray(part[spec.input_name].transpose(*order).values, dtype=np.float64)
    stored = part[spec.output_name]
    labels_dtype = "float32" if stored.dtype == np.float32 else "float64"
    labels = np.asarray(stored.transpose(*order).values, dtype=np.float64)
    convention = spec.grid
    if not spec.periodic:
        axis = _axis(part, spec.dims[0])
        if _is_cell_centred(axis):
            convention, solver = "cell-centred", _cell_solver(solver)
        else:
            # The x_i = i/n solver is the node solver on the n + 1 nodes that hold the points.
            node_solver = getattr(solver, "node_solver", None)
            solver = node_solver() if callable(node_solver) else solver
    rows = []
    for r in refinements:
        if spec.periodic:
            u = np.asarray(solver.solve(_fourier_refine(inputs, r)))[:, ::r]
            grid = r * inputs.shape[-1]
        elif convention == "cell-centred":
            u = _darcy_cells(solver, inputs, r)
            grid = r * inputs.shape[-1]
        else:
            u = _darcy(solver, inputs, axis, r)
            grid = _intervals(axis) * r + 1
        err = relative_l2(u, labels)
        rows.append({"refinement": r, "grid": grid, "rel_l2": summarize(err),
                     "per_sample": err.tolist()})
    level = _ROUND_OFF[labels_dtype]
    agree = agreeing_row(rows, round_off=level)
    counted = ("cells" if convention == "cell-centred" else "points" if spec.periodic
               else "nodes")
    return {"problem": problem, "samples": int(len(labels)), "solver": type(solver).__name__,
            "grid": counted, "ndim": len(spec.dims), "rows": rows,
            "agree_at": {"refinement": agree["refinement"], "grid": agree["grid"],
                         "mean_rel_l2": agree["rel_l2"]["mean"],
                         "round_off": bool(agree["rel_l2"]["mean"] <= level),
                         "round_off_level": level}}
