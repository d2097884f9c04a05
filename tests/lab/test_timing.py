"""benchmarks.lab.timing: the timing loops count their calls and time them."""

from __future__ import annotations

import time

import numpy as np
import pytest

from benchmarks.lab import timing


def _sleeper(calls: list[int], seconds: float = 0.002):
    def fn() -> int:
        calls.append(1)
        time.sleep(seconds)
        return len(calls)
    return fn


def test_timed_calls_once_per_repeat_and_measures_the_call():
    calls: list[int] = []
    times = timing.timed(_sleeper(calls), 4)
    assert len(times) == 4
    assert len(calls) == 4
    assert min(times) >= 0.002


def test_timed_result_returns_the_last_calls_value():
    calls: list[int] = []
    times, last = timing.timed_result(_sleeper(calls), 3)
    assert len(times) == 3
    assert last == 3


def test_best_time_divides_by_the_inner_calls():
    calls: list[int] = []
    best = timing.best_time(_sleeper(calls, 0.001), 2, inner=5)
    assert len(calls) == 10
    assert 0.001 <= best < 0.05


def test_per_sample_times_are_milliseconds_per_sample():
    calls: list[int] = []
    t = timing.per_sample_times(_sleeper(calls, 0.004), 3, size=2)
    assert len(calls) == 3
    assert set(t) == {"min_ms", "median_ms", "cpu_min_ms"}
    assert 2.0 <= t["min_ms"] <= t["median_ms"]  # 4 ms over 2 samples
    assert 0 <= t["cpu_min_ms"] < t["min_ms"]  # sleeping costs no CPU time


def test_slope_recovers_a_power_law():
    n = [16.0, 32.0, 64.0, 128.0]
    assert timing.slope(n, [3 * x**1.5 for x in n]) == pytest.approx(1.5)


def test_saved_for_backward_counts_each_storage_once():
    torch = pytest.importorskip("torch")
    x = torch.ones(1024, dtype=torch.float64, requires_grad=True)
    # x * x saves x twice (one storage); sin saves x again: still 8 KiB
    assert timing.saved_for_backward_mib(lambda: (x * x + x.sin()).sum()) == pytest.approx(
        8 * 1024 / 2**20)


def test_memory_and_calibration_are_positive():
    assert timing.peak_rss_mib() >= timing.current_rss_mib() * 0.5 > 0
    assert timing.calibrate_gflops() > 0.01


def test_hardware_names_the_machine_threads_and_versions():
    hw = timing.hardware("a note")
    assert hw["note"] == "a note"
    assert hw["cpu_count"] >= 1
    assert hw["cpu_model"]
    assert {"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "python", "numpy"} <= set(hw)
    assert hw["numpy"] == np.__version__
