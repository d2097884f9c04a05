"""The fair verdict's timings: the surrogate timed per sample, on one thread and on all cores;
whether the all-cores times can be trusted; the hardware words of a verdict; the machine's load.

A time on all cores measures the hardware only when the work is spread without waste: no more
processes or threads than cores, each warm before the clock starts. Work spread over more
cores cannot take longer per sample than on one, so :func:`all_cores_fault` treats a slower
all-cores time as a measurement fault and says why in plain words.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from solvers.ladder import usable_cores

from ..environment import cpu_model

__all__ = ["BATCH1_SAMPLES", "all_cores_fault", "busy_note", "machine_load", "time_surrogate",
           "torch_threads", "where_label"]

#: Samples timed one per call (the per-call cost barely depends on the sample).
BATCH1_SAMPLES = 4


def time_surrogate(surrogate: Any, inputs: Any, *, threads: int | None,
                   batch_one: bool = True) -> dict[str, Any]:
    """Time a surrogate per sample at the full batch and (optionally) one sample per call.

    ``solve`` is timed as a user calls it: normalisation, transfers to and from the device and
    the conversion back to numpy included. ``threads``: torch intra-op threads during the
    timing (None: leave them; at most the usable cores, :func:`solvers.ladder.usable_cores`:
    more threads than cores only share them). Returns ``{"time": s, "time_batch1": s or None,
    "threads": n}``.

    The untimed warm-up solves one sample on one thread; on more threads it solves the whole
    batch, since a thread pool starts its threads in its first parallel region and only a
    batch as large as the timed one is sure to reach every thread.
    """
    if threads is not None:
        threads = max(1, min(int(threads), usable_cores()))
    with torch_threads(threads) as used:
        # warm-up: first-call set-up is not per-sample cost
        surrogate.solve(inputs if used > 1 else inputs[:1])
        t0 = time.perf_counter()
        surrogate.solve(inputs)
        full = (time.perf_counter() - t0) / len(inputs)
        one = None
        if batch_one:  # the first few samples, as for the rungs
            k = min(len(inputs), BATCH1_SAMPLES)
            t0 = time.perf_counter()
            for i in range(k):
                surrogate.solve(inputs[i:i + 1])
            one = (time.perf_counter() - t0) / k
    return {"time": full, "time_batch1": one, "threads": used}


@contextmanager
def torch_threads(threads: int | None) -> Iterator[int]:
    """torch's intra-op CPU threads set to ``threads`` inside the block (None: left as they
    are), restored after it; yields the number in use."""
    import torch

    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(int(threads))
    try:
        yield torch.get_num_threads()
    finally:
        torch.set_num_threads(before)


def all_cores_fault(ladder: dict[str, Any], sur_timing: dict[str, Any]) -> str | None:
    """Why the all-cores times cannot be trusted, in plain words, or None when they can.

    Work spread over W processes (or threads) cannot take longer per sample than on one: a
    per-sample time on all cores above the one-thread time (both at the full batch) is a
    measurement fault (other work holding the cores, more processes than free cores, or too
    little work per process to pay for handing it over), not the hardware's speed. The
    solver's rungs and the surrogate are checked alike; the worst rung is named.
    """
    one = np.asarray(ladder["time"], float).mean(axis=1)
    every = np.asarray(ladder["time_all_cores"], float)[:, 0]
    faults = []
    slow = np.flatnonzero(every > one)
    if slow.size:
        i = int(slow[np.argmax(every[slow] / one[slow])])
        faults.append(f"the solver's rung {ladder['labels'][i]} took {1e3 * every[i]:.3g} ms "
                      f"per sample in {ladder.get('workers', '?')} processes against "
                      f"{1e3 * one[i]:.3g} ms on one thread")
    sur_one, sur_every = float(sur_timing["time"]), float(sur_timing["time_all_cores"])
    if sur_every > sur_one:
        threads = sur_timing.get("threads_all_cores", "several")
        faults.append(f"the surrogate took {1e3 * sur_every:.3g} ms per sample on {threads} "
                      f"threads against {1e3 * sur_one:.3g} ms on one")
    if not faults:
        return None
    return ("No verdict on all cores: " + "; ".join(faults) + ". Spread over more cores, work "
            "cannot take longer per sample than on one, so these all-cores times measure "
            "something else (other work holding the cores, or too little work per process "
            "to pay for handing it over) and are left out; compare on a quiet machine, or "
            "with more samples, for an all-cores figure.")


def where_label(device: object, *, threads: int, workers: int = 1) -> str:
    """"on this CPU (AMD EPYC, 1 thread)" or "with the surrogate on cuda (...)": the
    hardware words of a verdict (``workers``: solver processes, when more than one)."""
    cpu = cpu_model()
    plural = "" if threads == 1 else "s"
    dev = str(device)
    solver = (f"{cpu}, solver in {workers} processes" if workers > 1
              else f"{cpu}, {threads} thread{plural}")
    if dev.startswith("cuda"):
        return f"with the surrogate on {dev} and the solver on this CPU ({solver})"
    if workers > 1:
        return f"on all cores of this CPU ({solver}, surrogate {threads} thread{plural})"
    return f"on this CPU ({solver})"


def machine_load() -> tuple[float, int]:
    """(1-minute load average, CPU count) of this machine; the load is NaN where the system
    does not report one."""
    try:
        load = float(os.getloadavg()[0])
    except (AttributeError, OSError):
        load = float("nan")
    return load, os.cpu_count() or 1


def busy_note(load: float, cpus: int) -> str | None:
    """A warning when other work held at least half a core while timing (this comparison's own
    process counts as one in ``load``, the 1-minute load average); None on a quiet machine.

    >>> busy_note(1.1, 2) is None
    True
    >>> busy_note(3.0, 2)[:40]
    'The CPU was busy while timing: its 1-min'
    """
    if not np.isfinite(load) or load - 1.0 < 0.5:
        return None
    return (f"The CPU was busy while timing: its 1-minute load average was {load:.2g} on "
            f"{cpus} core{'' if cpus == 1 else 's'} before the timings (this comparison counts "
            f"for one), so every time here is inflated, the all-cores ones most. Compare on a "
            f"quiet machine for figures to quote.")
