"""Dataset generation: settings, reproducibility across workers, resume, append, dask."""

from __future__ import annotations

import json
import threading
import time

import dask
import numpy as np
import pytest

from neuralop_fem.data.generation import (
    BurgersDataConfig,
    DarcyDataConfig,
    generate,
    read_generation_settings,
)
from neuralop_fem.data.generation import executors as _generate_run
from neuralop_fem.data.generation.store import PartialRun, chunk_bounds, partial_dir
from neuralop_fem.data.io import load_dataset
from neuralop_fem.errors import ConfigError, DatasetError

N = 17  # Darcy grid of the tests: 17 x 17 nodes, ~10 ms per solve


def _darcy(tmp_path, name="d.nc", **kw):
    opts = {"n_samples": 5, "resolution": N, "seed": 7, "workers": 0, "chunk_size": 2,
            "progress": False}
    opts.update(kw)
    return generate("darcy", out=tmp_path / name, **opts)


def _arrays(path):
    with load_dataset(path) as ds:
        return {k: np.asarray(ds[k].values) for k in ("a", "u", "seed", "iterations", "residual")}


def _assert_same_samples(p, q):
    a, b = _arrays(p), _arrays(q)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)  # bitwise: same seeds, same solves


def test_chunk_bounds_align_to_global_multiples():
    assert chunk_bounds(0, 5, 2) == [(0, 2), (2, 4), (4, 5)]
    assert chunk_bounds(5, 9, 4) == [(5, 8), (8, 9)]
    assert chunk_bounds(3, 4, 10) == [(3, 4)]


def test_darcy_file_matches_independent_regeneration(tmp_path):
    from solvers.darcy import DarcyFDSolver
    from solvers.grf import NeumannGRF, sample_seeds, threshold

    path = _darcy(tmp_path)
    with load_dataset(path) as ds:
        assert dict(ds.sizes) == {"sample": 5, "x": N, "y": N}
        np.testing.assert_array_equal(ds["sample"].values, np.arange(5))
        assert ds.attrs["source"] == "neuralop_fem generate"
        assert ds.attrs["dataset_seed"] == 7
        assert ds.attrs["contrast_high"] == 12.0
        assert ds.attrs["linear_solver"] == "gmg"
        assert json.loads(ds.attrs["config_json"])["settings"]["resolution"] == N
        seeds = ds["seed"].values
        np.testing.assert_array_equal(seeds, sample_seeds(7, np.arange(5)))
        # Sample 3 from its seed alone, with the solver called directly.
        a3 = threshold(NeumannGRF(N, tau=3.0, alpha=2.0).sample(1, seeds=seeds[3:4]))[0]
        u3, report = DarcyFDSolver().solve_with_report(a3)
        np.testing.assert_array_equal(ds["a"].values[3], a3)
        np.testing.assert_array_equal(ds["u"].values[3], u3)
        assert ds["iterations"].values[3] == report.iterations[0]
        assert (ds["residual"].values <= 1e-10).all()  # the solver's tolerance
        assert (ds["solve_time"].values > 0).all()
    assert not partial_dir(path).exists()


def test_one_and_two_worker_processes_are_bitwise_identical(tmp_path):
    one = _darcy(tmp_path, "one.nc", workers=1)
    two = _darcy(tmp_path, "two.nc", workers=2)
    _assert_same_samples(one, two)


def test_append_equals_a_single_run(tmp_path):
    whole = _darcy(tmp_path, "whole.nc", n_samples=8, chunk_size=3)
    part = _darcy(tmp_path, "part.nc", n_samples=5, chunk_size=3)  # last chunk incomplete
    generate("darcy", n_samples=3, out=part, append=True, workers=0, progress=False)
    _assert_same_samples(whole, part)
    assert read_generation_settings(part)["n_samples"] == 8


def _burgers(tmp_path, name, **kw):
    pytest.importorskip("solvers.burgers")
    opts = {"n_samples": 5, "resolution": 64, "seed": 3, "workers": 0, "chunk_size": 3,
            "progress": False}
    opts.update(kw)
    return generate("burgers", out=tmp_path / name, **opts)


@pytest.mark.parametrize("solver", ["spectral", "fd"])
def test_burgers_append_equals_a_single_run(tmp_path, solver):
    # Both Burgers solvers are batched (FD: dt from the batch max|u0|), so this checks that
    # appending recomputes the incomplete chunk instead of solving it in another batch.
    config = BurgersDataConfig(solver=solver, final_time=0.25)
    whole = _burgers(tmp_path, "whole.nc", n_samples=7, config=config)
    part = _burgers(tmp_path, "part.nc", n_samples=4, config=config)
    generate("burgers", n_samples=3, out=part, append=True, workers=0, progress=False)
    with load_dataset(whole) as a, load_dataset(part) as b:
        for k in ("u0", "u", "seed", "iterations"):
            np.testing.assert_array_equal(a[k].values, b[k].values, err_msg=k)


def test_burgers_trajectory_and_regeneration(tmp_path):
    from solvers.burgers import BurgersSpectralSolver
    from solvers.grf import PeriodicGRF

    config = BurgersDataConfig(final_time=0.5, output_times=(0.1, 0.25))
    path = _burgers(tmp_path, "traj.nc", n_samples=4, config=config)
    with load_dataset(path) as ds:
        assert ds["u_t"].dims == ("sample", "time", "x")
        np.testing.assert_array_equal(ds["time"].values, [0.1, 0.25])
        assert ds.attrs["viscosity"] == pytest.approx(0.1 / (2 * np.pi), rel=1e-15)
        # Samples 3 (chunk [3, 4) alone): regenerate from its seed with the solver directly.
        u0 = PeriodicGRF(64, sigma=25.0, tau=5.0, alpha=2.0).sample(1, seeds=ds["seed"].values[3:])
        traj = BurgersSpectralSolver(final_time=0.5, output_times=(0.1, 0.25, 0.5)).solve(u0)
        np.testing.assert_array_equal(ds["u0"].values[3:], u0)
        np.testing.assert_array_equal(ds["u"].values[3], traj[0, -1])
        np.testing.assert_array_equal(ds["u_t"].values[3], traj[0, :2])


def test_append_refuses_other_settings(tmp_path):
    path = _darcy(tmp_path)
    with pytest.raises(ConfigError, match=r"settings differ.*forcing: 1\.0 \(file\) vs 2\.0"):
        generate("darcy", n_samples=2, out=path, append=True,
                 config=DarcyDataConfig(forcing=2.0), workers=0)


def test_append_needs_a_finished_file(tmp_path):
    with pytest.raises(ConfigError, match="must be a finished dataset file"):
        _darcy(tmp_path, append=True)


def test_resume_after_a_crash_completes_bitwise(tmp_path, monkeypatch):
    reference = _darcy(tmp_path, "ref.nc", n_samples=7)
    real = _generate_run.solve_chunk
    calls = []

    def crash_on_third(*args):
        calls.append(args)
        if len(calls) == 3:
            raise KeyboardInterrupt  # a kill between chunks
        return real(*args)

    monkeypatch.setattr(_generate_run, "solve_chunk", crash_on_third)
    with pytest.raises(KeyboardInterrupt):
        _darcy(tmp_path, "run.nc", n_samples=7)
    partial = PartialRun(partial_dir(tmp_path / "run.nc"))
    assert partial.completed() == {(0, 2), (2, 4)}
    assert not (tmp_path / "run.nc").exists()
    monkeypatch.setattr(_generate_run, "solve_chunk", real)
    calls.clear()
    _darcy(tmp_path, "run.nc", n_samples=7)
    _assert_same_samples(reference, tmp_path / "run.nc")
    assert not partial.directory.exists()


def test_unfinished_run_with_other_settings_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(_generate_run, "solve_chunk", _raise_interrupt)
    with pytest.raises(KeyboardInterrupt):
        _darcy(tmp_path, n_samples=5)
    monkeypatch.undo()
    with pytest.raises(ConfigError, match=r"unfinished run.*dataset_seed: 7 \(unfinished run\) vs 8"
                                          r".*n_samples: 5 \(unfinished run\) vs 6"):
        _darcy(tmp_path, n_samples=6, seed=8)
    _darcy(tmp_path, n_samples=6, seed=8, overwrite=True)  # discards it


def test_the_refusal_the_docs_show_is_what_the_command_prints(tmp_path, monkeypatch, capsys):
    """docs/generating_data.md, Resuming: its example error line, word for word."""
    import re
    from pathlib import Path

    from neuralop_fem.cli import main

    text = (Path(__file__).resolve().parents[2] / "docs" / "generating_data.md").read_text()
    shown = re.search(r"^neuralop-fem generate darcy: error: darcy\.nc has an unfinished run.*$",
                      text, re.M).group(0)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(_generate_run, "solve_chunk", _raise_interrupt)
    with pytest.raises(KeyboardInterrupt):
        generate("darcy", n_samples=5, resolution=N, out="darcy.nc", workers=0, progress=False)
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    args = ["generate", "darcy", "--samples", "5", "--resolution", str(N), "--out", "darcy.nc",
            "--workers", "0", "--tol", "1e-08"]
    assert main(args) == 2
    assert capsys.readouterr().err.strip() == shown


def _raise_interrupt(*args):
    raise KeyboardInterrupt


def test_killed_after_the_final_rename_finishes_cleanup(tmp_path, monkeypatch):
    import neuralop_fem.data.generation.store as store

    monkeypatch.setattr(store.shutil, "rmtree", _raise_interrupt)  # only the final cleanup calls it
    with pytest.raises(KeyboardInterrupt):
        _darcy(tmp_path)
    monkeypatch.undo()
    assert partial_dir(tmp_path / "d.nc").exists()
    _darcy(tmp_path)  # the same command: nothing left but the cleanup
    assert not partial_dir(tmp_path / "d.nc").exists()


def test_finished_file_is_not_overwritten(tmp_path):
    path = _darcy(tmp_path)
    with pytest.raises(ConfigError, match="must not be an existing file"):
        _darcy(tmp_path)
    _darcy(tmp_path, seed=8, overwrite=True)
    assert read_generation_settings(path)["dataset_seed"] == 8


def test_float32_storage_is_the_cast_of_float64(tmp_path):
    f64 = _arrays(_darcy(tmp_path, "f64.nc"))
    f32 = _arrays(_darcy(tmp_path, "f32.nc", dtype="float32"))
    assert f32["u"].dtype == np.float32
    np.testing.assert_array_equal(f32["u"], f64["u"].astype(np.float32))


def test_dask_cluster_gives_the_same_samples(tmp_path):
    distributed = pytest.importorskip("distributed")
    reference = _darcy(tmp_path, "ref.nc")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  protocol="tcp", host="127.0.0.1", scheduler_port=0,
                                  dashboard_address=None) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        path = _darcy(tmp_path, "dask.nc", workers=None, scheduler=cluster.scheduler_address)
    _assert_same_samples(reference, path)


def test_workers_and_scheduler_conflict(tmp_path):
    with pytest.raises(ConfigError, match="`workers` and `scheduler` are mutually exclusive"):
        _darcy(tmp_path, workers=2, scheduler="tcp://127.0.0.1:8786")


@pytest.mark.parametrize(("kw", "match"), [
    ({"n_samples": 0}, r"`n_samples` must be an integer >= 1; got 0"),
    ({"resolution": 2}, r"`resolution` must be an integer >= 3"),
    ({"seed": -1}, r"`seed` must be an integer in \[0, 9223372036854775807\]; got -1"),
    ({"seed": 2**64},
     r"`seed` must be an integer in \[0, 9223372036854775807\]; got 18446744073709551616"),
    ({"chunk_size": 0}, r"`chunk_size` must be an integer >= 1"),
    ({"dtype": "float16"}, r"`dtype` must be 'float64' or 'float32'"),
])
def test_bad_arguments(tmp_path, kw, match):
    with pytest.raises(ConfigError, match=match):
        _darcy(tmp_path, **kw)


def test_config_of_the_wrong_problem(tmp_path):
    with pytest.raises(ConfigError, match="`config` must be a DarcyDataConfig"):
        _darcy(tmp_path, config=BurgersDataConfig())


def test_unknown_linear_solver(tmp_path):
    with pytest.raises(ValueError, match="`linear_solver` must be one of"):
        _darcy(tmp_path, config=DarcyDataConfig(linear_solver="magic"))


@pytest.mark.parametrize(("cls", "kw", "match"), [
    (BurgersDataConfig, {"viscosity": -0.1}, r"`viscosity` must be a finite number > 0; got -0.1"),
    (BurgersDataConfig, {"solver": "weno"},
     r"`solver` must be one of 'spectral', 'fd'; got 'weno'"),
    (BurgersDataConfig, {"output_times": (0.5, 0.2)},
     r"`output_times` must be strictly increasing"),
    (BurgersDataConfig, {"output_times": (0.5, 2.0)}, r"in \[0, final_time=1.0\]"),
    (DarcyDataConfig, {"discretisation": "fvm"}, r"`discretisation` must be one of 'fd', 'fem'"),
    (DarcyDataConfig, {"contrast_low": 0.0}, r"`contrast_low` must be a finite number > 0"),
    (DarcyDataConfig, {"tol": float("nan")}, r"`tol` must be a finite number > 0"),
])
def test_bad_config(cls, kw, match):
    with pytest.raises(ConfigError, match=match):
        cls(**kw)


def test_config_round_trips_through_json():
    config = BurgersDataConfig(viscosity=0.1, output_times=(0.25, 1.0))
    back = BurgersDataConfig.from_dict(json.loads(json.dumps(config.to_dict())))
    assert back == config
    match = r"Unknown BurgersDataConfig key\(s\) \['nu'\]; valid keys: viscosity"
    with pytest.raises(ConfigError, match=match):
        BurgersDataConfig.from_dict({"nu": 0.1})


def test_burgers_resolution_must_be_even():
    with pytest.raises(ConfigError, match="`resolution` must be an even integer >= 8"):
        BurgersDataConfig().check_resolution(9)


def test_read_settings_of_a_foreign_file(tmp_path):
    with pytest.raises(DatasetError, match="no such file"):
        read_generation_settings(tmp_path / "missing.nc")


@pytest.mark.parametrize(
    ("cls", "values", "field"),
    [
        (DarcyDataConfig, {"discretisation": "fem", "averaging": "arithmetic"}, "averaging"),
        (DarcyDataConfig, {"element": "Q1"}, "element"),
        (BurgersDataConfig, {"solver": "fd", "dt": 0.5}, "dt"),
        (BurgersDataConfig, {"cfl": 0.5}, "cfl"),
    ],
)
def test_an_option_of_the_solver_not_chosen_is_an_error(cls, values, field):
    with pytest.raises(ConfigError, match=rf"`{field}` applies to .* only; got {field}="):
        cls(**values)


def test_a_config_holds_the_options_of_its_solver_only():
    fem = DarcyDataConfig(discretisation="fem")
    assert fem.element == "P1"
    assert fem.averaging is None
    assert "averaging" not in fem.to_dict()
    assert fem.to_dict()["element"] == "P1"
    assert DarcyDataConfig.from_dict(fem.to_dict()) == fem
    fd = DarcyDataConfig(averaging="arithmetic")
    with pytest.raises(ConfigError, match="`averaging` applies to discretisation='fd' only"):
        fd.replace(discretisation="fem")  # the explicit FD option does not carry over
    assert DarcyDataConfig().replace(discretisation="fem") == fem
    spectral = BurgersDataConfig()
    assert spectral.cfl is None
    assert spectral.growth == 1.2
    assert BurgersDataConfig(solver="fd").cfl == 0.8


def test_settings_of_earlier_releases_still_load():
    # Files written before configs held only their solver's options stored both solvers'.
    legacy = {**DarcyDataConfig().to_dict(), "element": "P1"}
    assert DarcyDataConfig.from_stored(legacy) == DarcyDataConfig()
    legacy = {**BurgersDataConfig().to_dict(), "cfl": 0.8}
    assert BurgersDataConfig.from_stored(legacy) == BurgersDataConfig()


def test_chunk_reads_of_the_assembly_never_overlap(tmp_path, monkeypatch):
    # np.load parses headers with ast, which CPython 3.11.7 cannot do in two threads at once
    # (a spurious SystemError); dask's threaded scheduler must not read two chunks together.
    real_load, lock = np.load, threading.Lock()
    state = {"inside": 0, "most": 0}

    def slow_load(path):
        with lock:
            state["inside"] += 1
            state["most"] = max(state["most"], state["inside"])
        time.sleep(0.05)  # long enough for another thread to enter if it may
        try:
            return real_load(path)
        finally:
            with lock:
                state["inside"] -= 1

    monkeypatch.setattr(np, "load", slow_load)
    with dask.config.set(scheduler="threads", num_workers=4):
        out = _darcy(tmp_path, n_samples=8, chunk_size=1)
    assert state["most"] == 1
    assert _arrays(out)["a"].shape[0] == 8
