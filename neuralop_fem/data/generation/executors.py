"""Running the chunks of a generation: in process, on local worker processes, or on dask.

Every executor calls :func:`solve_chunk`, which draws sample ``k`` from its own seed
``solvers.grf.sample_seeds(dataset_seed, k)`` and solves it, so a sample does not depend on
where or in which order it was computed. Results come back to the calling process, which
persists them (see :mod:`.store`).
"""

from __future__ import annotations

import contextlib
import logging
import math
import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from solvers.grf import sample_seeds

from ...errors import ConfigError
from ...extras import require
from ..float_paths import float_paths_json
from .config import DataConfig
from .store import FLOAT_PATHS

__all__ = ["Progress", "check_main_guard", "die_with_parent", "run_chunks", "solve_chunk",
           "worker_pool"]

_log = logging.getLogger("neuralop_fem.data.generation")

#: Environment of worker processes: one BLAS/OpenMP thread each (threaded BLAS on a busy
#: machine made the Darcy solves up to 15x slower; docs/generating_data.md, Speed).
WORKER_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
}

ChunkResult = dict[str, NDArray[np.generic]]


def solve_chunk(
    config: DataConfig, resolution: int, dataset_seed: int, start: int, stop: int,
    device: str | None = None, batch_size: int | None = None,
) -> ChunkResult:
    """Generate the global samples ``start .. stop-1`` of a dataset (with ``device``: solved by
    the torch twin of the solver there, ``batch_size`` samples per device call).

    Returns the fields of the problem (e.g. ``u0``, ``u``), the per-sample ``seed``
    (uint64), the solver diagnostics ``iterations``, ``residual``, ``solve_time`` and, as a
    0-d text array ``float_paths``, the kernel choices of the process that solved them
    (:func:`neuralop_fem.data.float_paths.float_paths`).
    """
    seeds = np.asarray(sample_seeds(dataset_seed, np.arange(start, stop)), dtype=np.uint64)
    if device is None:  # the numpy solvers (a plugin's config may not know `device`)
        out = config.solve_chunk(resolution, seeds)
    else:
        out = config.solve_chunk(resolution, seeds, device=device, batch_size=batch_size)
    out["seed"] = seeds
    out[FLOAT_PATHS] = np.asarray(float_paths_json())
    return out


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """``workers`` spawned processes, each with one BLAS/OpenMP thread (:data:`WORKER_ENV`)
    and ended with this process (:func:`die_with_parent`).

    The settings are made by each worker as it starts (:func:`_start_worker`): the pool spawns
    its processes as tasks arrive, so an environment set around the pool's construction would
    not reach them."""
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_start_worker, initargs=(os.getpid(),))


def _start_worker(parent: int) -> None:
    """Worker initializer: one thread in the BLAS/OpenMP libraries loaded already (numpy's)
    and, through :data:`WORKER_ENV`, in those loaded later (scipy, torch); then
    :func:`die_with_parent`."""
    os.environ.update(WORKER_ENV)
    threadpool_limits(limits=1)
    die_with_parent(parent)


class Progress:
    """Samples done, rate and ETA: a tqdm bar on a terminal, log lines otherwise.

    Parameters
    ----------
    total, initial
        Samples of the whole run and samples already done (resumed chunks).
    enabled
        True: tqdm bar; False: ``logging`` INFO lines; None: bar if stderr is a terminal.
    """

    def __init__(self, *, total: int, initial: int, enabled: bool | None) -> None:
        self.total = total
        self.done = initial
        self._initial = initial
        self._t0 = time.perf_counter()
        self._bar = None
        if enabled is None:
            enabled = sys.stderr.isatty()
        if enabled:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, initial=initial, unit="sample", desc="generate",
                             dynamic_ncols=True)

    def update(self, n: int) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
            return
        elapsed = time.perf_counter() - self._t0
        rate = (self.done - self._initial) / elapsed if elapsed > 0 else math.inf
        eta = (self.total - self.done) / rate if rate > 0 else math.inf
        _log.info("%d/%d samples done, %.3g samples/s, ETA %.0f s",
                  self.done, self.total, rate, eta)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _run_in_process(
    tasks: Sequence[tuple[int, int]], call: Callable[[int, int], ChunkResult],
    on_done: Callable[[int, int, ChunkResult], None],
) -> None:
    for start, stop in tasks:
        on_done(start, stop, call(start, stop))


def die_with_parent(parent: int) -> None:
    """Worker initializer: end this worker when the parent process dies (Linux), so killing
    only the main process of a generation never leaves its workers running."""
    import signal

    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def _unguarded_call_line(main: Any) -> int | None:
    """The line of the running script (``__main__``) whose top-level code called us, if that
    line is not under ``if __name__ == "__main__":``; None when the call is guarded, or the
    main module is not a script file (an interactive session, ``python -c``, a notebook)."""
    import ast
    import inspect

    path = getattr(main, "__file__", None)
    if not path or not os.path.isfile(path):
        return None
    frame = inspect.currentframe()
    line = None
    while frame is not None:
        if frame.f_globals is vars(main) and frame.f_code.co_name == "<module>":
            line = frame.f_lineno
        frame = frame.f_back
    if line is None:
        return None
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test) \
                and node.lineno <= line <= (node.end_lineno or node.lineno):
            return None
    return line


def check_main_guard() -> None:
    """Refuse to start worker processes from unguarded top-level script code.

    Worker processes are spawned: each imports the main script again, and a script that calls
    :func:`~neuralop_fem.data.generate` at its top level would start generating in every
    worker, which then fails. This check fails before any work instead.

    Raises
    ------
    ConfigError
        Naming the script and line and the fix.
    """
    main = sys.modules.get("__main__")
    line = _unguarded_call_line(main) if main is not None else None
    if line is not None:
        msg = (f"generate() with worker processes was called at the top level of the script "
               f"{main.__file__} (line {line}); every worker imports that script again. Put the "
               "call under `if __name__ == \"__main__\":` (see docs/generating_data.md) or pass "
               "workers=0 to solve in this process.")
        raise ConfigError(msg)


def _run_processes(
    tasks: Sequence[tuple[int, int]], args: tuple[Any, ...], workers: int,
    on_done: Callable[[int, int, ChunkResult], None], extra: tuple[Any, ...] = (),
) -> None:
    executor = worker_pool(workers)
    try:
        pending: dict[Future[ChunkResult], tuple[int, int]] = {}
        queue = list(tasks)
        # Keep at most 2 chunks per worker in flight: results are persisted as they come and
        # memory stays bounded whatever the dataset size.
        while queue or pending:
            while queue and len(pending) < 2 * workers:
                start, stop = queue.pop(0)
                pending[executor.submit(solve_chunk, *args, start, stop, *extra)] = (start, stop)
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in sorted(finished, key=lambda f: pending[f]):
                start, stop = pending.pop(future)
                on_done(start, stop, future.result())
    finally:
        executor.shutdown(wait=True, cancel_futures=True)


def _run_dask(
    tasks: Sequence[tuple[int, int]], args: tuple[Any, ...], scheduler: str,
    on_done: Callable[[int, int, ChunkResult], None],
) -> None:
    distributed = require("distributed", needed_for="`scheduler` (--scheduler)")
    Client, as_completed = distributed.Client, distributed.as_completed

    try:
        client = Client(scheduler, set_as_default=False, timeout=30)
    except (OSError, ValueError, TimeoutError) as exc:
        msg = (f"`scheduler` must be the address of a running dask scheduler; "
               f"got {scheduler!r} ({exc}).")
        raise ConfigError(msg) from None
    try:
        futures = {
            client.submit(solve_chunk, *args, start, stop, pure=False,
                          key=f"neuralop-fem-chunk-{start}-{stop}-{os.getpid()}-{time.time_ns()}"):
            (start, stop)
            for start, stop in tasks
        }
        for future in as_completed(futures, loop=client.loop):
            start, stop = futures[future]
            on_done(start, stop, future.result())
    finally:
        client.close()


def run_chunks(
    tasks: Sequence[tuple[int, int]],
    *,
    config: DataConfig,
    resolution: int,
    dataset_seed: int,
    workers: int,
    scheduler: str | None,
    on_done: Callable[[int, int, ChunkResult], None],
    device: str | None = None,
    batch_size: int | None = None,
) -> None:
    """Solve every chunk ``(start, stop)`` in ``tasks`` and hand each result to ``on_done``.

    ``scheduler`` set: on that dask.distributed cluster (its nanny-started workers use one
    BLAS thread by default). Otherwise ``workers >= 1`` spawned local processes with one BLAS
    thread each, or this process when ``workers == 0`` (for debugging; the caller's BLAS
    threading then applies, which may change the last bits of iterative or direct solves).
    ``device``: the solver's torch twin there, ``batch_size`` samples per device call (a CUDA
    device is driven from this process, ``workers == 0``). ``on_done`` runs in this process, in
    completion order.
    """
    if not tasks:
        return
    if scheduler is not None:
        _run_dask(tasks, (config, resolution, dataset_seed), scheduler, on_done)
        return
    args = (config, resolution, dataset_seed)
    extra = (device, batch_size)
    if workers == 0:
        _run_in_process(tasks, lambda a, b: solve_chunk(*args, a, b, *extra), on_done)
    else:
        _run_processes(tasks, args, min(workers, len(tasks)), on_done, extra)
