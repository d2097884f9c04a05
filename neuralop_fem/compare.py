"""Compare two solvers of the same problem: per-sample errors, timings, warm-start gains.

``compare(reference, candidate, inputs)`` works for any pair that follows the solver contract
(classical solver vs surrogate, solver vs solver, surrogate vs surrogate): both get the same
``inputs`` and their solutions are compared sample by sample. Metrics (per sample ``i``):

* ``rel_l2``: ``||c_i - r_i|| / ||r_i||`` on the grid (the papers' metric; reported as a mean);
* ``rel_h1``: relative H1-seminorm error with central-difference gradients (periodic in 1D,
  second-order one-sided at the Darcy boundary), as in training;
* ``max_abs``: ``max |c_i - r_i|``;
* ``rel_energy`` (Darcy): ``sqrt(e^T K e) / sqrt(r^T K r)`` with ``K`` the P1 stiffness
  matrix of ``int a grad u . grad v`` on the node-grid triangulation with the sample's
  coefficient, assembled with scikit-fem;
* ``reference_time``, ``candidate_time`` (seconds) and iterations from each side's
  ``SolveReport`` when it has ``solve_with_report``.

Summary statistics (mean, median, p95 of each metric) are in the ``summary`` variable and
as attributes ``<metric>_<statistic>``; ``speedup`` is total reference time / total
candidate time.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch
import xarray as xr
from numpy.typing import NDArray

from solvers._contract import as_batch

from .errors import InputError, ShapeError
from .training.losses import relative_h1_error

__all__ = ["METRICS", "STATISTICS", "compare", "energy_norm_error"]

METRICS = ("rel_l2", "rel_h1", "max_abs", "rel_energy")
STATISTICS = ("mean", "median", "p95")


def _run(solver: Any, inputs: Any, **extra: Any) -> tuple[NDArray[np.float64], Any, float]:
    """(solution as float64 array, SolveReport or None, wall seconds)."""
    t0 = time.perf_counter()
    if hasattr(solver, "solve_with_report"):
        out, report = solver.solve_with_report(inputs, **extra)
    else:
        out, report = solver.solve(inputs, **extra), None
    elapsed = time.perf_counter() - t0
    return np.asarray(getattr(out, "values", out), dtype=np.float64), report, elapsed


def _per_sample_time(report: Any, elapsed: float, n: int) -> NDArray[np.float64]:
    if report is not None and len(report.solve_time) == n:
        return np.asarray(report.solve_time, dtype=np.float64)
    return np.full(n, elapsed / n)


def energy_norm_error(a: NDArray[np.float64], reference: NDArray[np.float64],
                      candidate: NDArray[np.float64]) -> NDArray[np.float64]:
    """Relative error in the energy norm of ``-div(a grad u)`` on the node grid.

    Parameters
    ----------
    a, reference, candidate : (n_samples, n, n) arrays
        Nodal coefficient and the two solutions (zero on the boundary).

    Returns
    -------
    (n_samples,) array ``||e||_a / ||r||_a`` with ``||v||_a^2 = v^T K v``, ``K`` the P1
    stiffness matrix (scikit-fem, each grid square split into two triangles, coefficient
    interpolated); boundary nodes enter through ``K`` like any other node.
    """
    from solvers._darcy_fem import _diffusion, grid_fem

    n = a.shape[-1]
    fem = grid_fem(n, "P1")
    basis = fem.basis
    out = np.empty(len(a))
    for s in range(len(a)):
        k_mat = _diffusion.assemble(basis, a=basis.interpolate(a[s].ravel()[fem.grid_of_dof]))
        e = (candidate[s] - reference[s]).ravel()[fem.grid_of_dof]
        r = reference[s].ravel()[fem.grid_of_dof]
        den = float(r @ (k_mat @ r))
        out[s] = np.sqrt(max(float(e @ (k_mat @ e)), 0.0) / den) if den > 0 else np.nan
    return out


def _h1(ref: NDArray[np.float64], cand: NDArray[np.float64]) -> NDArray[np.float64]:
    if ref.ndim not in (2, 3) or ref.shape[-1] < 3:
        return np.full(len(ref), np.nan)
    r, c = torch.from_numpy(ref[..., None]), torch.from_numpy(cand[..., None])
    return relative_h1_error(c, r).numpy().astype(np.float64)


def compare(reference: Any, candidate: Any, inputs: Any, *,
            reference_solution: Any = None, warm_start: bool = False,
            keep_fields: bool = False) -> xr.Dataset:
    """Per-sample errors and timings of ``candidate`` against ``reference`` on ``inputs``.

    Parameters
    ----------
    reference, candidate
        Objects with ``solve(inputs)`` (and optionally ``solve_with_report``) following the
        solver contract, e.g. ``DarcyFDSolver()`` and ``Surrogate.load(run_dir)``.
    inputs : array or DataArray
        Burgers ``u0`` (n_samples, n) or Darcy ``a`` (n_samples, n, n), or one sample.
    reference_solution : array or DataArray, optional
        Known reference solutions (e.g. the dataset's ``u``); ``reference`` is then not run
        and ``reference_time`` is NaN (unless ``warm_start``).
    warm_start
        Darcy: also solve with ``reference`` from ``initial_guess=candidate solution`` and
        record ``warm_iterations``/``warm_time`` beside ``reference_iterations``/``reference_time``.
    keep_fields
        Also return ``input``, ``reference``, ``candidate`` fields (for plots).

    Returns
    -------
    xr.Dataset
        Variables on dim ``sample``: ``rel_l2``, ``rel_h1``, ``max_abs``, ``rel_energy``
        (Darcy; NaN for Burgers), ``reference_time``, ``candidate_time``, ``reference_iterations``,
        ``candidate_iterations`` (-1 when unknown); ``summary`` on (metric, statistic);
        attributes ``speedup``, ``<metric>_<statistic>``, ``problem``, ``reference``,
        ``candidate``.

    Raises
    ------
    ShapeError
        If the two solutions (or ``reference_solution``) differ in shape.
    """
    problem = _problem_of(reference, candidate, inputs)
    core = ("x",) if problem == "burgers" else ("x", "y")
    name = "u0" if problem == "burgers" else "a"
    batch = as_batch(inputs, name=name, core_dims=core)
    values = batch.values
    n_s = len(values)
    cand, cand_rep, cand_elapsed = _run(candidate, values)
    if reference_solution is None:
        ref, ref_rep, ref_elapsed = _run(reference, values)
        ref_time = _per_sample_time(ref_rep, ref_elapsed, n_s)
    else:
        ref = np.asarray(getattr(reference_solution, "values", reference_solution), dtype=np.float64)
        ref = ref[None] if batch.single and ref.ndim == values.ndim - 1 else ref
        ref_rep, ref_time = None, np.full(n_s, np.nan)
    if ref.shape != cand.shape or ref.shape[0] != n_s:
        msg = (f"`candidate` solutions must have the shape of the reference {ref.shape}; got "
               f"{cand.shape}. Both must solve the same problem on the same grid.")
        raise ShapeError(msg)
    diff = (cand - ref).reshape(n_s, -1)
    ref_norm = np.linalg.norm(ref.reshape(n_s, -1), axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel_l2 = np.linalg.norm(diff, axis=1) / ref_norm
    data: dict[str, Any] = {
        "rel_l2": rel_l2,
        "rel_h1": _h1(ref, cand),
        "max_abs": np.abs(diff).max(axis=1),
        "rel_energy": energy_norm_error(values, ref, cand) if problem == "darcy" else np.full(n_s, np.nan),
        "reference_time": ref_time,
        "candidate_time": _per_sample_time(cand_rep, cand_elapsed, n_s),
        "reference_iterations": _iterations(ref_rep, n_s),
        "candidate_iterations": _iterations(cand_rep, n_s),
    }
    if warm_start:
        if problem != "darcy" or not np.isfinite(cand).all():
            msg = "`warm_start` needs a Darcy problem and finite candidate solutions."
            raise InputError(msg)
        if reference_solution is not None:
            _, zero_rep, zero_elapsed = _run(reference, values)
            data["reference_time"] = _per_sample_time(zero_rep, zero_elapsed, n_s)
            data["reference_iterations"] = _iterations(zero_rep, n_s)
        _, warm_rep, warm_elapsed = _run(reference, values, initial_guess=cand)
        data["warm_iterations"] = _iterations(warm_rep, n_s)
        data["warm_time"] = _per_sample_time(warm_rep, warm_elapsed, n_s)
    coords: dict[str, Any] = {"sample": np.arange(n_s)}
    if batch.template is not None and "sample" in batch.template.coords and not batch.single:
        coords["sample"] = np.asarray(batch.template["sample"].values)
    ds = xr.Dataset({k: ("sample", v) for k, v in data.items()}, coords=coords)
    if keep_fields:
        dims = ("sample", *core)
        ds["input"] = (dims, values)
        ds["reference"] = (dims, ref)
        ds["candidate"] = (dims, cand)
    _summarise(ds, problem=problem, reference=reference, candidate=candidate)
    return ds


def _problem_of(reference: Any, candidate: Any, inputs: Any) -> str:
    """'burgers' or 'darcy' from the solvers (``problem``, Darcy ``linear_solver``, Burgers
    ``viscosity``), else from the input: dims with "y" or 3 axes -> Darcy."""
    for obj in (reference, candidate):
        p = getattr(obj, "problem", None)
        if p in ("burgers", "darcy"):
            return str(p)
        if hasattr(obj, "linear_solver"):
            return "darcy"
        if hasattr(obj, "viscosity"):
            return "burgers"
    dims = getattr(inputs, "dims", None)
    if dims is not None:
        return "darcy" if "y" in dims else "burgers"
    return "darcy" if np.ndim(inputs) == 3 else "burgers"


def _iterations(report: Any, n: int) -> NDArray[np.int64]:
    if report is not None and len(report.iterations) == n:
        return np.asarray(report.iterations, dtype=np.int64)
    return np.full(n, -1, dtype=np.int64)


def _label(obj: Any) -> str:
    return str(getattr(obj, "name", None) or type(obj).__name__)


def _summarise(ds: xr.Dataset, *, problem: str, reference: Any, candidate: Any) -> None:
    table = np.full((len(METRICS), len(STATISTICS)), np.nan)
    for i, m in enumerate(METRICS):
        v = ds[m].values
        v = v[np.isfinite(v)]
        if v.size:
            table[i] = [v.mean(), np.median(v), np.percentile(v, 95)]
        for j, s in enumerate(STATISTICS):
            ds.attrs[f"{m}_{s}"] = float(table[i, j])
    ds["summary"] = (("metric", "statistic"), table)
    ds.coords["metric"] = list(METRICS)
    ds.coords["statistic"] = list(STATISTICS)
    ref_t, cand_t = float(ds["reference_time"].sum()), float(ds["candidate_time"].sum())
    speedup = ref_t / cand_t if cand_t > 0 and np.isfinite(ref_t) else np.nan
    ds.attrs.update(problem=problem, reference=_label(reference), candidate=_label(candidate),
                    speedup=float(speedup), n_samples=int(ds.sizes["sample"]))
    if "warm_iterations" in ds:
        ds.attrs["warm_iteration_saving"] = float(
            1.0 - ds["warm_iterations"].sum() / max(int(ds["reference_iterations"].sum()), 1))
