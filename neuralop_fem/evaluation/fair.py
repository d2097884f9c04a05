"""The fair verdict: a surrogate placed on the accuracy-cost front of a solver ladder.

McGreivy & Hakim (Nature Machine Intelligence, 2024) found that most claimed speed-ups of
machine-learned PDE solvers broke one of two rules: compare **at equal accuracy or equal
cost**, and against an **efficient** numerical method. This module applies both:

1. every rung of a ladder (:mod:`solvers.ladder`: cheaper solver settings, each answer
   interpolated to the comparison grid, its cost included) solves the same samples as the
   surrogate; the mean relative L2 error against the same truth and the time per sample give
   one point per rung;
2. :func:`pareto_front` keeps the rungs that no other rung beats in both error and time
   (time increasing, error decreasing by more than round-off along the front);
3. :func:`place` puts the surrogate on it. *Equal accuracy*: the solver time at the
   surrogate's error, log-log interpolated between the two front rungs around it (a rung's
   own time when the errors agree up to round-off, :data:`ERROR_RTOL`); the
   speed-up is that time over the surrogate's. A surrogate more accurate than every rung gets
   no number (no extrapolation); a surrogate less accurate than the cheapest rung gets a
   bound (the solver needs at most the cheapest rung's time). *Equal cost*: the most accurate
   front rung that takes no longer than the surrogate.

The spread over samples comes from placing each sample's error on its own rung errors.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from solvers.ladder import Rung, check_ladder, pool_times, run_rung, usable_cores
from solvers.problems import Problem

from ..errors import InputError
from ..metrics import relative_l2
from .break_even import break_even, break_even_sentence
from .fair_timing import (
    BATCH1_SAMPLES,
    all_cores_fault,
    busy_note,
    machine_load,
    time_surrogate,
    torch_threads,
    where_label,
)

__all__ = ["ERROR_RTOL", "add_verdict", "all_cores_fault", "busy_note", "machine_load",
           "measure_ladder", "pareto_front", "place", "same_error", "time_surrogate",
           "torch_threads", "verdict_sentence", "where_label"]

Array = NDArray[np.float64]

#: Two errors within this relative distance are one error. The same accuracy computed along two
#: routes (another summation order, a BLAS reduction split over another number of threads,
#: another SIMD path) differs by a few units in the last place: at most about ``n eps``
#: (2e-11 for 421^2 grid points, eps = 1.1e-16) for the sums of squares of a relative L2
#: error, far less in practice. Distinct solver settings differ by percents, and the mean error
#: over samples is uncertain by far more than 1e-9, so nothing real is merged.
ERROR_RTOL = 1e-9


def measure_ladder(rungs: list[Rung], fine_inputs: Array, truth: Array, *, problem: Problem,
                   batch_one: bool = True, workers: int = 1,
                   bracket: tuple[float, float] | None = None,
                   noise_level: Array | None = None,
                   budget_s: float | None = None) -> dict[str, Any]:
    """Errors and times of every rung on the same samples.

    Parameters
    ----------
    rungs
        The ladder (:func:`solvers.ladder.check_ladder` turns a list of solvers into one).
        Each rung solves one sample untimed first (as the surrogate's timing warms up).
    fine_inputs : (n_samples, N[, N]) array
        Inputs on the finest grid available (each rung strides them to its grid).
    truth : (n_samples, n[, n]) array
        The answers errors are measured against, on the comparison grid (inverse problem:
        the true coefficient).
    problem
        The problem (forward, or inverse with ``noise_level``).
    batch_one
        Also time each rung one sample per call (batch size 1), on the first
        ``BATCH1_SAMPLES`` (4) samples; their mean time stands for every sample.
    workers
        With ``workers > 1`` also time each rung with the samples spread over that many
        processes (:func:`solvers.ladder.pool_times`: the throughput of all cores; at most
        the usable cores and one per sample).
    bracket
        ``(error, seconds)`` of the surrogate: climb the ladder only until a rung is both at
        least as accurate (up to round-off, :data:`ERROR_RTOL`) and slower than that (both
        placements are then decided; finer rungs would only cost time). None: every rung.
    noise_level : (n_samples,) array, optional
        Relative noise level of each sample's observations (inverse problems: each rung's
        discrepancy principle; :func:`solvers.ladder.run_rung`).
    budget_s
        Wall seconds the one-thread climb may take (warm-up, timed batch and batch-1 timings
        of every rung; the all-cores pass is extra). Before each rung after the first, its
        cost is predicted from the last rung's cost times the growth between the last two
        (at least 1); the climb stops when that would pass the budget. None: no limit.

    Returns
    -------
    dict with ``labels`` (list, the rungs measured), ``skipped`` (labels of the rungs above
    the bracket or the budget, not run), ``stopped`` (``"bracket"``, ``"budget"`` or None:
    why the climb ended early), ``seconds`` (wall time of the climb), ``rel_l2`` (rung,
    sample), ``time`` (rung, sample) seconds at the largest batch on one thread,
    ``time_batch1`` (rung, sample) or None,
    ``time_all_cores`` (rung, sample; each sample the pool's time per sample) or None and
    ``workers`` (the processes used).

    Raises
    ------
    InputError
        A bad ladder (see :func:`~solvers.ladder.check_ladder`) or a rung that fails (the
        message names the rung and the error).
    """
    rungs = check_ladder(rungs, problem)
    n_out = truth.shape[-1]
    n_r, n_s = len(rungs), len(truth)
    errors, times = np.empty((n_r, n_s)), np.empty((n_r, n_s))
    times1 = np.empty((n_r, n_s)) if batch_one else None
    if budget_s is not None and not budget_s > 0:
        msg = f"`budget_s` must be a positive number of seconds or None; got {budget_s!r}."
        raise InputError(msg)
    costs: list[float] = []
    stopped: str | None = None
    start = time.perf_counter()
    measured = 0
    # One BLAS/OpenMP thread for the whole climb, as in the all-cores workers: the times are
    # one thread's, and every error is reduced the same way wherever it is computed.
    with threadpool_limits(limits=1):
        for i, rung in enumerate(rungs):
            if budget_s is not None and costs:
                growth = max(1.0, costs[-1] / costs[-2]) if len(costs) > 1 else 1.0
                if time.perf_counter() - start + costs[-1] * growth > budget_s:
                    stopped = "budget"
                    break
            began = time.perf_counter()
            try:  # one untimed sample first: first-call set-up is not per-sample cost
                run_rung(rung, fine_inputs[:1], n_out, problem=problem,
                         noise_level=None if noise_level is None else noise_level[:1])
                answers, seconds = run_rung(rung, fine_inputs, n_out, problem=problem,
                                            noise_level=noise_level)
                if times1 is not None:  # per-call cost hardly varies: time a few samples only
                    _, some = run_rung(rung, fine_inputs[:BATCH1_SAMPLES], n_out, problem=problem,
                                       batch=1, noise_level=None if noise_level is None
                                       else noise_level[:BATCH1_SAMPLES])
                    times1[i] = some.mean()
            except Exception as exc:  # a failing rung is named, whatever it raised
                msg = f"`ladder` rung {i} ({rung.label}) failed: {type(exc).__name__}: {exc}"
                raise InputError(msg) from exc
            if answers.shape != truth.shape or not np.isfinite(answers).all():
                msg = (f"`ladder` rung {i} ({rung.label}) returned "
                       f"{'non-finite values' if answers.shape == truth.shape else answers.shape}; "
                       f"expected finite answers of shape {truth.shape}.")
                raise InputError(msg)
            errors[i] = relative_l2(answers, truth)
            times[i] = seconds
            costs.append(time.perf_counter() - began)
            measured = i + 1
            # slower and at least as accurate as the surrogate (equal up to round-off: "a rung")
            if bracket is not None and seconds.mean() > bracket[1] and (
                    errors[i].mean() < bracket[0] or same_error(errors[i].mean(), bracket[0])):
                stopped = "bracket" if measured < n_r else None
                break
    climb = time.perf_counter() - start
    skipped = [r.label for r in rungs[measured:]]
    rungs, errors, times = rungs[:measured], errors[:measured], times[:measured]
    times1 = None if times1 is None else times1[:measured]
    pooled = None
    workers = max(1, min(int(workers), usable_cores(), n_s))  # as many as pool_times runs
    if workers > 1:
        per = pool_times(rungs, fine_inputs, n_out, problem=problem, workers=workers,
                         noise_level=noise_level)
        pooled = np.repeat(per[:, None], n_s, axis=1)
    return {"labels": [r.label for r in rungs], "skipped": skipped, "stopped": stopped,
            "seconds": climb, "budget_s": budget_s, "rel_l2": errors, "time": times,
            "time_batch1": times1, "time_all_cores": pooled, "workers": int(workers)}


def pareto_front(errors: Array, times: Array) -> NDArray[np.int64]:
    """Indices of the rungs on the accuracy-cost front, cheapest first.

    A rung is on the front when no other rung is at least as fast and more accurate by more
    than round-off (:data:`ERROR_RTOL`), or strictly faster and at least as accurate. Along
    the returned order the time increases and the error decreases by more than round-off, so
    of two rungs with one error up to round-off only the faster is on the front.

    >>> pareto_front(np.array([1e-2, 5e-3, 6e-3, 1e-3]), np.array([1.0, 2.0, 3.0, 4.0]))
    array([0, 1, 3])
    >>> pareto_front(np.array([1e-2, np.nextafter(1e-2, 0.0)]), np.array([1.0, 2.0]))
    array([0])
    """
    errors, times = np.asarray(errors, float), np.asarray(times, float)
    order = np.lexsort((errors, times))  # by time, ties by error
    front: list[int] = []
    best = np.inf
    for i in order:
        if errors[i] < best * (1.0 - ERROR_RTOL):
            front.append(int(i))
            best = errors[i]
    return np.asarray(front, dtype=np.int64)


def same_error(a: float | Array, b: float | Array) -> bool | NDArray[np.bool_]:
    """Whether errors ``a`` and ``b`` are one error up to round-off (:data:`ERROR_RTOL`).

    >>> same_error(0.24723681644248194, 0.24723681644248197), same_error(0.25, 0.2500001)
    (True, False)
    """
    a, b = np.asarray(a, float), np.asarray(b, float)
    out = np.abs(a - b) <= ERROR_RTOL * np.maximum(np.abs(a), np.abs(b))
    return bool(out) if out.ndim == 0 else out


def _time_at_error(err: float, front_err: Array,
                   front_time: Array) -> tuple[float, str, tuple[int, ...]]:
    """Solver time at error ``err`` along a front (errors decreasing), how it was found, and
    the front positions used (one rung or the two around ``err``)."""
    near = np.flatnonzero(same_error(front_err, err))
    if near.size:  # the cheapest rung of this error, whatever the last bits say
        j = int(near[0])
        return float(front_time[j]), "a rung", (j,)
    if err < front_err[-1]:
        return np.nan, "more accurate than every rung", ()
    if err > front_err[0]:
        return float(front_time[0]), "at most the cheapest rung", (0,)
    j = int(np.searchsorted(-front_err, -err, side="left"))  # front_err[j] < err < [j-1]
    le = np.log([front_err[j - 1], front_err[j]])
    lt = np.log([front_time[j - 1], front_time[j]])
    w = (np.log(err) - le[0]) / (le[1] - le[0])
    return float(np.exp(lt[0] + w * (lt[1] - lt[0]))), "interpolated", (j - 1, j)


def place(ladder: dict[str, Any], sur_errors: Array, sur_time: float, *,
          time_key: str = "time") -> dict[str, Any]:
    """Place a surrogate on the ladder's front.

    Parameters
    ----------
    ladder
        From :func:`measure_ladder`.
    sur_errors : (n_samples,) array
        The surrogate's relative L2 errors against the same truth.
    sur_time
        The surrogate's time per sample (seconds, same batch setting as ``time_key``).
    time_key
        ``"time"`` (large batch) or ``"time_batch1"``.

    Returns
    -------
    dict: ``front`` (rung indices), ``error`` (surrogate mean), ``status`` (``"interpolated"``,
    ``"a rung"``, ``"at most the cheapest rung"``, ``"more accurate than every rung"`` or,
    when the climb stopped at its time budget below the surrogate's accuracy, ``"at least
    the finest rung measured"``), ``solver_time`` at equal accuracy (NaN when more accurate
    than every rung; a lower bound, the slowest measured rung's time, when the budget stopped
    the climb: finer rungs cost more), ``speedup`` (solver time / surrogate time; for ``"at
    most the cheapest rung"`` an upper bound, for ``"at least ..."`` a lower bound),
    ``speedup_p10``/``_median``/``_p90`` over samples, ``bracket`` (labels of the rungs used),
    ``equal_cost_rung`` (label or None) and ``equal_cost_error``.
    """
    if ladder.get(time_key) is None:
        msg = f"`time_key` {time_key!r} was not measured for this ladder."
        raise InputError(msg)
    times = np.asarray(ladder[time_key])
    if not np.isfinite(sur_time) or sur_time <= 0:
        msg = f"`sur_time` must be a positive time per sample; got {sur_time!r}."
        raise InputError(msg)
    errs = np.asarray(ladder["rel_l2"])
    if np.shape(sur_errors) != errs.shape[1:]:
        msg = (f"`sur_errors` must hold one error per sample of the ladder ({errs.shape[1]}); "
               f"got shape {np.shape(sur_errors)}.")
        raise InputError(msg)
    mean_err, mean_time = errs.mean(axis=1), times.mean(axis=1)
    front = pareto_front(mean_err, mean_time)
    fe, ft = mean_err[front], mean_time[front]
    err = float(np.mean(sur_errors))
    solver_time, status, used = _time_at_error(err, fe, ft)
    labels = ladder["labels"]
    bracket = [labels[front[k]] for k in used]
    if status == "more accurate than every rung" and ladder.get("stopped") == "budget":
        status, solver_time = "at least the finest rung measured", float(mean_time.max())
        bracket = [labels[int(np.argmax(mean_time))]]
    per_sample = []
    for s, e in enumerate(np.asarray(sur_errors, float)):
        se = np.minimum.accumulate(errs[front, s])  # this sample's errors along the front
        t, st, _ = _time_at_error(float(e), np.maximum(se, 1e-300), times[front, s])
        if st != "more accurate than every rung":
            per_sample.append(t / sur_time)
    ps = np.asarray(per_sample)
    within = front[ft <= sur_time]
    best = int(within[-1]) if within.size else None
    return {
        "front": front, "error": err, "status": status, "solver_time": solver_time,
        "surrogate_time": float(sur_time),
        "speedup": solver_time / sur_time if np.isfinite(solver_time) else np.nan,
        "speedup_p10": float(np.percentile(ps, 10)) if ps.size else np.nan,
        "speedup_median": float(np.median(ps)) if ps.size else np.nan,
        "speedup_p90": float(np.percentile(ps, 90)) if ps.size else np.nan,
        "samples_placed": int(ps.size), "bracket": bracket,
        "equal_cost_rung": None if best is None else labels[best],
        "equal_cost_error": np.nan if best is None else float(mean_err[best]),
    }


def verdict_sentence(placed: dict[str, Any], *, where: str, solver: str = "the solver") -> str:
    """The report's opening sentence, e.g. "At equal accuracy (9.1e-04) the solver (spectral
    n = 128, dt = 0.05) takes 2.9 ms per sample: the surrogate is 0.30x as fast on this CPU
    (1 thread)." ``where`` names the hardware and threads, ``solver`` the method (e.g. "the
    classical inversion")."""
    err, status = placed["error"], placed["status"]
    if status == "more accurate than every rung":
        return (f"The surrogate (rel. L2 {err:.2g}) is more accurate than every rung of the "
                f"solver ladder, so there is no solver setting of equal accuracy to compare "
                f"its speed with ({where}); add finer rungs for a speed-up.")
    ms = 1e3 * placed["solver_time"]
    speed = placed["speedup"]
    if status == "at least the finest rung measured":
        fast = _pace(speed)
        return (f"The surrogate (rel. L2 {err:.2g}) is more accurate than every rung measured "
                f"within the ladder's time budget; finer rungs cost more than the slowest "
                f"measured ({placed['bracket'][0]}, {ms:.3g} ms per sample), so at equal "
                f"accuracy the surrogate is at least {fast} {where}.")
    spread = (f"samples: {placed['speedup_p10']:.2g}-{placed['speedup_p90']:.2g}x, 10-90 %"
              if np.isfinite(placed["speedup_p10"]) and status != "at most the cheapest rung"
              else "")
    how = {"interpolated": f"between {' and '.join(placed['bracket'])}",
           "a rung": placed["bracket"][0] if placed["bracket"] else "",
           # the front's cheapest: a rung off the front (a coarser grid that took longer) may be
           # cheaper on paper, but not in the times measured
           "at most the cheapest rung": f"{placed['bracket'][0]}, the cheapest rung on the "
                                        "front, is already more accurate"}[status]
    bound = "at most " if status == "at most the cheapest rung" else ""
    fast = _pace(speed, spread)
    return (f"At equal accuracy ({err:.2g}) {solver} ({how}) takes {bound}{ms:.3g} ms per "
            f"sample: the surrogate is {bound}{fast} {where}.")


def _pace(speed: float, detail: str = "") -> str:
    """"0.41x as fast", "as fast (1x)" or "1.8x faster": a speed-up in words (two digits),
    with ``detail`` in one parenthesis.

    >>> [_pace(s) for s in (0.414, 0.996, 1.04, 1.8)]
    ['0.41x as fast', 'as fast (1x)', 'as fast (1x)', '1.8x faster']
    >>> _pace(1.0, "samples: 0.9-1.1x"), _pace(1.8, "samples: 1.5-2x")
    ('as fast (1x; samples: 0.9-1.1x)', '1.8x faster (samples: 1.5-2x)')
    """
    text = f"{speed:.2g}"
    if text == "1":
        return f"as fast (1x{'; ' + detail if detail else ''})"
    words = f"{text}x as fast" if speed < 1 else f"{text}x faster"
    return f"{words} ({detail})" if detail else words


def add_verdict(ds: Any, ladder: dict[str, Any], sur_errors: Array, sur_timing: dict[str, Any],
                *, where: str, solver: str = "the solver",
                truth: str = "the dataset's stored solutions on the model grid",
                cost: dict[str, Any] | None = None) -> None:
    """Store the ladder, the front and the verdict in a comparison dataset (in place).

    Variables on ``(rung, sample)``: ``ladder_rel_l2``, ``ladder_time`` and, when measured,
    ``ladder_time_batch1``; ``truth_rel_l2`` (the surrogate's error against the same truth) on
    ``sample``; ``on_front`` on ``rung``. Attributes ``fair_*`` (numbers of the placement at
    the large batch, and ``fair_batch1_*`` at batch 1) and ``verdict`` (the sentence of
    :func:`verdict_sentence`): the one source of every verdict number a report prints.
    ``solver`` names the method in the sentences, ``truth`` what the errors are measured
    against (attribute ``fair_truth``). The all-cores verdict (``verdict_all_cores``) is
    drawn only from trustworthy times (:func:`all_cores_fault`); otherwise
    ``fair_all_cores_left_out`` says why there is none. ``cost``
    (:func:`~neuralop_fem.evaluation.break_even.surrogate_cost`): where the surrogate is
    faster at equal accuracy, ``fair_break_even_solves`` (``_bound``) and the sentence
    ``verdict_break_even`` (likewise ``fair_batch1_break_even_*`` and
    ``verdict_batch1_break_even`` one sample per call, ``fair_all_cores_break_even_*`` and
    ``verdict_all_cores_break_even`` on all cores).
    """
    ds.coords["rung"] = list(ladder["labels"])
    ds["ladder_rel_l2"] = (("rung", "sample"), ladder["rel_l2"])
    ds["ladder_time"] = (("rung", "sample"), ladder["time"])
    if ladder.get("time_batch1") is not None:
        ds["ladder_time_batch1"] = (("rung", "sample"), ladder["time_batch1"])
    ds["truth_rel_l2"] = ("sample", np.asarray(sur_errors, float))
    placed = place(ladder, sur_errors, sur_timing["time"])
    on_front = np.zeros(len(ladder["labels"]), dtype=np.int8)
    on_front[placed["front"]] = 1
    ds["on_front"] = ("rung", on_front)
    for key, value in placed.items():
        if key == "front":
            continue
        ds.attrs[f"fair_{key}"] = (" | ".join(value) if isinstance(value, list)
                                   else "" if value is None else value)
    ds.attrs["fair_where"] = where
    ds.attrs["fair_skipped_rungs"] = " | ".join(ladder.get("skipped", []))
    ds.attrs["fair_stopped"] = ladder.get("stopped") or ""
    ds.attrs["fair_ladder_seconds"] = float(ladder.get("seconds", np.nan))
    if ladder.get("budget_s") is not None:
        ds.attrs["fair_ladder_budget_s"] = float(ladder["budget_s"])
    ds.attrs["fair_truth"] = truth
    n = len(sur_errors)  # the large batch: every sample in one call, solver and surrogate
    ds.attrs["verdict"] = verdict_sentence(
        placed, where=f"{where}, {n} sample{'' if n == 1 else 's'} per call", solver=solver)
    if ladder.get("time_batch1") is not None and sur_timing.get("time_batch1"):
        one = place(ladder, sur_errors, sur_timing["time_batch1"], time_key="time_batch1")
        for key in ("solver_time", "surrogate_time", "speedup", "status"):
            ds.attrs[f"fair_batch1_{key}"] = one[key]
        ds.attrs["verdict_batch1"] = verdict_sentence(one, where=where + ", one sample per call",
                                                      solver=solver)
        if cost is not None:
            _add_break_even(ds, one, cost, prefix="fair_batch1_",
                            name="verdict_batch1_break_even",
                            where=where + ", one sample per call")
    if cost is not None:
        _add_break_even(ds, placed, cost, prefix="fair_", name="verdict_break_even",
                        where=f"{where}, {n} sample{'' if n == 1 else 's'} per call")
    if ladder.get("time_all_cores") is not None and sur_timing.get("time_all_cores"):
        ds["ladder_time_all_cores"] = ("rung", ladder["time_all_cores"][:, 0])
        ds.attrs["fair_all_cores_where"] = sur_timing["where_all_cores"]
        fault = all_cores_fault(ladder, sur_timing)
        if fault is not None:  # the times are kept; no verdict is drawn from them
            ds.attrs["fair_all_cores_left_out"] = fault
            return
        every = place(ladder, sur_errors, sur_timing["time_all_cores"], time_key="time_all_cores")
        for key in ("solver_time", "surrogate_time", "speedup", "status"):
            ds.attrs[f"fair_all_cores_{key}"] = every[key]
        ds.attrs["verdict_all_cores"] = verdict_sentence(
            every, where=sur_timing["where_all_cores"], solver=solver)
        if cost is not None:
            _add_break_even(ds, every, cost, prefix="fair_all_cores_",
                            name="verdict_all_cores_break_even",
                            where=sur_timing["where_all_cores"])


def _add_break_even(ds: Any, placed: dict[str, Any], cost: dict[str, Any], *, prefix: str,
                    name: str, where: str) -> None:
    """The break-even of one placement as attributes ``<prefix>break_even_solves`` (NaN where
    there is none) and ``_bound``, the cost behind it and the sentence ``name``."""
    found = break_even(placed, cost)
    ds.attrs[f"{prefix}break_even_solves"] = np.nan if found is None else found[0]
    ds.attrs[f"{prefix}break_even_bound"] = "" if found is None else found[1]
    for key in ("train_s", "data_s", "data_samples", "data_per_sample_s"):
        ds.attrs[f"fair_cost_{key}"] = cost[key]
    sentence = break_even_sentence(placed, cost, where=where)
    if sentence is not None:
        ds.attrs[name] = sentence
