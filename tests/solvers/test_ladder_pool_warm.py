"""All-core timing measures work only: every worker started, warm and on one BLAS thread before
the timed solve, and never more workers than cores (the fault that made the all-cores times of
fast rungs 50x too slow on a 16-core machine: workers still starting up, or solving cold, while
the clock ran)."""

from __future__ import annotations

import numpy as np

from solvers.ladder import Rung, pool_times, usable_cores
from solvers.problems import get_problem

from ._recording_solver import RecordingSolver, read_log

BURGERS = get_problem("burgers")
N, SAMPLES = 32, 8
#: A cold call costs this (seconds) in each process, as a first solve's set-up does.
COLD_S = 0.5


def test_the_timed_solves_run_warm_on_one_thread_in_at_most_one_process_per_core(tmp_path):
    """Two workers more than the cores are asked for; each rung's first call in a process is
    slow. Timed: only warm calls (a cold one would add COLD_S / SAMPLES = 0.06 s per sample)."""
    x = np.arange(N) / N
    inputs = np.stack([np.sin(2 * np.pi * (x + k / SAMPLES)) for k in range(SAMPLES)])
    rungs = [Rung(solver=RecordingSolver(str(tmp_path), label=f"r{i}", first_call_s=COLD_S),
                  resolution=N, label=f"r{i}") for i in range(2)]
    cores = usable_cores()
    times = pool_times(rungs, inputs, N, problem=BURGERS, workers=cores + 2)
    calls = read_log(tmp_path)
    pids = {c["pid"] for c in calls}
    assert len(pids) == min(cores, SAMPLES)  # all cores, no more
    for label in ("r0", "r1"):
        mine = [c for c in calls if c["label"] == label]
        timed = [c for c in mine if c["n"] > 1]
        assert {c["pid"] for c in timed} == pids  # every worker has a part
        assert not any(c["cold"] for c in timed)
        for c in timed:  # warmed in the same process before the clock started
            assert any(w["pid"] == c["pid"] and w["started"] < c["started"] for w in mine
                       if w["n"] == 1)
    assert all(c["blas_threads"] == 1 for c in calls)
    # A cold call in the timed part adds at least COLD_S / SAMPLES per sample; warm calls cost
    # a hand-over, a log file and a copy (2.5-3 ms per sample at a load average of 13 on two
    # cores): half the cold share separates them with a factor 2 margin on the cold side and
    # 10 on the warm side.
    assert (times < 0.5 * COLD_S / SAMPLES).all(), times
