"""Solver ladders: cheaper settings of the bundled solvers, for the fair verdict (public).

A surrogate's speed-up means something only at equal accuracy or equal cost, against an
efficient solver (McGreivy & Hakim, Nature Machine Intelligence 2024). A *ladder* is a list of
:class:`Rung` s, each a solver and the grid it runs on, from coarse and cheap to fine. A rung
solves the inputs strided to its grid (the benchmark's subsampling convention: sample ``k``
of a coarse dataset is the fine sample at every ``stride``-th point) and its answer is brought
to the comparison grid by a stated interpolation, whose cost is part of the rung's time:

* periodic grids (Burgers): Fourier interpolation (the trigonometric interpolant at the
  comparison points; exact for band-limited fields);
* node grids (Darcy): bilinear interpolation (tensor-product linear; second order),

both :func:`solvers.grids.resample_output` (:func:`interpolate`), which also brings a
surrogate's prediction on another grid to the comparison grid.

Each problem owns its ladder (:meth:`solvers.problems.Problem.ladder`)::

    >>> from solvers.problems import get_problem
    >>> [r.label for r in get_problem("burgers").ladder()][:2]
    ['spectral n = 16, dt = 0.1', 'spectral n = 32, dt = 0.1']
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from multiprocessing.connection import Connection
from typing import Any

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from .errors import InputError
from .grids import resample_output
from .ladder_rung import Rung
from .problems import Problem, get_problem, problem_of

__all__ = ["Rung", "check_ladder", "interpolate", "pool_times", "run_rung", "usable_cores"]


#: The interpolation of a rung's answer to the comparison grid: Fourier on periodic grids,
#: bilinear on node grids, strided where the grids nest (:func:`solvers.grids.resample_output`,
#: the one a surrogate's prediction on another grid goes through too).
interpolate = resample_output


def run_rung(rung: Rung, fine_inputs: NDArray[np.float64], n_out: int, *, problem: Problem,
             batch: int | None = None, noise_level: NDArray[np.float64] | None = None,
             ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Solve with one rung and bring the answers to the comparison grid.

    Parameters
    ----------
    rung
        The solver and its grid.
    fine_inputs : (n_samples, N) or (n_samples, N, N) array
        Inputs on the finest grid available (``N`` points per dimension); strided to the
        rung's grid (``problem.stride(N, rung.resolution)``).
    n_out
        Points per dimension of the comparison grid (also the rung's grid when its
        ``resolution`` is None: the inputs are then strided to ``n_out``).
    problem
        The problem (grid convention and stride rule).
    batch
        Samples per ``solve`` call (None: all at once; 1: one at a time).
    noise_level : (n_samples,) array, optional
        Relative noise level of each sample's observations, passed to ``solve`` as
        ``noise_level`` (the inversion's discrepancy principle; inverse problems). Striding
        keeps it: it is a ratio of norms over the interior nodes of whichever grid.

    Returns
    -------
    answers : array on the comparison grid, (n_samples, n_out[, n_out])
    seconds : (n_samples,) array
        Wall time per sample: striding, solving and interpolating, each call's time shared
        equally by its samples.

    Raises
    ------
    InputError
        If the rung's grid (or ``n_out``) is not reachable from the inputs' grid.
    """
    n_fine = fine_inputs.shape[-1]
    n_rung = n_out if rung.resolution is None else rung.resolution
    stride = problem.stride(n_fine, n_rung)
    n_s = len(fine_inputs)
    step = n_s if batch is None else int(batch)
    answers = np.empty((n_s, *(n_out,) * problem.ndim))
    seconds = np.empty(n_s)
    sel = (slice(None),) + (slice(None, None, stride),) * problem.ndim
    for start in range(0, n_s, step):
        part = slice(start, min(start + step, n_s))
        t0 = time.perf_counter()
        coarse = np.ascontiguousarray(fine_inputs[part][sel])
        sol = (rung.solver.solve(coarse) if noise_level is None
               else rung.solver.solve(coarse, noise_level=noise_level[part]))
        out = np.asarray(getattr(sol, "values", sol), dtype=np.float64)
        answers[part] = interpolate(out, n_out, grid=problem.grid)
        seconds[part] = (time.perf_counter() - t0) / (part.stop - part.start)
    return answers, seconds


def check_ladder(ladder: object, problem: Problem) -> list[Rung]:
    """A user's ladder as a list of :class:`Rung` (bare solvers run on the comparison grid).

    Raises
    ------
    InputError
        An empty ladder, an entry that is not a solver or a Rung, or a solver of another
        problem (the message names the entry).
    """
    if isinstance(ladder, str | bytes) or not hasattr(ladder, "__iter__"):
        msg = f"`ladder` must be a list of solvers or Rungs; got {type(ladder).__name__}."
        raise InputError(msg)
    rungs = [r if isinstance(r, Rung) else Rung(solver=r) for r in ladder]
    if not rungs:
        msg = (f"`ladder` must hold at least one solver; got an empty ladder (the {problem.name} "
               "problem's own is `get_problem(name).ladder()`).")
        raise InputError(msg)
    for i, rung in enumerate(rungs):
        own = problem_of(rung.solver)
        if own is not None and own.name != problem.name:
            msg = (f"`ladder` entry {i} ({rung.label}) solves {own.name!r}; the comparison is "
                   f"of {problem.name!r}.")
            raise InputError(msg)
    return rungs


#: Thread-count variables set to 1 for the worker processes (read by BLAS and OpenMP
#: libraries when they load, so a library a worker loads late starts with one thread too).
_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                     "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity mask; ``os.cpu_count()`` where the
    system has none)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@contextmanager
def _one_thread_environment() -> Iterator[None]:
    """The thread-count variables at 1 inside the block (for processes started there),
    restored after it."""
    before = {k: os.environ.get(k) for k in _THREAD_VARIABLES}
    os.environ.update(dict.fromkeys(_THREAD_VARIABLES, "1"))
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _worker(conn: Connection, fine_inputs: NDArray[np.float64],
            noise_level: NDArray[np.float64] | None, problem: str) -> None:
    """A pool process: one thread in every BLAS/OpenMP library (those loaded already; later
    ones read the thread variables), ready when its imports are done; then it solves the
    samples ``start:stop`` of each task ``(rung, start, stop, n_out)`` and answers their
    number (or the error), until it receives None."""
    own = get_problem(problem)
    threadpool_limits(limits=1)
    conn.send("ready")
    while (task := conn.recv()) is not None:
        rung, start, stop, n_out = task
        try:
            run_rung(rung, fine_inputs[start:stop], n_out, problem=own,
                     noise_level=None if noise_level is None else noise_level[start:stop])
        except Exception as exc:  # reported to the parent, which names the rung
            conn.send(f"{type(exc).__name__}: {exc}")
        else:
            conn.send(stop - start)


def _ask(conns: list[Connection], tasks: list[tuple[Any, ...]], label: str) -> int:
    """Send each worker its task at once, wait for every answer; the samples solved."""
    for conn, task in zip(conns, tasks, strict=True):
        conn.send(task)
    answers = [conn.recv() for conn in conns]
    failed = [a for a in answers if isinstance(a, str)]
    if failed:
        msg = f"`ladder` rung {label} failed in a worker process: {failed[0]}"
        raise InputError(msg)
    return int(sum(answers))


def pool_times(rungs: list[Rung], fine_inputs: NDArray[np.float64], n_out: int, *,
               problem: Problem, workers: int,
               noise_level: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """Time per sample of each rung with the samples spread over ``workers`` processes.

    The throughput of all cores: the samples are split into equal parts, one per process,
    solved at once; the time per sample is the wall time of the whole batch over the number
    of samples. Only work is timed:

    * at most :func:`usable_cores` processes (more only share the cores) and at most one per
      sample;
    * each process runs one thread in every BLAS/OpenMP library (no oversubscription), set
      in its environment before it starts and by threadpoolctl once its imports are done;
    * every process is started, has imported the solvers and holds the inputs (sent once:
      the fine-grid inputs are an artefact of the comparison, not part of a solve) before any
      timing; each then solves one sample of its part with the rung untimed (first-call set-up
      is not per-sample cost, as for the one-thread times), so no process is cold;
    * each process gets its own part over its own pipe, so none waits for another's task.

    ``noise_level``: as for :func:`run_rung`.

    Returns
    -------
    (n_rungs,) array of seconds per sample.

    Raises
    ------
    InputError
        A rung that fails in a worker (the message names the rung and the error).
    """
    fine_inputs = np.ascontiguousarray(fine_inputs)
    level = None if noise_level is None else np.asarray(noise_level, dtype=np.float64)
    count = max(1, min(int(workers), usable_cores(), len(fine_inputs)))
    bounds = [(int(p[0]), int(p[-1]) + 1)
              for p in np.array_split(np.arange(len(fine_inputs)), count) if len(p)]
    out = np.empty(len(rungs))
    ctx = multiprocessing.get_context("spawn")  # no fork of a process with torch threads
    conns: list[Connection] = []
    procs = []
    try:
        with _one_thread_environment():
            for _ in bounds:
                mine, theirs = ctx.Pipe()
                proc = ctx.Process(target=_worker, args=(theirs, fine_inputs, level,
                                                         problem.name), daemon=True)
                proc.start()
                theirs.close()
                conns.append(mine)
                procs.append(proc)
        for conn in conns:  # every process up, imports done, before any timing
            conn.recv()
        for i, rung in enumerate(rungs):
            _ask(conns, [(rung, lo, lo + 1, n_out) for lo, _ in bounds], rung.label)
            t0 = time.perf_counter()
            n = _ask(conns, [(rung, lo, hi, n_out) for lo, hi in bounds], rung.label)
            out[i] = (time.perf_counter() - t0) / n
    finally:
        for conn in conns:
            with suppress(OSError):
                conn.send(None)
        for proc in procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.terminate()
    return out
