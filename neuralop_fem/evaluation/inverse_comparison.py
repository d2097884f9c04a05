r"""Compare and combine answers to the Darcy inverse problem: surrogate, inversion, warm start.

:func:`compare_inverse` (what :func:`~neuralop_fem.evaluation.compare` does for an inverse
problem) gives every observation ``u_obs`` to three methods:

* ``surrogate``: the candidate alone (e.g. ``Surrogate.load(inverse_run)``), one forward pass;
* ``classical``: the reference inversion (:class:`solvers.DarcyInverseSolver`) from its default
  start;
* ``warm_started``: the same inversion started from the candidate's coefficient (interpolated
  to the observation grid), with the same stopping rule.

and reports per sample and method, against the true coefficient ``a``:

* ``rel_l2``: :math:`\|a_m - a\| / \|a\|` on the observation grid (the candidate's coarse
  output interpolated bilinearly);
* ``rel_l2_coarse``: the same on the coarse grid, both sides average-pooled like the
  training targets (:func:`solvers.darcy_inverse.pool_coefficient`; a coarse candidate output
  is used as it is);
* ``misclassified``: the fraction of nodes whose phase (``a > threshold``) is wrong;
* ``misfit``: :math:`\|F(a_m) - u_{obs}\| / \|u_{obs}\|` over the interior nodes, ``F`` the
  inversion's forward model (the candidate's misfit costs one forward solve, not counted);
* ``pde_solves`` and ``equivalent_solves`` (forward + adjoint solves of the inversion, the
  latter weighted to observation-grid solves), ``iterations`` and ``time`` (seconds per sample;
  the warm start includes the candidate's inference).

A candidate's coefficient that is <= 0 somewhere (a briefly trained model) is scored as it
is (its misfit is NaN: the forward model needs ``a > 0``) and raised to a floor by
:func:`solvers.darcy_inverse.admissible_start` before it starts the inversion. The saving of
the warm start (attributes ``solve_ratio``, ``time_ratio``) is computed only over the samples
where both inversions ended by the same stopping rule (the discrepancy principle or
``misfit_tol``); ``comparable_samples`` counts them and ``<approach>_at_cap`` counts the
samples that stopped at the iteration cap instead.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr
from numpy.typing import ArrayLike, NDArray

from solvers.contract import SolverInput, SupportsSolve, as_batch, ordered_values
from solvers.darcy import DarcyFDSolver
from solvers.darcy_inverse import (
    admissible_start,
    check_noise_levels,
    coefficient_errors,
    pool_coefficient,
)
from solvers.grf import threshold as threshold_phases

from ..config_base import positive_float
from ..errors import InputError, ShapeError
from ..metrics import relative_l2
from ..surrogate.resample import resample_nodes

if TYPE_CHECKING:  # pragma: no cover
    from solvers.darcy_inverse import DarcyInverseSolver, InverseSolveReport

__all__ = ["INVERSE_APPROACHES", "INVERSE_METRICS", "TARGET_STOPS", "compare_inverse"]

#: The three answers compared, in order.
INVERSE_APPROACHES = ("surrogate", "classical", "warm_started")
#: Stop reasons of an inversion that ended by its stopping rule (not a cap, a stall or a failure).
TARGET_STOPS = ("discrepancy", "misfit_tol")
#: Per-sample metrics of each method.
INVERSE_METRICS = ("rel_l2", "rel_l2_coarse", "misclassified", "misfit", "pde_solves",
                   "equivalent_solves", "iterations", "time")

Array = NDArray[np.float64]


def _truth(truth: SolverInput | None, shape: tuple[int, ...], single: bool) -> Array:
    if truth is None:
        msg = ("`reference_solution` (the true coefficient on the observation grid) must be "
               "given to compare answers to an inverse problem; got None.")
        raise InputError(msg)
    a = ordered_values(truth, core_dims=("x", "y"),  # DataArray: by name
                       name="reference_solution").astype(np.float64)
    if single and a.ndim == len(shape) - 1:
        a = a[None]
    if a.shape != shape:
        msg = (f"`reference_solution` must have the shape of the observations {shape}; "
               f"got {a.shape}.")
        raise ShapeError(msg)
    if not np.isfinite(a).all() or (a <= 0).any():
        msg = "`reference_solution` must be a finite coefficient > 0 everywhere."
        raise InputError(msg)
    return a


def _candidate(candidate: SupportsSolve, u: Array) -> tuple[Array, Array, float]:
    """(output as returned, output on the observation grid, seconds per sample)."""
    n = u.shape[-1]
    t0 = time.perf_counter()
    if hasattr(candidate, "output_resolution") and getattr(candidate, "resolution", n) != n:
        out = candidate.solve(u, resample=True)  # another model grid: through its own resampling
    else:
        out = candidate.solve(u)
    seconds = (time.perf_counter() - t0) / len(u)
    out = ordered_values(out, core_dims=("x", "y"),  # a DataArray by dim name
                         name="candidate.solve(u)").astype(np.float64)
    if out.ndim != 3 or out.shape[0] != len(u) or out.shape[1] != out.shape[2]:
        msg = (f"`candidate` must return a coefficient of shape (n_samples, m, m); got "
               f"{out.shape}.")
        raise ShapeError(msg)
    if not np.isfinite(out).all():
        msg = "`candidate` returned a coefficient that is not finite everywhere."
        raise InputError(msg)
    fine = out if out.shape[-1] == n else resample_nodes(out, n, order=1)
    return out, fine, seconds


def _pool_factor(n: int, candidate_grid: int, coarse: int | None) -> int | None:
    m = coarse if coarse is not None else (candidate_grid if candidate_grid < n else None)
    if m is None:
        return 4 if (n - 1) % 4 == 0 else None
    if m < 2 or (n - 1) % (m - 1):
        msg = (f"`coarse_resolution` must give a pooling of the observation grid: (n - 1) % "
               f"(m - 1) == 0 for n = {n}; got m = {m}.")
        raise InputError(msg)
    return (n - 1) // (m - 1)


def _errors(estimate: Array, truth: Array, factor: int | None, threshold: float,
            coarse_estimate: Array | None = None) -> dict[str, Array]:
    """``rel_l2`` (and ``rel_l2_coarse``) by :func:`~neuralop_fem.metrics.relative_l2`, the
    function that scores the fair verdict's ladder: an estimate equal to a rung's gets the
    rung's error to the last bit, not one that a different summation moved by round-off."""
    pooled = coefficient_errors(estimate, truth, pool=1, threshold=threshold)  # phases only
    out = {"rel_l2": relative_l2(estimate, truth), "rel_l2_coarse": np.full(len(truth), np.nan),
           "misclassified": pooled["misclassified"]}
    if factor is not None:
        t = pool_coefficient(truth, factor=factor)
        coarse = pool_coefficient(estimate, factor=factor) if coarse_estimate is None else (
            coarse_estimate)
        out["rel_l2_coarse"] = relative_l2(coarse, t)
    return out


def _misfit(solver: DarcyInverseSolver, a: Array, u: Array) -> Array:
    """Relative data misfit of coefficients ``a`` through the inversion's forward model."""

    forward = DarcyFDSolver(forcing=solver.forcing, averaging=solver.averaging,
                            linear_solver=solver.linear_solver)
    usable = (a > 0).all(axis=(1, 2)) & np.isfinite(a).all(axis=(1, 2))
    out = np.full(len(u), np.nan)
    if not usable.any():
        return out
    pred = forward.solve(a[usable])
    inner = (slice(None), slice(1, -1), slice(1, -1))
    out[usable] = relative_l2(pred[inner], u[usable][inner])
    return out


def _run_inversion(solver: DarcyInverseSolver, u: Array, levels: Array,
                   guess: Array | None) -> tuple[Array, InverseSolveReport]:
    out, report = solver.solve_with_report(u, initial_guess=guess, noise_level=levels)
    return np.asarray(getattr(out, "values", out), dtype=np.float64), report


def _noise_levels(noise_level: ArrayLike | None, candidate: SupportsSolve,
                  solver: DarcyInverseSolver, u: Array) -> Array:
    if noise_level is not None:  # a number, or one per sample: the inversion's own check
        levels = check_noise_levels(noise_level, len(u), default=0.0)
    elif hasattr(candidate, "relative_noise_level"):
        levels = np.asarray(candidate.relative_noise_level(u), dtype=np.float64)
    else:
        levels = np.full(len(u), float(getattr(solver, "noise_level", 0.0)))
    if not (np.isfinite(levels).all() and (levels >= 0).all()):
        msg = f"`noise_level` must be finite numbers >= 0; got {levels}."
        raise InputError(msg)
    return levels


def _guess(fine: Array, solver: DarcyInverseSolver) -> Array:
    """The candidate's coefficient as a start (:func:`admissible_start`: > 0, inside the
    inversion's bounds when it has any)."""
    return admissible_start(fine, bounds=getattr(solver, "bounds", None))


def _phases(warm_phases: Any, threshold: float | None) -> tuple[tuple[float, float] | None,
                                                                 float]:
    """Validated ``(low, high)`` phase values of a snapped warm start (or None) and the
    threshold (None: their midpoint, or 7.5 without phases)."""
    if warm_phases is None:
        return None, 7.5 if threshold is None else positive_float(threshold, "threshold")
    ok = isinstance(warm_phases, tuple | list) and len(warm_phases) == 2 and all(
        not isinstance(v, bool) and isinstance(v, int | float) and np.isfinite(v)
        for v in warm_phases)
    if not ok or not 0 < warm_phases[0] < warm_phases[1]:
        msg = (f"`warm_phases` must be None or (low, high) coefficient values with "
               f"0 < low < high; got {warm_phases!r}.")
        raise InputError(msg)
    low, high = float(warm_phases[0]), float(warm_phases[1])
    threshold = 0.5 * (low + high) if threshold is None else positive_float(threshold,
                                                                             "threshold")
    if not low < threshold < high:
        msg = (f"`threshold` must lie between the `warm_phases` {(low, high)} to snap at it; "
               f"got {threshold!r}.")
        raise InputError(msg)
    return (low, high), threshold


def compare_inverse(reference: DarcyInverseSolver, candidate: SupportsSolve, inputs: SolverInput,
                    *, truth: SolverInput | None, noise_level: ArrayLike | None = None,
                    warm_start: bool = True, warm_phases: tuple[float, float] | None = None,
                    coarse_resolution: int | None = None, threshold: float | None = None,
                    keep_fields: bool = False) -> xr.Dataset:
    """Surrogate alone, classical inversion and warm-started inversion against the truth.

    Parameters
    ----------
    reference
        The classical inversion, e.g. ``DarcyInverseSolver()`` (``solve_with_report(u, *,
        initial_guess, noise_level)``).
    candidate
        An inverse surrogate (``Surrogate.load(run)``) or any object whose ``solve(u)`` returns
        a coefficient (on the observation grid or a coarse node grid).
    inputs : (n_samples, n, n) array or DataArray
        Observed solutions ``u_obs`` (noisy as they come).
    truth : (n_samples, n, n) array or DataArray
        The true coefficient on the observation grid.
    noise_level : float or (n_samples,) array, optional
        Relative noise level of each observation (the inversion's discrepancy principle). None:
        the candidate's (a surrogate converts its run's training noise), else the inversion's.
    warm_start
        Also run the inversion from the candidate's answer.
    warm_phases : (low, high), optional
        Two-phase coefficients (the benchmark's are ``(3.0, 12.0)``): start the warm-started
        inversion from the candidate's answer snapped to ``high`` where it exceeds
        ``threshold`` and ``low`` elsewhere, which hands the inversion sharp interfaces
        (docs/inverse_problem.md measures it). None: start from the answer as it is.
    coarse_resolution : int, optional
        The coarse grid of ``rel_l2_coarse``; None: the candidate's output grid when coarser
        than the observations, else pooling by 4 (141 -> 36, 85 -> 22).
    threshold : float, optional
        Phase threshold of ``misclassified`` and of the snap. None: the midpoint of
        ``warm_phases``, or 7.5 (between the benchmark's 3 and 12) without them.
    keep_fields
        Also return ``truth``, ``observation`` and each method's ``coefficient`` (for plots).

    Returns
    -------
    xr.Dataset
        :data:`INVERSE_METRICS` on dims ``(approach, sample)`` (not ``method``: that name is
        an argument of xarray's ``sel``); ``stop_reason`` of the
        inversions; ``noise_level``; summary attributes ``<approach>_<metric>_mean`` and
        ``<approach>_<metric>_median``, plus ``problem``, ``reference``, ``candidate``.
    """
    phases, threshold = _phases(warm_phases, threshold)
    if phases is not None and not warm_start:
        msg = (f"`warm_phases` snap the start of the warm-started inversion, so they cannot go "
               f"with warm_start=False (no warm start); got warm_phases={warm_phases!r}.")
        raise InputError(msg)
    batch = as_batch(inputs, name="u", core_dims=("x", "y"))
    u = batch.values
    a_true = _truth(truth, u.shape, batch.single)
    raw, fine, t_candidate = _candidate(candidate, u)
    factor = _pool_factor(u.shape[-1], raw.shape[-1], coarse_resolution)
    coarse_raw = raw if raw.shape[-1] < u.shape[-1] and factor is not None \
        and raw.shape[-1] == (u.shape[-1] - 1) // factor + 1 else None
    levels = _noise_levels(noise_level, candidate, reference, u)
    n_s = len(u)
    rows: dict[str, dict[str, Array]] = {
        "surrogate": {**_errors(fine, a_true, factor, threshold, coarse_raw),
                      "misfit": _misfit(reference, fine, u), "pde_solves": np.zeros(n_s),
                      "equivalent_solves": np.zeros(n_s), "iterations": np.zeros(n_s),
                      "time": np.full(n_s, t_candidate)},
    }
    fields = {"surrogate": fine}
    stops = {}
    start = fine if phases is None else threshold_phases(fine - threshold, low=phases[0],
                                                         high=phases[1])
    runs = [("classical", None)] + ([("warm_started", _guess(start, reference))] if warm_start
                                    else [])
    for method, guess in runs:
        a_m, rep = _run_inversion(reference, u, levels, guess)
        extra = t_candidate if guess is not None else 0.0
        rows[method] = {**_errors(a_m, a_true, factor, threshold), "misfit": rep.residual,
                        "pde_solves": rep.pde_solves, "equivalent_solves": rep.equivalent_solves,
                        "iterations": rep.iterations, "time": rep.solve_time + extra}
        fields[method] = a_m
        stops[method] = np.asarray(rep.stop_reason, dtype=str)
    methods = [m for m in INVERSE_APPROACHES if m in rows]
    data: dict[str, Any] = {
        k: (("approach", "sample"), np.stack([np.asarray(rows[m][k], dtype=np.float64)
                                            for m in methods]))
        for k in INVERSE_METRICS
    }
    stop = np.stack([stops.get(m, np.full(n_s, "", dtype=object)).astype(object)
                     for m in methods]).astype(str)
    data["stop_reason"] = (("approach", "sample"), stop)
    data["noise_level"] = ("sample", levels)
    coords: dict[str, Any] = {"approach": methods, "sample": np.arange(n_s)}
    if batch.template is not None and "sample" in batch.template.coords and not batch.single:
        coords["sample"] = np.asarray(batch.template["sample"].values)
    ds = xr.Dataset(data, coords=coords)
    if keep_fields:
        ds["truth"] = (("sample", "x", "y"), a_true)
        ds["observation"] = (("sample", "x", "y"), u)
        ds["coefficient"] = (("approach", "sample", "x", "y"),
                             np.stack([fields[m] for m in methods]))
    _summarise(ds, reference, candidate)
    ds.attrs["warm_phases"] = "none" if phases is None else f"{phases[0]:g} / {phases[1]:g}"
    return ds


def _summarise(ds: xr.Dataset, reference: object, candidate: object) -> None:
    for m in ds["approach"].values:
        for k in INVERSE_METRICS:
            v = ds[k].sel(approach=m).values
            v = v[np.isfinite(v)]
            ds.attrs[f"{m}_{k}_mean"] = float(v.mean()) if v.size else float("nan")
            ds.attrs[f"{m}_{k}_median"] = float(np.median(v)) if v.size else float("nan")
    for m in ("classical", "warm_started"):
        if m in ds["approach"].values:
            stops = ds["stop_reason"].sel(approach=m).values
            ds.attrs[f"{m}_at_cap"] = int(np.count_nonzero(stops == "maxiter"))
            ds.attrs[f"{m}_failed"] = int(np.count_nonzero(stops == "failed"))
    if "warm_started" in ds["approach"].values:
        stop_c = ds["stop_reason"].sel(approach="classical").values
        stop_w = ds["stop_reason"].sel(approach="warm_started").values
        same = np.isin(stop_c, TARGET_STOPS) & (stop_c == stop_w)
        ds.attrs["comparable_samples"] = int(same.sum())
        solves = ds["equivalent_solves"].values[:, same]
        times = ds["time"].values[:, same]
        i_c, i_w = list(ds["approach"].values).index("classical"), list(
            ds["approach"].values).index("warm_started")
        ratio, t_ratio = float("nan"), float("nan")
        its = {"classical": float("nan"), "warm_started": float("nan")}
        if same.any():
            ratio = float(solves[i_c].sum() / max(float(solves[i_w].sum()), 1e-12))
            t_ratio = float(times[i_c].sum() / max(float(times[i_w].sum()), 1e-12))
            iterations = ds["iterations"].values[:, same]
            its = {"classical": float(iterations[i_c].mean()),
                   "warm_started": float(iterations[i_w].mean())}
        ds.attrs["solve_ratio"] = ratio
        ds.attrs["time_ratio"] = t_ratio
        for m, value in its.items():  # observation-grid iterations over the same samples
            ds.attrs[f"{m}_comparable_iterations"] = value
    ds.attrs.update(problem="darcy-inverse", n_samples=int(ds.sizes["sample"]),
                    reference=_name(reference),
                    candidate=_name(candidate))


def _name(obj: object) -> str:
    """A label for plots and tables: the object's ``name``, else its ``method``, else its class."""
    for attr in ("name", "method"):
        value = getattr(obj, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(obj).__name__
