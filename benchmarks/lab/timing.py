"""Timing loops, memory figures and the hardware block shared by the benchmarks.

>>> calls = []
>>> times = timed(lambda: calls.append(1), 3)
>>> len(times), len(calls), all(t >= 0 for t in times)
(3, 3, True)
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from neuralop_fem.environment import cpu_model, package_versions, thread_settings

__all__ = ["best_time", "calibrate_gflops", "current_rss_mib", "hardware", "peak_rss_mib",
           "per_sample_times", "saved_for_backward_mib", "slope", "timed", "timed_result"]


def timed(fn: Callable[[], Any], repeats: int) -> list[float]:
    """Wall seconds of ``repeats`` calls of ``fn()``, one entry per call."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def timed_result(fn: Callable[[], Any], repeats: int) -> tuple[list[float], Any]:
    """:func:`timed` (``repeats >= 1``) and what the last call of ``fn()`` returned."""
    out: list[Any] = []
    times = timed(lambda: out.append(fn()), repeats)
    return times, out[-1]


def best_time(fn: Callable[[], Any], repeats: int, *, inner: int = 1) -> float:
    """The least wall seconds of one call over ``repeats`` timings of ``inner`` calls each."""
    return min(timed(lambda: [fn() for _ in range(inner)], repeats)) / inner


def per_sample_times(fn: Callable[[], Any], repeats: int, size: int) -> dict[str, float]:
    """Wall and process CPU time per sample (ms) of ``fn()`` solving ``size`` samples: the
    least (``min_ms``, ``cpu_min_ms``) and the median (``median_ms``) over ``repeats`` calls."""
    wall, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append((time.perf_counter() - t0) / size)
        cpu.append((time.process_time() - c0) / size)
    return {"min_ms": 1e3 * min(wall), "median_ms": 1e3 * float(np.median(wall)),
            "cpu_min_ms": 1e3 * min(cpu)}


def calibrate_gflops() -> float:
    """Best-of-10 GFLOP/s of a (4096 x 96) @ (96 x 96) float32 GEMM in torch: the CPU share
    this process gets (about 80-90 on an idle core of a current x86 server)."""
    import torch

    a, b = torch.randn(4096, 96), torch.randn(96, 96)
    return 2 * 4096 * 96 * 96 / min(timed(lambda: a @ b, 10)) / 1e9


def peak_rss_mib() -> float:
    """The peak resident memory of this process (``ru_maxrss``), MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def current_rss_mib() -> float:
    """The resident memory of this process now (``/proc/self/statm``), MiB."""
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def saved_for_backward_mib(fn: Callable[[], Any]) -> float:
    """MiB that autograd keeps for the backward pass of ``fn()`` (each storage once)."""
    import torch

    saved: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        saved[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    del out
    return sum(saved.values()) / 2**20


def slope(x: list[float], y: list[float]) -> float:
    """The exponent ``p`` of a least-squares fit ``y ~ x^p`` on log-log axes.

    >>> round(slope([1.0, 2.0, 4.0], [3.0, 12.0, 48.0]), 6)
    2.0
    """
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def hardware(note: str) -> dict[str, Any]:
    """The hardware block of a benchmark's results file: CPU model and cores, the thread
    variables, the versions of Python and the numerical packages loaded, and ``note`` (how the
    timings were taken)."""
    return {"cpu_model": cpu_model(), "cpu_count": os.cpu_count(), **thread_settings(),
            **package_versions(), "note": note}
