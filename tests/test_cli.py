"""The neuralop-fem command line: generate, bad options, kill-and-resume."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from neuralop_fem.cli import COMMANDS, main
from neuralop_fem.data.io import load_dataset

SMALL = ["--resolution", "17", "--seed", "5", "--chunk-size", "2", "--workers", "0"]


def _gen(tmp_path, *extra, name="d.nc", samples="5"):
    return main(["generate", "darcy", "--samples", samples, "--out", str(tmp_path / name),
                 *SMALL, *extra])


def test_help_lists_the_commands(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in COMMANDS:
        assert name.replace("_", "-") in out


def test_generate_help_shows_physics_options(capsys):
    assert main(["generate", "burgers", "--help"]) == 0
    out = capsys.readouterr().out
    for option in ("--viscosity", "--final-time", "--output-times", "--grf-sigma", "--solver",
                   "--append", "--scheduler", "--chunk-size", "--dtype"):
        assert option in out


def test_generate_darcy_maps_options_onto_the_config(tmp_path):
    assert _gen(tmp_path, "--forcing", "2.0", "--contrast-high", "10", "--dtype", "float32") == 0
    with load_dataset(tmp_path / "d.nc") as ds:
        assert ds.sizes["sample"] == 5
        assert ds.sizes["x"] == 17
        assert ds.attrs["forcing"] == 2.0
        assert ds.attrs["contrast_high"] == 10.0
        assert ds["a"].dtype == np.float32
        assert set(np.unique(ds["a"].values)) <= {3.0, 10.0}


def test_generate_is_quiet_without_v(tmp_path):
    """Without ``-v`` (and off a terminal, so no bar) ``generate`` writes one line on stdout
    and nothing on stderr; ``-v`` adds the progress as log lines."""
    quiet = subprocess.run(_cli("darcy", "--samples", "4", "--out", str(tmp_path / "q.nc"),
                                *SMALL), capture_output=True, text=True, timeout=300)
    assert quiet.returncode == 0, quiet.stderr
    assert (quiet.stdout, quiet.stderr) == (f"wrote {tmp_path / 'q.nc'}\n", "")
    loud = subprocess.run(_cli("darcy", "--samples", "4", "--out", str(tmp_path / "v.nc"),
                               *SMALL, "-v"), capture_output=True, text=True, timeout=300)
    assert loud.returncode == 0, loud.stderr
    assert "INFO: 4/4 samples done" in loud.stderr


def test_generate_burgers_with_trajectory(tmp_path):
    pytest.importorskip("solvers.burgers")
    out = tmp_path / "b.nc"
    assert main(["generate", "burgers", "--samples", "3", "--resolution", "32", "--out", str(out),
                 "--workers", "0", "--final-time", "0.2", "--output-times", "0.1", "0.2",
                 "--viscosity", "0.1"]) == 0
    with load_dataset(out) as ds:
        assert ds["u_t"].shape == (3, 2, 32)
        assert ds.attrs["viscosity"] == 0.1


def test_append_takes_the_other_options_from_the_file(tmp_path):
    assert _gen(tmp_path, name="whole.nc", samples="7") == 0
    assert _gen(tmp_path, name="part.nc", samples="4") == 0
    assert main(["generate", "darcy", "--append", "3", "--out", str(tmp_path / "part.nc"),
                 "--workers", "0"]) == 0
    with load_dataset(tmp_path / "whole.nc") as a, load_dataset(tmp_path / "part.nc") as b:
        for k in ("a", "u", "seed"):
            np.testing.assert_array_equal(a[k].values, b[k].values)


def test_workers_with_scheduler_is_refused(tmp_path, capsys):
    assert _gen(tmp_path, "--scheduler", "tcp://127.0.0.1:1") == 2
    err = capsys.readouterr().err.strip()
    assert "--workers and --scheduler are mutually exclusive" in err
    assert "\n" not in err


@pytest.mark.parametrize("samples", ["0", "-3"])
def test_non_positive_samples(tmp_path, capsys, samples):
    assert _gen(tmp_path, samples=samples) == 2
    err = capsys.readouterr().err
    assert f"argument --samples: must be an integer >= 1; got '{samples}'" in err


def test_resolution_the_solver_cannot_use(tmp_path, capsys):
    assert main(["generate", "burgers", "--samples", "2", "--resolution", "33",
                 "--out", str(tmp_path / "b.nc")]) == 2
    assert "--resolution must be an even integer >= 8" in capsys.readouterr().err


@pytest.mark.parametrize(("args", "match"), [
    (["burgers", "--solver", "weno"], "--solver must be one of 'spectral', 'fd'; got 'weno'"),
    (["darcy", "--discretisation", "fvm"], "--discretisation must be one of 'fd', 'fem'"),
    (["darcy", "--linear-solver", "magic"], "--linear-solver must be one of"),
])
def test_unknown_solver_names(tmp_path, capsys, args, match):
    code = main(["generate", *args, "--samples", "2", "--out", str(tmp_path / "x.nc"),
                 "--workers", "0"])
    assert code == 2
    assert match in capsys.readouterr().err


def test_existing_file_is_refused_and_debug_shows_the_traceback(tmp_path, capsys):
    from neuralop_fem.errors import ConfigError

    assert _gen(tmp_path) == 0
    assert _gen(tmp_path) == 2
    assert "must not be an existing file" in capsys.readouterr().err
    with pytest.raises(ConfigError):
        main(["--debug", "generate", "darcy", "--samples", "5", "--out", str(tmp_path / "d.nc"),
              *SMALL])


def _partial_chunks(out):
    partial = out.with_name(out.name + ".partial")
    return sorted(partial.glob("chunk-*.npz")) if partial.is_dir() else []


def _cli(*args):
    return [sys.executable, "-m", "neuralop_fem.cli", "generate", *args]


def test_parameters_differing_from_a_partial_run(tmp_path, capsys):
    out = tmp_path / "d.nc"
    partial = out.with_name("d.nc.partial")
    partial.mkdir()
    from neuralop_fem.data.generation.store import PartialRun

    # A manifest as left by `--samples 5 --seed 5 ...` when it was killed.
    assert _gen(tmp_path, name="ref.nc") == 0
    import json

    with load_dataset(tmp_path / "ref.nc") as ds:
        stored = json.loads(ds.attrs["config_json"])
    PartialRun(partial).create({
        "format": 1, "settings": stored["settings"], "chunk_size": 2, "start": 0, "stop": 5,
        "append": False, "solver_class": stored["solver_class"],
        "solver_config": stored["solver_config"], "neuralop_fem_version": "0.1.0",
    })
    assert _gen(tmp_path, "--tol", "1e-8") == 2
    err = capsys.readouterr().err
    assert "unfinished run" in err
    assert "tol: 1e-10 (unfinished run) vs 1e-08 (this call)" in err


def test_sigkill_and_resume_is_bitwise_identical(tmp_path):
    _kill_and_resume(tmp_path, samples=24)


def _kill_and_resume(tmp_path, *, samples):
    args = ["darcy", "--samples", str(samples), "--resolution", "33", "--seed", "9",
            "--chunk-size", "2", "--workers", "1"]
    ref, out = tmp_path / "ref.nc", tmp_path / "run.nc"
    assert main(["generate", *args[:-2], "--workers", "0", "--out", str(ref)]) == 0
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.Popen(_cli(*args, "--out", str(out)), env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while len(_partial_chunks(out)) < 2 and time.monotonic() < deadline:
            assert proc.poll() is None, "the run finished before it could be killed"
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)  # the CLI and its worker process
    finally:
        proc.wait(timeout=30)
    done = len(_partial_chunks(out))
    assert 2 <= done < samples // 2
    assert not out.exists()
    resumed = subprocess.run(_cli(*args, "--out", str(out), "-v"), env=env,
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{done} of {samples // 2} chunks already done" in resumed.stderr
    with load_dataset(ref) as a, load_dataset(out) as b:
        for k in ("a", "u", "seed", "iterations", "residual"):
            np.testing.assert_array_equal(a[k].values, b[k].values, err_msg=k)
    assert not out.with_name("run.nc.partial").exists()
