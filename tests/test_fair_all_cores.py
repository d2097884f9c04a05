"""The all-cores verdict is drawn only from trustworthy times, and the break-even: after how many
solves a surrogate faster at equal accuracy repays its training and its data."""

from __future__ import annotations

import json
from importlib import resources

import numpy as np
import pytest
import torch
import xarray as xr

from neuralop_fem.evaluation.break_even import break_even, break_even_sentence, surrogate_cost
from neuralop_fem.evaluation.fair import add_verdict, all_cores_fault, time_surrogate
from neuralop_fem.evaluation.fair_report import ladder_lines
from neuralop_fem.runs import RunRecord
from solvers.ladder import usable_cores

N = 4
WHERE_ALL = "on all cores of this CPU (AMD EPYC, solver in 2 processes, surrogate 2 threads)"


def _ladder(one, every, errors=(1e-2, 1e-3)):
    """Two rungs, N samples: one-thread and all-cores seconds per sample of each rung."""
    ones = np.ones((1, N))
    return {"labels": ["coarse", "fine"], "rel_l2": np.asarray(errors)[:, None] * ones,
            "time": np.asarray(one, float)[:, None] * ones, "time_batch1": None,
            "time_all_cores": np.asarray(every, float)[:, None] * ones, "workers": 2,
            "skipped": [], "stopped": None, "seconds": 1.0, "budget_s": None}


def _timing(one, every):
    return {"time": one, "time_batch1": None, "time_all_cores": every, "threads_all_cores": 2,
            "where_all_cores": WHERE_ALL}


def _verdict(ladder, timing, errors=3e-3, cost=None):
    ds = xr.Dataset(coords={"sample": np.arange(N)})
    add_verdict(ds, ladder, np.full(N, errors), timing, where="on this CPU (AMD EPYC, 1 thread)",
                cost=cost)
    return ds


def test_a_rung_slower_on_all_cores_than_on_one_thread_leaves_the_all_cores_verdict_out():
    """The fault seen on 16 cores: 17-22 ms per sample in 16 processes against 0.24-0.41 ms on
    one thread; the verdict then called the surrogate 50x too fast on all cores."""
    ladder = _ladder(one=[0.36e-3, 4e-3], every=[1.17e-3, 1.5e-3])
    ds = _verdict(ladder, _timing(1e-3, 0.6e-3))
    assert "verdict_all_cores" not in ds.attrs
    assert "fair_all_cores_speedup" not in ds.attrs
    why = ds.attrs["fair_all_cores_left_out"]
    assert why.startswith("No verdict on all cores: the solver's rung coarse took 1.17 ms per "
                          "sample in 2 processes against 0.36 ms on one thread")
    assert "surrogate" not in why.split(".")[0]
    assert why in ladder_lines(ds)
    assert np.allclose(ds["ladder_time_all_cores"].values, [1.17e-3, 1.5e-3])  # kept as data
    assert "verdict" in ds.attrs  # the one-thread verdict stands


def test_a_surrogate_slower_on_all_cores_than_on_one_thread_leaves_it_out_too():
    ds = _verdict(_ladder(one=[1e-3, 4e-3], every=[0.6e-3, 2.2e-3]), _timing(1.2e-3, 77.6e-3))
    assert "verdict_all_cores" not in ds.attrs
    assert ("the surrogate took 77.6 ms per sample on 2 threads against 1.2 ms on one"
            in ds.attrs["fair_all_cores_left_out"])


def test_trustworthy_all_cores_times_give_the_all_cores_verdict():
    ladder, timing = _ladder(one=[1e-3, 4e-3], every=[0.6e-3, 2.2e-3]), _timing(1e-3, 0.6e-3)
    assert all_cores_fault(ladder, timing) is None
    ds = _verdict(ladder, timing)
    assert "fair_all_cores_left_out" not in ds.attrs
    assert ds.attrs["verdict_all_cores"].endswith(f"{WHERE_ALL}.")
    assert ds.attrs["verdict_all_cores"] in ladder_lines(ds)


COST = {"train_s": 3600.0, "data_s": 400.0, "data_samples": 1000, "data_per_sample_s": 0.4}


def test_one_sample_per_call_gets_its_own_break_even():
    ladder = {**_ladder(one=[1e-3, 4e-3], every=[0.6e-3, 2.2e-3]),
              "time_batch1": np.array([[5e-3] * N, [20e-3] * N])}
    timing = {**_timing(9e-3, 5e-3), "time_batch1": 10e-3}  # slower in a batch, faster alone
    ds = _verdict(ladder, timing, cost=COST)
    a = ds.attrs
    assert "verdict_break_even" not in a
    saving = a["fair_batch1_solver_time"] - a["fair_batch1_surrogate_time"]
    assert a["fair_batch1_break_even_solves"] == pytest.approx(4000.0 / saving, rel=1e-12)
    assert "one sample per call" in a["verdict_batch1_break_even"]
    assert a["verdict_batch1_break_even"] in ladder_lines(ds)


def test_the_break_even_is_the_cost_over_the_time_saved_per_solve():
    """Rungs at 1e-2 in 1 ms and 1e-3 in 4 ms, the surrogate at 3e-3 in 1 ms: the solver's
    time at equal accuracy is interpolated between them, the saving its excess over 1 ms."""
    ladder = _ladder(one=[1e-3, 4e-3], every=[0.6e-3, 2.2e-3])
    ds = _verdict(ladder, _timing(1e-3, 0.6e-3), cost=COST)
    a = ds.attrs
    saving = a["fair_solver_time"] - a["fair_surrogate_time"]
    assert a["fair_status"] == "interpolated"
    assert saving > 0
    assert a["fair_break_even_solves"] == pytest.approx(4000.0 / saving, rel=1e-12)
    assert a["fair_break_even_bound"] == ""
    assert a["fair_cost_train_s"] == 3600.0
    assert a["fair_cost_data_samples"] == 1000
    text = a["verdict_break_even"]
    assert text.startswith("Break-even: training took 1 h and generating its 1000 training and "
                           "validation samples about 6.7 min (0.4 s each, as recorded in the "
                           "data file); saving ")
    assert text.endswith(f"the surrogate repays that after about {4000.0 / saving:.2g} solves.")
    assert text in ladder_lines(ds)
    every = a["fair_all_cores_solver_time"] - a["fair_all_cores_surrogate_time"]
    assert a["fair_all_cores_break_even_solves"] == pytest.approx(4000.0 / every, rel=1e-12)
    assert a["verdict_all_cores_break_even"] in ladder_lines(ds)


def test_no_break_even_where_the_surrogate_is_not_faster_or_more_accurate_than_every_rung():
    ds = _verdict(_ladder(one=[1e-3, 4e-3], every=[0.6e-3, 2.2e-3]), _timing(9e-3, 5e-3),
                  cost=COST)
    assert np.isnan(ds.attrs["fair_break_even_solves"])
    assert "verdict_break_even" not in ds.attrs
    assert break_even({"solver_time": np.nan, "surrogate_time": 1e-3,
                       "status": "more accurate than every rung"}, COST) is None


def test_a_bound_on_the_solver_time_bounds_the_break_even_the_other_way():
    fast = {"solver_time": 1e-3, "surrogate_time": 0.5e-3}
    assert break_even({**fast, "status": "at most the cheapest rung"}, COST) == (8e6, "at least")
    assert break_even({**fast, "status": "at least the finest rung measured"},
                      COST) == (8e6, "at most")
    text = break_even_sentence({**fast, "status": "at most the cheapest rung"}, COST, where="x")
    assert text.endswith("repays that after at least 8e+06 solves.")


def _zoo_run() -> dict:
    path = resources.files("neuralop_fem.zoo") / "entries" / "burgers-fno" / "run.json"
    return json.loads(path.read_text())


def test_the_cost_comes_from_the_run_record_and_a_data_file_generated_like_its_own():
    info = _zoo_run()
    record = json.loads(info["data"]["config_json"])
    record["settings"]["dataset_seed"] = 7  # other draws, the same cost per sample
    times = np.array([0.2, 0.3, np.nan, 0.25])  # an unrecorded time is left out
    ds = xr.Dataset({"solve_time": ("sample", times)},
                    attrs={"config_json": json.dumps(record)})
    cost = surrogate_cost(RunRecord.from_dict(info), ds)
    n = len(info["splits"]["train"]) + len(info["splits"]["val"])
    assert cost["train_s"] == info["wall_time_s"]
    assert cost["data_samples"] == n
    assert cost["data_per_sample_s"] == pytest.approx(0.25, rel=1e-12)
    assert cost["data_s"] == pytest.approx(0.25 * n, rel=1e-12)
    record["settings"]["viscosity"] = 0.1  # other physics: its times say nothing of the run's
    other = surrogate_cost(RunRecord.from_dict(info),
                           ds.assign_attrs(config_json=json.dumps(record)))
    assert np.isnan(other["data_s"])
    assert other["train_s"] == info["wall_time_s"]
    text = break_even_sentence({"solver_time": 2e-3, "surrogate_time": 1e-3,
                                "status": "a rung"}, other, where="on this CPU")
    assert "is not counted (the data file compared on was not generated with the run's " in text
    assert text.endswith(f"after about {info['wall_time_s'] / 1e-3:.2g} solves.")


class _CountingSurrogate:
    """Records the batch size and torch's thread count of every solve."""

    def __init__(self):
        self.calls = []

    def solve(self, inputs):
        self.calls.append((len(inputs), torch.get_num_threads()))
        return inputs


def test_the_surrogate_on_all_cores_runs_warm_on_at_most_one_thread_per_core():
    """More threads than cores only share them; a thread pool starts its threads in its first
    parallel region, so the untimed warm-up solves the whole batch there."""
    sur, inputs = _CountingSurrogate(), np.zeros((6, 8))
    before = torch.get_num_threads()
    timing = time_surrogate(sur, inputs, threads=usable_cores() + 3, batch_one=False)
    cores = usable_cores()
    assert timing["threads"] == cores
    assert sur.calls == [(6, cores), (6, cores)]  # warm-up and timed call, whole batch
    assert torch.get_num_threads() == before  # restored
    one = _CountingSurrogate()
    time_surrogate(one, inputs, threads=1, batch_one=False)
    assert one.calls == [(1, 1), (6, 1)]  # one thread: one sample warms it
