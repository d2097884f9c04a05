"""Compare two solvers of the same problem: per-sample errors, timings, warm-start gains.

``compare(reference, candidate, inputs)`` works for any pair that follows the solver contract
(classical solver vs surrogate, solver vs solver, surrogate vs surrogate): both get the same
``inputs`` and their solutions are compared sample by sample. Metrics (per sample ``i``):

* ``rel_l2``: ``||c_i - r_i|| / ||r_i||`` on the grid (the papers' metric; reported as a mean);
* ``rel_h1``: relative H1-seminorm error with central-difference gradients (periodic in 1D,
  at the interior nodes in 2D; :func:`neuralop_fem.metrics.relative_h1`);
* ``max_abs``: ``max |c_i - r_i|``;
* ``rel_energy`` (Darcy): ``sqrt(e^T K e) / sqrt(r^T K r)`` with ``K`` the P1 stiffness
  matrix of ``int a grad u . grad v`` on the node-grid triangulation with the sample's
  coefficient (:func:`neuralop_fem.metrics.energy_norm_error`);
* ``reference_time``, ``candidate_time`` (seconds) and iterations from each side's
  ``SolveReport`` when it has ``solve_with_report``.

Summary statistics (mean, median, p95 of each metric) are in the ``summary`` variable and
as attributes ``<metric>_<statistic>``; ``speedup`` is total reference time / total
candidate time (NaN when the reference was not run, i.e. ``reference_solution`` was given).
That is one timing, noisy on a shared machine: :func:`repeated_timings` times both sides
``repeats`` times and gives the median speedup with its spread.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import xarray as xr
from numpy.typing import ArrayLike, NDArray

from solvers.contract import (
    Batch,
    Report,
    Solver,
    SolverInput,
    SupportsSolve,
    as_batch,
    check_finite,
    ordered_values,
)
from solvers.problems import Problem, get_problem, problem_of

from ..errors import InputError, ShapeError
from ..metrics import energy_norm_error, relative_h1, relative_l2
from .inverse_comparison import compare_inverse

__all__ = ["METRICS", "STATISTICS", "compare", "repeated_timings"]

METRICS = ("rel_l2", "rel_h1", "max_abs", "rel_energy")
STATISTICS = ("mean", "median", "p95")


def _run(solver: SupportsSolve, inputs: SolverInput,
         **extra: object) -> tuple[NDArray[np.float64], Report | None, float]:
    """(solution as float64 array, SolveReport or None, wall seconds)."""
    t0 = time.perf_counter()
    if hasattr(solver, "solve_with_report"):
        out, report = solver.solve_with_report(inputs, **extra)
    else:
        out, report = solver.solve(inputs, **extra), None
    elapsed = time.perf_counter() - t0
    return np.asarray(getattr(out, "values", out), dtype=np.float64), report, elapsed


def _per_sample_time(report: Report | None, elapsed: float, n: int) -> NDArray[np.float64]:
    if report is not None and len(report.solve_time) == n:
        return np.asarray(report.solve_time, dtype=np.float64)
    return np.full(n, elapsed / n)


def _check_solver(obj: object, name: str) -> None:
    """A :class:`~solvers.contract.Solver`, or at least an object with a ``solve`` method."""
    if not (isinstance(obj, Solver) or callable(getattr(obj, "solve", None))):
        msg = (f"`{name}` must follow the solver contract (a `solve` method, ideally also "
               f"`solve_with_report`; e.g. DarcyFDSolver() or Surrogate.load(run_dir)); got "
               f"{type(obj).__name__}.")
        raise InputError(msg)


def _problem_of(reference: object, candidate: object, problem: str | Problem | None) -> Problem:
    """The problem both sides declare (``problem`` attribute), else the ``problem`` argument;
    never guessed from the inputs' shape."""
    declared = {name: problem_of(obj) for name, obj in (("reference", reference),
                                                         ("candidate", candidate))}
    if problem is not None:
        declared["problem"] = get_problem(problem)
    known = {k: v for k, v in declared.items() if v is not None}
    if len({p.name for p in known.values()}) > 1:
        found = ", ".join(f"{k} for {v.name!r}" for k, v in known.items())
        msg = (f"`reference` and `candidate` must solve the same problem (and `problem` name "
               f"it); got {found} ({type(reference).__name__}, {type(candidate).__name__}).")
        raise InputError(msg)
    if not known:
        msg = ("`problem` must be given when neither `reference` nor `candidate` declares one "
               f"(a `problem` attribute); got neither ({type(reference).__name__}, "
               f"{type(candidate).__name__}). Pass e.g. problem='darcy'.")
        raise InputError(msg)
    return next(iter(known.values()))


def _reference_values(reference_solution: SolverInput, batch: Batch,
                      problem: Problem) -> NDArray[np.float64]:
    ref = ordered_values(reference_solution, core_dims=problem.dims,  # DataArray: by name
                         name="reference_solution")
    if ref.dtype.kind not in "fiu":
        msg = f"`reference_solution` must be a real array; got dtype {ref.dtype}."
        raise InputError(msg)
    ref = ref.astype(np.float64)
    if batch.single and ref.ndim == batch.values.ndim - 1:
        ref = ref[None]
    if ref.shape != batch.values.shape:
        msg = (f"`reference_solution` must have the shape of the inputs {batch.values.shape} "
               f"({problem.name}: {problem.output_name} on the grid of {problem.input_name}); "
               f"got {ref.shape}.")
        raise ShapeError(msg)
    check_finite(ref, name="reference_solution")
    return ref


def _solutions(reference: SupportsSolve, candidate: SupportsSolve, values: NDArray[np.float64],
               problem: Problem, reference_solution: NDArray[np.float64] | None) -> dict[str, Any]:
    n_s = len(values)
    _run(candidate, values[:1])  # untimed: first-call set-up is not a per-sample cost
    cand, cand_rep, cand_elapsed = _run(candidate, values)
    if reference_solution is None:
        _run(reference, values[:1])
        ref, ref_rep, ref_elapsed = _run(reference, values)
        ref_time = _per_sample_time(ref_rep, ref_elapsed, n_s)
    else:
        ref, ref_rep, ref_time = reference_solution, None, np.full(n_s, np.nan)
    for name, sol in (("reference", ref), ("candidate", cand)):
        if sol.shape != values.shape:
            msg = (f"`{name}` must return {problem.output_name} on the input grid "
                   f"{values.shape} for {problem.name}; got shape {sol.shape}. Both sides must "
                   "solve the same problem on the same grid.")
            raise ShapeError(msg)
    if not np.isfinite(cand).all():
        bad = int(np.count_nonzero(~np.isfinite(cand).reshape(n_s, -1).any(axis=1)))
        msg = (f"`candidate` returned non-finite values for {bad} of {n_s} samples; refusing to "
               "compare them (inputs far outside the training distribution?).")
        raise InputError(msg)
    return {"ref": ref, "cand": cand, "ref_rep": ref_rep, "cand_rep": cand_rep,
            "ref_time": ref_time, "cand_time": _per_sample_time(cand_rep, cand_elapsed, n_s)}


def compare(reference: SupportsSolve, candidate: SupportsSolve, inputs: SolverInput, *,
            reference_solution: SolverInput | None = None, warm_start: bool = False,
            keep_fields: bool = False, noise_level: ArrayLike | None = None,
            warm_phases: tuple[float, float] | None = None,
            problem: str | Problem | None = None) -> xr.Dataset:
    """Per-sample errors and timings of ``candidate`` against ``reference`` on ``inputs``.

    Each side first solves the first sample untimed, so that neither time includes first-call
    set-up (imports, allocations, plans); then all of ``inputs`` in one timed call.

    Parameters
    ----------
    reference, candidate
        Objects with ``solve(inputs)`` and ``solve_with_report`` following the solver contract
        (:class:`solvers.Solver`; ``solve`` alone is enough, timings then come from the wall
        clock), e.g. ``DarcyFDSolver()`` and ``Surrogate.load(run_dir)``.
        When both declare a ``problem`` it must be the same.
    inputs : array or DataArray
        Burgers ``u0`` (n_samples, n) or Darcy ``a`` (n_samples, n, n), or one sample.
    reference_solution : array or DataArray, optional
        Known reference solutions (e.g. the dataset's ``u``), finite, of the inputs' shape;
        ``reference`` is then not run and ``reference_time`` and ``speedup`` are NaN (unless
        ``warm_start``, which runs it).
    warm_start
        Darcy: also solve with ``reference`` from ``initial_guess=candidate solution`` and
        record ``warm_iterations``/``warm_time`` beside ``reference_iterations``/``reference_time``.
    keep_fields
        Also return ``input``, ``reference``, ``candidate`` fields (for plots).
    noise_level : float or (n_samples,) array, optional
        Inverse problems only: the observations' relative noise level for the inversion's
        discrepancy principle; default: the candidate's training noise converted to the
        inputs (``Surrogate.relative_noise_level``). An error for forward problems.
    warm_phases : (low, high), optional
        Inverse problems only: start the warm-started inversion from the candidate's
        coefficient snapped to these two phase values (at 7.5 for the benchmark's
        ``(3.0, 12.0)``: the midpoint ``(low + high) / 2``). An error for forward problems.
    problem : str or Problem, optional
        The problem solved (:func:`solvers.problems.get_problem`); needed only when neither
        side declares one in a ``problem`` attribute (the bundled solvers and surrogates do),
        and then never guessed from the inputs' shape.

    For an inverse problem (both sides declare ``problem = "darcy-inverse"``, e.g.
    ``DarcyInverseSolver()`` and an inverse surrogate) the comparison is against the truth:
    ``reference_solution`` is then the true coefficient, and the result is that of
    :func:`~neuralop_fem.evaluation.inverse_comparison.compare_inverse` (surrogate alone,
    classical inversion, inversion warm-started from the surrogate when ``warm_start``).

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
    InputError
        A side that is not a solver, sides of different problems, no problem known,
        non-finite candidate solutions or a non-finite ``reference_solution``.
    ShapeError
        If a solution (or ``reference_solution``) is not on the inputs' grid.
    """
    _check_solver(reference, "reference")
    _check_solver(candidate, "candidate")
    problem = _problem_of(reference, candidate, problem)
    if problem.inverse:

        return compare_inverse(reference, candidate, inputs, truth=reference_solution,
                               warm_start=warm_start, keep_fields=keep_fields,
                               noise_level=noise_level, warm_phases=warm_phases)
    for name, value in (("noise_level", noise_level), ("warm_phases", warm_phases)):
        if value is not None:
            msg = (f"`{name}` applies to inverse problems only; got {value!r} for the "
                   f"{problem.name} problem.")
            raise InputError(msg)
    batch = as_batch(inputs, name=problem.input_name, core_dims=problem.dims)
    values = batch.values
    known = None if reference_solution is None else _reference_values(reference_solution, batch,
                                                                        problem)
    sol = _solutions(reference, candidate, values, problem, known)
    ref, cand = sol["ref"], sol["cand"]
    n_s = len(values)
    diff = (cand - ref).reshape(n_s, -1)
    data: dict[str, Any] = {
        "rel_l2": relative_l2(cand, ref),
        "rel_h1": relative_h1(cand, ref, grid=problem.grid),
        "max_abs": np.abs(diff).max(axis=1),
        "rel_energy": (energy_norm_error(values, cand, ref) if problem.can("energy_norm")
                       else np.full(n_s, np.nan)),
        "reference_time": sol["ref_time"],
        "candidate_time": sol["cand_time"],
        "reference_iterations": _iterations(sol["ref_rep"], n_s),
        "candidate_iterations": _iterations(sol["cand_rep"], n_s),
    }
    if warm_start:
        data.update(_warm_start(reference, values, cand, problem,
                                rerun_zero=reference_solution is not None))
    coords: dict[str, Any] = {"sample": np.arange(n_s)}
    if batch.template is not None and "sample" in batch.template.coords and not batch.single:
        coords["sample"] = np.asarray(batch.template["sample"].values)
    ds = xr.Dataset({k: ("sample", v) for k, v in data.items()}, coords=coords)
    if keep_fields:
        dims = ("sample", *problem.dims)
        ds["input"] = (dims, values)
        ds["reference"] = (dims, ref)
        ds["candidate"] = (dims, cand)
    _summarise(ds, problem=problem.name, reference=reference, candidate=candidate)
    return ds


def _warm_start(reference: SupportsSolve, values: NDArray[np.float64], cand: NDArray[np.float64],
                problem: Problem, *, rerun_zero: bool) -> dict[str, NDArray[Any]]:
    if not problem.can("warm_start"):
        msg = (f"`warm_start` needs a problem solved by an iterative linear solve (darcy); got "
               f"{problem.name}.")
        raise InputError(msg)
    n_s = len(values)
    out: dict[str, NDArray[Any]] = {}
    if rerun_zero:
        _, zero_rep, zero_elapsed = _run(reference, values)
        out["reference_time"] = _per_sample_time(zero_rep, zero_elapsed, n_s)
        out["reference_iterations"] = _iterations(zero_rep, n_s)
    _, warm_rep, warm_elapsed = _run(reference, values, initial_guess=cand)
    out["warm_iterations"] = _iterations(warm_rep, n_s)
    out["warm_time"] = _per_sample_time(warm_rep, warm_elapsed, n_s)
    return out


def _iterations(report: Report | None, n: int) -> NDArray[np.int64]:
    if report is not None and len(report.iterations) == n:
        return np.asarray(report.iterations, dtype=np.int64)
    return np.full(n, -1, dtype=np.int64)


def _label(obj: object) -> str:
    return str(getattr(obj, "name", None) or type(obj).__name__)


def _summarise(ds: xr.Dataset, *, problem: str, reference: object, candidate: object) -> None:
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



def repeated_timings(reference: SupportsSolve, candidate: SupportsSolve, inputs: SolverInput,
                     *, repeats: int = 5,
                     problem: str | Problem | None = None) -> xr.Dataset:
    """Time both sides ``repeats`` times on ``inputs``: the median speedup and its spread.

    Each repeat solves all of ``inputs`` with ``reference`` and then with ``candidate`` (one
    after the other, so a slow spell of a shared machine hits both sides of a repeat) and
    takes the ratio of their total times, measured as in :func:`compare` (the reports'
    per-sample times when they have them, else the wall clock).

    Parameters
    ----------
    reference, candidate
        Solvers of the same problem (see :func:`compare`).
    inputs : array or DataArray
        As for :func:`compare`.
    repeats
        Number of timed repeats, an integer >= 1 (run the sides once before, e.g. through
        :func:`compare`, so that no repeat pays for first-call set-up).
    problem : str or Problem, optional
        As for :func:`compare`.

    Returns
    -------
    xr.Dataset
        On dim ``repeat``: ``reference_time`` and ``candidate_time`` (seconds per sample) and
        ``speedup``; attributes ``speedup_median``, ``speedup_min``, ``speedup_max``,
        ``repeats``, ``n_samples``.

    Raises
    ------
    InputError
        For ``repeats`` that is not an integer >= 1, or as :func:`compare`.
    """
    if isinstance(repeats, bool) or not isinstance(repeats, int | np.integer) or repeats < 1:
        msg = f"`repeats` must be an integer >= 1; got {repeats!r}."
        raise InputError(msg)
    _check_solver(reference, "reference")
    _check_solver(candidate, "candidate")
    problem = _problem_of(reference, candidate, problem)
    values = as_batch(inputs, name=problem.input_name, core_dims=problem.dims).values
    n_s = len(values)
    times = np.empty((int(repeats), 2))
    for i in range(int(repeats)):
        for j, side in enumerate((reference, candidate)):
            _, report, elapsed = _run(side, values)
            times[i, j] = float(_per_sample_time(report, elapsed, n_s).mean())
    with np.errstate(divide="ignore", invalid="ignore"):
        speedup = np.where(times[:, 1] > 0, times[:, 0] / times[:, 1], np.nan)
    ds = xr.Dataset({"reference_time": ("repeat", times[:, 0]),
                     "candidate_time": ("repeat", times[:, 1]),
                     "speedup": ("repeat", speedup)},
                    coords={"repeat": np.arange(int(repeats))})
    finite = speedup[np.isfinite(speedup)]
    stats = (np.median(finite), finite.min(), finite.max()) if finite.size else (np.nan,) * 3
    ds.attrs.update(speedup_median=float(stats[0]), speedup_min=float(stats[1]),
                    speedup_max=float(stats[2]), repeats=int(repeats), n_samples=n_s)
    return ds
