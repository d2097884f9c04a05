"""Compare a training run's surrogate with the classical solver on a dataset file."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from solvers.checks import check_optional_int
from solvers.ladder import check_ladder, usable_cores
from solvers.problems import PROBLEMS, get_problem

from ..data import load_dataset
from ..data.generation.executors import _unguarded_call_line
from ..data.grids import dataset_grid, grid_stride
from ..data.io import reading
from ..data.provenance import generation_settings
from ..errors import InputError
from ..files import output_dir_problem
from ..metrics import relative_l2
from ..runs import resolve_run_dir
from ..surrogate import Surrogate
from ..surrogate.observations import sample_fields
from .break_even import surrogate_cost
from .comparison import compare, repeated_timings
from .fair import (
    add_verdict,
    machine_load,
    measure_ladder,
    time_surrogate,
    torch_threads,
    where_label,
)
from .fair_device import add_device_verdict, twin_device, twin_rungs
from .report import write_report
from .run_evaluation import parse_indices
from .training_overlap import seen_in_training, warn_if_seen

if TYPE_CHECKING:  # pragma: no cover
    import torch
    import xarray as xr

    from solvers.contract import Solver

__all__ = ["compare_run", "reference_solver", "solver_names"]


def solver_names() -> list[str]:
    """Every ``PROBLEM-SOLVER`` name :func:`reference_solver` accepts, e.g. ``"darcy-fem"``."""
    return [f"{p.name}-{short}" for p in PROBLEMS.values() for short in p.solvers]


def reference_solver(name: str, surrogate: Surrogate, *,
                     linear_solver: str | None = None, maxiter: int | None = None) -> Solver:
    """The reference solver named ``name`` (``"PROBLEM-SOLVER"``, or "auto": the training
    data's solver, rebuilt from the run's provenance), with ``linear_solver`` (problems whose
    entry lists :attr:`~solvers.problems.Problem.linear_solvers`) and ``maxiter`` (the
    inversion's L-BFGS-B iterations; inverse problems) when given."""
    problem = get_problem(surrogate.problem)
    if name == "auto":
        solver = surrogate.reference_solver()
    else:
        valid = solver_names()
        if name not in valid:
            msg = f"`solver` must be one of 'auto', {', '.join(map(repr, valid))}; got {name!r}."
            raise InputError(msg)
        prefix = f"{problem.name}-"
        short = name.removeprefix(prefix)
        if not name.startswith(prefix) or short not in problem.solvers:
            msg = f"`solver` must solve {problem.name} like the surrogate; got {name!r}."
            raise InputError(msg)
        solver = problem.make_solver(short)
    import dataclasses

    if linear_solver is not None:
        if linear_solver not in problem.linear_solvers:
            valid = ", ".join(map(repr, problem.linear_solvers)) or "none"
            msg = (f"`linear_solver` (--linear-solver) must be one of the linear solvers of "
                   f"{problem.name} ({valid}); got {linear_solver!r}.")
            raise InputError(msg)
        solver = dataclasses.replace(solver, linear_solver=linear_solver)
    if maxiter is not None:
        if not problem.inverse:
            msg = (f"`maxiter` (--maxiter) applies to inverse runs (the inversion's iteration "
                   f"cap); got {maxiter!r} for a {problem.name} run.")
            raise InputError(msg)
        solver = dataclasses.replace(solver, maxiter=maxiter)
    return solver


def _phase_values(ds: Any, data: str | os.PathLike[str]) -> tuple[float, float]:
    """The two phase values a Darcy dataset records, else an InputError naming the file."""

    record = generation_settings(ds.attrs, source=os.fspath(data)) or {}
    settings = record.get("settings", {})
    low, high = settings.get("contrast_low"), settings.get("contrast_high")
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (low, high)):
        msg = (f"`snap_warm_start` (--snap-warm-start) needs the two phase values of the "
               f"coefficient; {os.fspath(data)} does not record them (contrast_low / "
               f"contrast_high of `neuralop-fem generate darcy`).")
        raise InputError(msg)
    return float(low), float(high)


def compare_run(run_dir: str | os.PathLike[str], *, data: str | os.PathLike[str],
                out: str | os.PathLike[str], indices: str | Iterable[int] = "test",
                solver: str = "auto", linear_solver: str | None = None,
                maxiter: int | None = None, max_samples: int | None = 64, warm_start: bool = True,
                snap_warm_start: bool = False,
                device: str | torch.device | None = None, ladder: object = True,
                timing_repeats: int = 1, workers: int | None = None,
                ladder_budget: float | None = 2.0, overwrite: bool = False,
                solver_device: str | None = None) -> dict[str, Any]:
    """Load the run, select samples of ``data``, compare, and write the report into ``out``.

    The dataset's inputs are strided to the model grid when the file is finer (as in
    training); the stored solutions are not used, both sides solve. For an inverse run the
    observations are the dataset's solutions with the run's training noise (the same fixed
    draws as its evaluation) and the true coefficient is the dataset's, on the same grid; the
    reference is the classical inversion, also warm-started from the surrogate; with
    ``snap_warm_start`` from the surrogate's coefficient snapped to the two phase values the
    dataset records (``contrast_low`` / ``contrast_high`` of ``generate``); ``maxiter`` sets
    the inversion's iteration cap (inverse runs only; default the solver's).

    Forward and inverse runs get the fair verdict (:mod:`~neuralop_fem.evaluation.fair`): with
    ``ladder=True`` (default) the problem's own ladder (:meth:`solvers.problems.Problem.ladder`,
    with the reference solver's physics; rungs not reachable from the file's grid are left out),
    a list of solvers or :class:`solvers.ladder.Rung` s for a user's ladder, ``False`` for none.
    The rungs solve the file's inputs strided to their grids, the surrogate the model-grid
    inputs; both are measured against the file's stored solutions on the model grid and timed
    per sample at the full batch and one sample per call, on one thread, and on all cores
    (``workers`` solver processes, default ``os.cpu_count()``; 1: skip; the surrogate with
    as many torch threads). ``timing_repeats > 1``
    times both sides that many more times and reports the median speed-up (the number every
    part of the report then prints). Inverse runs: the rungs (inversions on coarser grids, with
    iteration caps and looser stopping) invert the same noisy observations strided from the
    model grid, with the same per-sample noise levels, and every answer (the surrogate's too)
    is scored by the comparison's ``rel_l2``: the coefficient error against the dataset's
    true coefficient on the observation (model) grid, coarse answers interpolated bilinearly.
    ``out`` must be a new or empty directory unless ``overwrite`` (as ``--overwrite``): an
    earlier report is never replaced silently. ``ladder_budget`` caps the ladder's one-thread
    climb at that many times the reference solves' total time, at least
    :data:`MIN_LADDER_BUDGET_S` (default 2; None: no cap); a surrogate more accurate than every
    rung measured within the cap gets a lower bound on its speed-up (status "at least the
    finest rung measured"). On a CPU the surrogate runs on one
    torch thread for the report's own timings, like the solver's one process (the fair
    verdict adds all cores). ``solver_device``: where the solver's torch twins
    (:mod:`~neuralop_fem.evaluation.fair_device`) are timed for the like-for-like verdict of
    a forward run (default: the surrogate's device when it is a GPU, else none; ``"cpu"``:
    on this CPU; ``"none"``: nowhere).

    Returns
    -------
    dict from :func:`~neuralop_fem.evaluation.report.write_report` plus ``"dataset"``
    (the comparison).
    """

    if snap_warm_start and not warm_start:
        msg = ("`snap_warm_start` (--snap-warm-start) snaps the start of the warm-started "
               "inversion, so it cannot go with warm_start=False (no warm start); got both.")
        raise InputError(msg)
    run_dir = resolve_run_dir(run_dir)  # zoo:NAME -> the zoo entry's directory
    max_samples = check_optional_int(max_samples, name="max_samples", minimum=1)
    if ladder_budget is not None and not (isinstance(ladder_budget, (int, float))
                                          and ladder_budget > 0):
        msg = f"`ladder_budget` must be a positive factor or None; got {ladder_budget!r}."
        raise InputError(msg)
    target = Path(out)
    if not overwrite and target.is_dir() and any(target.iterdir()):
        msg = (f"`out` must be a new or empty directory (pass overwrite=True to replace an "
               f"earlier report's files); got {os.fspath(out)!r}, which is not empty.")
        raise InputError(msg)
    if target.exists() and not target.is_dir():
        msg = f"`out` must be a directory; got {os.fspath(out)!r}, which is a file."
        raise InputError(msg)
    unwritable = output_dir_problem(target)  # before the work, not a PermissionError after it
    if unwritable is not None:
        msg = f"`out` {unwritable}."
        raise InputError(msg)
    sur = Surrogate.load(run_dir, device=device)
    problem = get_problem(sur.problem)
    if snap_warm_start and not problem.inverse:
        msg = (f"`snap_warm_start` (--snap-warm-start) applies to inverse runs only; got a "
               f"{sur.problem} run ({os.fspath(run_dir)}).")
        raise InputError(msg)
    ds = load_dataset(data)
    if ds.attrs.get("problem") != problem.data_problem:
        msg = (f"`data` must be a {problem.data_problem} dataset like the run's training data; "
               f"got a {ds.attrs.get('problem')} dataset ({os.fspath(data)}).")
        raise InputError(msg)
    test = list(sur.record.test_indices)
    idx = parse_indices(indices, n_samples=int(ds.sizes["sample"]), test=test)
    if max_samples is not None:
        idx = idx[:max_samples]
    seen = seen_in_training(sur.record, ds, idx)
    n_file = int(ds.sizes["x"])
    grid = dataset_grid(ds.attrs, problem.data_problem, source=os.fspath(data))
    # Warm starts and the ladder work on node-grid systems; other grids compare plainly.
    on_nodes = grid == "nodes"
    stride = (problem.stride(n_file, sur.resolution) if on_nodes or problem.periodic
              else grid_stride(grid, n_file, sur.resolution))
    sel = {dim: slice(None, None, stride) for dim in problem.dims}
    reference = reference_solver(solver, sur, linear_solver=linear_solver, maxiter=maxiter)
    # One torch thread on a CPU, like the solver's one process: the report's times and the
    # verdict's one-thread times are the same measurement (all cores: the fair part).
    one_thread = 1 if str(sur.device).startswith("cpu") else None
    load, cpus = machine_load()  # other work on the CPU inflates every time: the report says so
    with torch_threads(one_thread):
        if problem.inverse:
            phases = _phase_values(ds, data) if snap_warm_start else None
            inputs, truth = sample_fields(sur, ds, idx)
            result = compare(reference, sur, inputs, reference_solution=truth,
                             warm_start=warm_start, keep_fields=True, warm_phases=phases)
            if ladder is not False:
                _fair_inverse(result, problem, reference, sur, inputs, ladder,
                              workers=(os.cpu_count() or 1) if workers is None else int(workers),
                              ladder_budget=ladder_budget, data=ds)
        else:
            with reading(ds, problem.input_name, f"samples {idx[0]}..{idx[-1]}"):
                inputs = ds[problem.input_name].isel(sample=idx).isel(sel).load()
            warm = warm_start and problem.can("warm_start") and on_nodes
            result = compare(reference, sur, inputs, warm_start=warm, keep_fields=True)
            if timing_repeats > 1:
                _repeat_timings(result, reference, sur, inputs, timing_repeats)
            if ladder is not False and (on_nodes or problem.periodic):
                _fair(result, ds, idx, sel, problem, reference, sur, inputs, ladder,
                      workers=(os.cpu_count() or 1) if workers is None else int(workers),
                      ladder_budget=ladder_budget,
                      twins=twin_device(sur.device, solver_device))
    seen_note = warn_if_seen(seen, int(idx.size))  # after the comparison: an error comes alone
    result.attrs.update(cpu_load_1min=load, cpu_count=cpus, seen_in_training=seen["train"],
                        seen_in_validation=seen["val"], seen_warning=seen_note or "")
    result.attrs.update(run_dir=os.fspath(Path(run_dir).resolve()), data=os.fspath(data),
                        model_resolution=sur.resolution, file_resolution=n_file,
                        validation_error=sur.validation_error, test_error=sur.test_error)
    notes = (f"Run `{os.fspath(run_dir)}` (validation rel. L2 {sur.validation_error:.3e}, test "
             f"{sur.test_error:.3e}); data `{os.fspath(data)}` strided {n_file} -> "
             f"{sur.resolution}; "
             f"samples {idx[0]}..{idx[-1]} ({len(idx)}). Times: wall seconds per sample on "
             f"{sur.device}{', 1 thread' if one_thread else ''} (surrogate) and one CPU process "
             "(solver).")
    title = f"{sur.problem}: surrogate vs {type(reference).__name__}"
    report = write_report(result, out, title=title, notes=notes)
    report["dataset"] = result
    return report


def _repeat_timings(result: xr.Dataset, reference: Solver, sur: Surrogate, inputs: Any,
                    repeats: int) -> None:
    """Median speed-up over ``repeats`` timings of both sides, stored as the ``speedup``."""

    speed = repeated_timings(reference, sur, inputs, repeats=int(repeats))
    result.attrs.update(speedup=speed.attrs["speedup_median"],
                        speedup_min=speed.attrs["speedup_min"],
                        speedup_max=speed.attrs["speedup_max"],
                        speedup_basis=f"median of {int(repeats)} timed repeats",
                        speedup_repeats=[float(v) for v in speed["speedup"].values],
                        reference_time_median=float(speed["reference_time"].median()),
                        candidate_time_median=float(speed["candidate_time"].median()))


#: The ladder's time budget is never below this (seconds): a climb of a few seconds costs the user
#: nothing, and fast solvers' rungs (milliseconds per sample, timed three ways) would otherwise
#: stop it after a rung or two and turn a measured verdict into a bound.
MIN_LADDER_BUDGET_S = 10.0


def _budget(result: xr.Dataset, factor: float | None) -> float | None:
    """The ladder's time budget: ``factor`` times the reference solves' total time, at least
    :data:`MIN_LADDER_BUDGET_S` (seconds; None without a factor or a finite reference time)."""
    if factor is None or "reference_time" not in result:
        return None
    total = float(np.nansum(result["reference_time"].values))
    return max(factor * total, MIN_LADDER_BUDGET_S) if total > 0 else None


def _fair(result: xr.Dataset, ds: xr.Dataset, idx: NDArray[np.int64], sel: dict[str, slice],
          problem: Any, reference: Solver, sur: Surrogate, inputs: Any, ladder: object, *,
          workers: int, ladder_budget: float | None, twins: str | None = None) -> None:
    """The ladder, its front and the surrogate's place on it, added to ``result``; with
    ``twins`` (a device) also the solver's torch twins' ladder on it and the like-for-like
    verdict (:mod:`.fair_device`)."""


    rungs = _rungs(ladder, problem, reference, int(ds.sizes["x"]))
    if not rungs:
        return
    with reading(ds, problem.output_name, f"samples {idx[0]}..{idx[-1]}"):
        truth = np.asarray(ds[problem.output_name].isel(sample=idx).isel(sel).values, float)
        fine = np.asarray(ds[problem.input_name].isel(sample=idx).values, float)
    values = np.asarray(inputs.values, float)
    timing, workers = _surrogate_timing(sur, values, workers)
    errors = relative_l2(np.asarray(result["candidate"].values), truth)
    ladder_result = measure_ladder(rungs, fine, truth, problem=problem, workers=workers,
                                   bracket=(float(errors.mean()), timing["time"]),
                                   budget_s=_budget(result, ladder_budget))
    add_verdict(result, ladder_result, errors, timing, where=where_label(sur.device, threads=1),
                cost=surrogate_cost(sur.record, ds))
    if twins is not None:
        on_device, missing = twin_rungs(rungs, twins)
        if on_device:
            twin_ladder = measure_ladder(on_device, fine, truth, problem=problem, workers=1,
                                         bracket=(float(errors.mean()), timing["time"]),
                                         budget_s=_budget(result, ladder_budget))
            add_device_verdict(result, twin_ladder, errors, timing, device=twins,
                               missing=missing)


def _surrogate_timing(sur: Surrogate, values: NDArray[np.float64],
                      workers: int) -> tuple[dict[str, Any], int]:
    """The surrogate's times per sample on one thread (batch and one per call) and, with more
    than one safe worker, on as many threads; and the worker count the ladder then uses."""

    timing = time_surrogate(sur, values, threads=1)
    # More processes than cores, or than samples, only share them: all cores at most.
    workers = _safe_workers(min(workers, len(values), usable_cores()))
    if workers > 1:
        every = time_surrogate(sur, values, threads=workers, batch_one=False)
        timing.update(time_all_cores=every["time"], threads_all_cores=every["threads"],
                      where_all_cores=where_label(sur.device, threads=every["threads"],
                                                  workers=workers))
    return timing, workers


def _rungs(ladder: object, problem: Any, reference: Solver, n: int) -> list[Any]:
    """The rungs to measure: the problem's own ladder (``ladder=True``; its physics from
    ``reference``, only the grids reachable from ``n`` points) or the user's, checked."""

    if ladder is True:
        return [r for r in problem.ladder(like=reference) if r.resolution in problem.reachable(n)]
    return check_ladder(ladder, problem)


def _unguarded_script() -> int | None:
    """The line of an unguarded top-level call in the running script (None: safe to spawn)."""

    main = sys.modules.get("__main__")
    return _unguarded_call_line(main) if main is not None else None


def _fair_inverse(result: xr.Dataset, problem: Any, reference: Solver, sur: Surrogate,
                  inputs: Any, ladder: object, *, workers: int,
                  ladder_budget: float | None, data: xr.Dataset) -> None:
    """The inverse problem's ladder and verdict, added to ``result``: the inversions of the
    comparison's observations, scored like the comparison's ``rel_l2`` (``data``: the
    dataset compared on, for the break-even's generation time)."""


    values = np.asarray(inputs.values, float)
    rungs = _rungs(ladder, problem, reference, values.shape[-1])
    if not rungs:
        return
    truth = np.asarray(result["truth"].values, float)
    errors = np.asarray(result["rel_l2"].sel(approach="surrogate").values, float)
    levels = np.asarray(result["noise_level"].values, float)
    timing, workers = _surrogate_timing(sur, values, workers)
    ladder_result = measure_ladder(rungs, values, truth, problem=problem, workers=workers,
                                   bracket=(float(errors.mean()), timing["time"]),
                                   noise_level=levels, budget_s=_budget(result, ladder_budget))
    add_verdict(result, ladder_result, errors, timing, where=where_label(sur.device, threads=1),
                solver="the classical inversion",
                truth="the dataset's true coefficient on the observation grid",
                cost=surrogate_cost(sur.record, data))


def _safe_workers(workers: int) -> int:
    """``workers``, or 1 (with a warning) when worker processes would re-run the script."""
    if workers > 1 and _unguarded_script() is not None:
        import logging

        logging.getLogger("neuralop_fem").warning(
            "the all-cores verdict needs worker processes, which import the calling script "
            "again; the call at line %s of %s is not under `if __name__ == \"__main__\":`, so "
            "only the one-thread verdict is measured (pass workers=1 to silence this).",
            _unguarded_script(), getattr(sys.modules.get("__main__"), "__file__", "?"))
        return 1
    return workers
