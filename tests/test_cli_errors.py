"""Every user error of the command line, the way a user meets it: the real ``neuralop-fem``
command in a subprocess prints exactly one line on stderr (no traceback), exits with status 2,
and the line names the offending option or file.

The cases run concurrently (a few at a time) once per module; each parametrised test then
checks one of them. Files shared by the cases (tiny datasets, a tiny run directory, damaged
copies, legacy ``.mat`` files) are made once, at module scope.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np
import pytest
import scipy.io

from neuralop_fem.data import generate
from neuralop_fem.zoo import available, planned_missing

from .helpers import corrupt_chunk

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Case:
    """One command line (``{name}`` fields filled from :func:`paths`) and what its message names."""

    id: str
    args: tuple[str, ...]
    names: tuple[str, ...] = ()
    status: int | None = 2  # None: any non-zero status


def _case(id_: str, args: str, *names: str, status: int | None = 2) -> Case:
    return Case(id_, tuple(args.split()), names, status)


GEN = "generate darcy --samples 2 --resolution 9 --workers 0"
TRAIN = "train --data {b} --preset burgers-galerkin --epochs 1"
EVAL = "evaluate {run} --data {b}"
CMP = "compare {run} --data {b}"
BIG = str(2**64)

CASES = [
    # generate
    _case("gen-out-is-a-directory", f"{GEN} --out {{tmp}}", "--out", "{tmp}", "directory"),
    _case("gen-out-parent-missing", f"{GEN} --out {{tmp}}/missing/x.nc", "--out",
          "{tmp}/missing"),
    _case("gen-out-parent-is-a-file", f"{GEN} --out {{file}}/x.nc", "--out", "not a directory"),
    _case("gen-out-exists", f"{GEN} --out {{d}}", "{d}", "must not be an existing file"),
    _case("gen-samples-0", "generate darcy --samples 0 --out {tmp}/g.nc", "--samples", "'0'"),
    _case("gen-seed-2**64", f"{GEN} --seed {BIG} --out {{tmp}}/g.nc", "--seed", "64 bits"),
    _case("gen-resolution-overflows", f"{GEN} --resolution {BIG} --out {{tmp}}/g.nc",
          "--resolution"),
    _case("gen-maxiter-overflows", f"{GEN} --maxiter {BIG} --out {{tmp}}/g.nc", "--maxiter"),
    _case("gen-workers-negative", f"{GEN} --workers -1 --out {{tmp}}/g.nc", "--workers"),
    _case("gen-chunk-size-0", f"{GEN} --chunk-size 0 --out {{tmp}}/g.nc", "--chunk-size"),
    _case("gen-forcing-nan", f"{GEN} --forcing nan --out {{tmp}}/g.nc", "forcing", "nan"),
    _case("gen-option-of-the-other-problem", f"{GEN} --viscosity 0.1 --out {{tmp}}/g.nc",
          "generate", "unrecognized arguments", "--viscosity"),
    # info
    _case("info-missing-file", "info {tmp}/missing.nc", "FILE.nc", "{tmp}/missing.nc"),
    _case("info-directory", "info {tmp}", "{tmp}", "directory"),
    _case("info-not-netcdf", "info {junk}", "{junk}", "netCDF"),
    _case("info-truncated", "info {truncated}", "{truncated}", "truncated"),
    _case("info-corrupted-chunk", "info {corrupt}", "{corrupt}", "`u0`"),
    _case("info-flags-after-the-command", "info {tmp}/missing.nc -v", "{tmp}/missing.nc"),
    # import-mat
    _case("mat-truncated", "import-mat {mat_truncated} --problem burgers --out {tmp}/m.nc",
          "{mat_truncated}", "truncated"),  # not "must hold the keys" for a cut-off file
    _case("mat-random-bytes", "import-mat {mat_random} --problem burgers --out {tmp}/m.nc",
          "{mat_random}", "MATLAB"),
    _case("mat-empty", "import-mat {mat_empty} --problem darcy --out {tmp}/m.nc", "{mat_empty}"),
    _case("mat-hdf5-without-the-keys", "import-mat {mat_h5_keys} --problem darcy "
          "--out {tmp}/m.nc", "{mat_h5_keys}", "'coeff', 'sol'"),
    _case("mat-hdf5-truncated", "import-mat {mat_h5_truncated} --problem burgers "
          "--out {tmp}/m.nc", "{mat_h5_truncated}", "v7.3"),
    _case("mat-wrong-shapes", "import-mat {mat_shapes} --problem darcy --out {tmp}/m.nc",
          "{mat_shapes}", "(N, n, n)"),
    _case("mat-all-nan", "import-mat {mat_all_nan} --problem burgers --out {tmp}/m.nc",
          "{mat_all_nan}", "`a`", "NaN", "index (0, 0)"),
    _case("mat-one-nan", "import-mat {mat_one_nan} --problem burgers --out {tmp}/m.nc",
          "{mat_one_nan}", "`u`", "1 of 64", "index (2, 5)"),
    _case("mat-infinity", "import-mat {mat_inf} --problem burgers --out {tmp}/m.nc",
          "{mat_inf}", "`u`", "finite"),
    _case("mat-missing-file", "import-mat {tmp}/none.mat --problem darcy --out {tmp}/m.nc",
          "FILE.mat", "{tmp}/none.mat"),
    _case("mat-out-exists", "import-mat {mat_darcy} --problem darcy --out {d}", "--out",
          "--overwrite"),
    _case("mat-out-is-a-directory", "import-mat {mat_darcy} --problem darcy --out {tmp}",
          "--out", "directory"),
    _case("mat-viscosity-for-darcy", "import-mat {mat_darcy} --problem darcy --viscosity 0.1 "
          "--out {tmp}/m.nc", "--viscosity", "--problem burgers"),
    _case("mat-viscosity-negative", "import-mat {mat_burgers} --problem burgers --viscosity -1 "
          "--out {tmp}/m.nc", "--viscosity", "'-1'"),
    # train
    _case("train-out-is-a-file", f"{TRAIN} --out {{file}}", "--out", "{file}"),
    _case("train-out-parent-missing", f"{TRAIN} --out {{tmp}}/missing/run", "--out",
          "{tmp}/missing"),
    _case("train-data-missing", "train --data {tmp}/none.nc --preset burgers-galerkin "
          "--out {tmp}/r", "--data", "{tmp}/none.nc"),
    _case("train-data-not-netcdf", "train --data {junk} --preset burgers-galerkin "
          "--out {tmp}/r", "{junk}"),
    _case("train-seed-2**64", f"{TRAIN} --seed {BIG} --out {{tmp}}/r", "--seed", "64 bits"),
    _case("train-set-seed-2**64", f"{TRAIN} --set seed={BIG} --out {{tmp}}/r",
          "argument --set: key `seed`", "64 bits"),
    _case("train-epochs-0", f"{TRAIN} --epochs 0 --out {{tmp}}/r", "--epochs"),
    _case("train-lr-nan", f"{TRAIN} --lr nan --out {{tmp}}/r", "--lr"),
    _case("train-batch-size-negative", f"{TRAIN} --batch-size -4 --out {{tmp}}/r",
          "--batch-size"),
    _case("train-device-unknown", f"{TRAIN} --device tpu --out {{tmp}}/r", "--device", "'tpu'"),
    _case("train-n-train-exceeds-the-file", f"{TRAIN} --n-train 100 --out {{tmp}}/r",
          "argument --n-train", "got 100", "the 16 samples of {b}"),
    _case("train-split-exceeds-the-file", f"{TRAIN} --n-train 10 --n-val 4 --n-test 4 "
          "--out {tmp}/r", "argument --n-train/--n-val/--n-test", "at most 16", "= 18"),
    _case("train-too-few-samples-to-split", "train --data {b2} --preset burgers-galerkin "
          "--out {tmp}/r", "at least 3 samples", "got 2 in {b2}"),
    _case("train-modes-too-many-for-the-grid", f"{TRAIN} --n-train 8 --n-val 4 --n-test 4 "
          "--resolution 16 --out {tmp}/r", "n >= 30", "n=16", "`--set modes=9`"),
    # a file of another problem: each command names --data, what it must be and what it is
    _case("train-data-of-another-problem", "train --data {d} --preset burgers-galerkin "
          "--out {tmp}/r", "--data must be a burgers dataset", "got a darcy dataset", "{d}"),
    _case("eval-data-of-another-problem", "evaluate {run} --data {d}",
          "--data must be a burgers dataset", "got a darcy dataset", "{d}"),
    _case("cmp-data-of-another-problem", "compare {run} --data {d} --out {tmp}/c",
          "--data must be a burgers dataset", "got a darcy dataset", "{d}"),
    _case("eval-batch-size-negative", f"{EVAL} --batch-size -3", "--batch-size", "'-3'"),
    _case("eval-batch-size-0", f"{EVAL} --batch-size 0", "--batch-size", "'0'"),
    _case("eval-indices-past-the-end", f"{EVAL} --indices 0:1000", "--indices", "'0:1000'",
          "16 samples"),
    _case("eval-indices-not-a-range", f"{EVAL} --indices 3:x", "--indices", "'3:x'"),
    _case("eval-out-in-a-missing-directory", f"{EVAL} --out {{tmp}}/missing/e.csv", "--out",
          "{tmp}/missing"),
    _case("eval-out-is-a-directory", f"{EVAL} --out {{tmp}}", "--out", "directory"),
    _case("eval-out-ends-in-json", f"{EVAL} --out {{tmp}}/e.json", "--out", ".json"),
    _case("eval-run-missing", "evaluate {tmp}/norun --data {b}", "RUN_DIR", "{tmp}/norun"),
    # A damaged run.json: the run readers (training/checkpoint.py) name the file once they
    # raise a NeuralopFemError for it; until then it is a one-line internal error (status 1).
    _case("eval-run-damaged", "evaluate {run_damaged} --data {b}", status=None),
    _case("eval-data-corrupted-chunk", "evaluate {run} --data {corrupt} --indices all",
          "{corrupt}", "`u0`"),
    _case("eval-device-unknown", f"{EVAL} --device gpu9", "--device"),
    _case("eval-resolution-0", f"{EVAL} --resolution 0", "--resolution"),
    _case("cmp-out-is-a-file", f"{CMP} --out {{file}}", "--out", "{file}"),
    _case("cmp-out-parent-missing", f"{CMP} --out {{tmp}}/missing/report", "--out",
          "{tmp}/missing"),
    _case("cmp-max-samples-negative", f"{CMP} --out {{tmp}}/c --max-samples -1",
          "--max-samples", "'-1'"),
    _case("cmp-max-samples-0", f"{CMP} --out {{tmp}}/c --max-samples 0", "--max-samples"),
    _case("cmp-indices-past-the-end", f"{CMP} --out {{tmp}}/c --indices 4:99", "--indices",
          "16 samples"),
    _case("cmp-data-corrupted-chunk", "compare {run} --data {corrupt} --out {tmp}/c "
          "--indices all --max-samples 2", "{corrupt}", "`u0`"),
    _case("cmp-snap-forward-run", f"{CMP} --out {{tmp}}/c --snap-warm-start",
          "--snap-warm-start", "inverse runs only"),
    _case("cmp-run-missing", "compare {tmp}/norun --data {b} --out {tmp}/c", "RUN_DIR"),
    _case("cmp-linear-solver-unknown", f"{CMP} --out {{tmp}}/c --linear-solver magic",
          "--linear-solver", "'magic'"),
    # demo
    _case("demo-out-is-a-file", "demo --quick --out {file}", "--out", "{file}"),
    _case("demo-out-parent-missing", "demo --quick --out {tmp}/missing/demo", "--out"),
    _case("demo-seed-2**63", f"demo --quick --seed {2**63} --out {{tmp}}/demo", "--seed"),
    _case("demo-out-not-empty", "demo --quick --out {run}", "--out", "{run}", "--overwrite"),
    _case("demo-device-unknown", "demo --quick --device gpu --out {tmp}/demo", "--device"),
    # nested subcommands: the code's errors are named like argparse's (`zoo show: error:`)
    _case("zoo-show-unknown", "zoo show nope", "unknown zoo model", "'nope'"),
    _case("zoo-show-unknown-option", "zoo show burgers-fno --nope", "unrecognized arguments",
          "--nope"),
    _case("check-data-not-netcdf", "reproduce check-data {junk}", "{junk}", "netCDF"),
    _case("check-data-results-missing", "reproduce check-data {b} --results {tmp}/none.json",
          "--results", "{tmp}/none.json", "no such file"),
    # the top level
    _case("unknown-command", "frobnicate", "COMMAND", "'frobnicate'"),
]


def _zoo_name_cases() -> list[Case]:
    """A zoo model's name where a run directory is expected (``zoo:`` left off): every
    command taking RUN_DIR suggests ``zoo:NAME``; for a planned model this version does not
    ship, it says so instead."""
    shipped, pending = available(), planned_missing()
    cases = []
    if shipped:
        name = shipped[0]
        hint = f"which does not exist; did you mean zoo:{name}?"
        cases += [
            _case("eval-zoo-name-without-prefix", f"evaluate {name} --data {{b}}", "RUN_DIR",
                  f"'{name}'", hint),
            _case("cmp-zoo-name-without-prefix", f"compare {name} --data {{b}} --out {{tmp}}/c",
                  "RUN_DIR", hint),
            _case("zoo-add-zoo-name-without-prefix", f"zoo add {name} --name x --data {{b}}",
                  "RUN_DIR", hint),
        ]
    if pending:
        name = pending[0]
        cases.append(_case("eval-planned-zoo-name-without-prefix",
                           f"evaluate {name} --data {{b}}", "RUN_DIR", f"(zoo:{name})",
                           "is planned but not in this version"))
    return cases


CASES += _zoo_name_cases()


def _mat_files(tmp: Path) -> dict[str, Path]:
    rng = np.random.default_rng(0)
    mats = {}

    def v5(name: str, arrays: dict) -> None:
        mats[name] = tmp / f"{name}.mat"
        scipy.io.savemat(mats[name], arrays)

    v5("mat_burgers", {"a": rng.standard_normal((4, 16)), "u": rng.standard_normal((4, 16))})
    v5("mat_darcy", {"coeff": rng.random((3, 9, 9)) + 3, "sol": rng.random((3, 9, 9))})
    v5("mat_shapes", {"coeff": rng.random((3, 9, 9)) + 3, "sol": rng.random((3, 9, 8))})
    v5("mat_all_nan", {"a": np.full((4, 16), np.nan), "u": np.full((4, 16), np.nan)})
    u = rng.standard_normal((4, 16))
    u[2, 5] = np.nan
    v5("mat_one_nan", {"a": rng.standard_normal((4, 16)), "u": u})
    v5("mat_inf", {"a": rng.standard_normal((4, 16)), "u": np.where(u == u, u, np.inf)})
    v5("mat_negative", {"coeff": rng.random((3, 9, 9)) - 0.5, "sol": rng.random((3, 9, 9))})
    data = mats["mat_burgers"].read_bytes()
    mats["mat_truncated"] = tmp / "mat_truncated.mat"
    mats["mat_truncated"].write_bytes(data[: len(data) // 3])
    mats["mat_random"] = tmp / "mat_random.mat"
    mats["mat_random"].write_bytes(rng.bytes(4096))
    mats["mat_empty"] = tmp / "mat_empty.mat"
    mats["mat_empty"].write_bytes(b"")
    mats["mat_h5_keys"] = tmp / "mat_h5_keys.mat"
    with h5py.File(mats["mat_h5_keys"], "w") as f:
        f["x"] = np.zeros((3, 3))
    mats["mat_h5_truncated"] = tmp / "mat_h5_truncated.mat"
    with h5py.File(mats["mat_h5_truncated"], "w", userblock_size=512) as f:
        f["a"], f["u"] = rng.random((16, 4)), rng.random((16, 4))
    data = mats["mat_h5_truncated"].read_bytes()
    mats["mat_h5_truncated"].write_bytes(data[: 2 * len(data) // 3])
    return mats


def _train(data: Path, run: Path) -> Path:
    """A finished one-epoch run of a tiny Galerkin Transformer (splits 8 / 4 / 4)."""
    from neuralop_fem.models import PRESETS
    from neuralop_fem.training.config import TrainConfig
    from neuralop_fem.training.trainer import Trainer

    model = PRESETS["burgers-galerkin"].replace(d_model=8, num_layers=1, d_ff=8, freq_dim=4,
                                                modes=2, decoder_ff=4)
    config = TrainConfig(task="burgers", epochs=1, batch_size=4, eval_batch_size=4, n_train=8,
                         n_val=4, n_test=4, device="cpu", resolution=32)
    with Trainer(run, data, model_config=model, config=config, preset="burgers-galerkin") as t:
        t.fit()
    return run


def make_paths(tmp: Path) -> dict[str, str]:
    """The files every case refers to, by placeholder name, made in ``tmp``."""
    files = {"tmp": tmp, "b": tmp / "b.nc", "file": tmp / "file.txt"}
    generate("burgers", n_samples=16, resolution=32, seed=1, out=files["b"], workers=0,
             progress=False)
    files["b2"] = generate("burgers", n_samples=2, resolution=16, seed=1, out=tmp / "b2.nc",
                           workers=0, progress=False)
    files["run"] = run = _train(files["b"], tmp / "run")
    files["file"].write_text("not a directory\n")
    files["d"] = generate("darcy", n_samples=9, resolution=9, seed=1, out=tmp / "d.nc",
                          workers=0, progress=False)
    files["corrupt"] = tmp / "corrupt.nc"
    corrupt_chunk(files["b"], files["corrupt"], "u0")
    data = files["b"].read_bytes()
    files["truncated"] = tmp / "truncated.nc"
    files["truncated"].write_bytes(data[: len(data) // 2])
    files["junk"] = tmp / "junk.nc"
    files["junk"].write_bytes(np.random.default_rng(1).bytes(2048))
    files["run_damaged"] = tmp / "run_damaged"
    shutil.copytree(run, files["run_damaged"])
    (files["run_damaged"] / "run.json").write_text('{"format": "neuralop_fem.tr')
    files.update(_mat_files(tmp))
    return {k: os.fspath(v) for k, v in files.items()}


@pytest.fixture(scope="module")
def paths(tmp_path_factory) -> dict[str, str]:
    return make_paths(tmp_path_factory.mktemp("cli_errors"))


def run_cli(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    """``python -m neuralop_fem.cli ARGS`` with this checkout's code."""
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "neuralop_fem.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, **kwargs)


@pytest.fixture(scope="module")
def results(paths) -> dict[str, subprocess.CompletedProcess]:
    """Every case's completed process (2 at a time: most exit in well under a second)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {c.id: pool.submit(run_cli, [a.format(**paths) for a in c.args])
                   for c in CASES}
    return {k: f.result() for k, f in futures.items()}


def _prog(args: tuple[str, ...]) -> str:
    """How argparse names the subcommand ``args`` go through (``neuralop-fem generate
    darcy``): every error of that call, argparse's or the code's, starts with it."""
    from neuralop_fem.cli import build_parser

    words = [a for a in args if not a.startswith("-")]
    parser = build_parser(only=words[0])
    for word in words:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs or word not in subs[0].choices:
            break
        parser = subs[0].choices[word]
    return parser.prog


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_user_error_is_one_line(case, results, paths):
    proc = results[case.id]
    err = proc.stderr
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"{_prog(case.args)}: "), err  # the subcommand typed
    if case.status is None:  # a user error, or (until run.json is checked) an internal one
        assert proc.returncode != 0, err
        assert "error: " in lines[0], err
    else:
        assert proc.returncode == case.status, err
        assert ": error: " in lines[0], err
    for name in case.names:
        assert name.format(**paths) in lines[0], f"{name.format(**paths)!r} not in {err!r}"


def test_the_case_ids_are_unique():
    assert len({c.id for c in CASES}) == len(CASES)


def test_debug_after_the_command_shows_the_traceback(paths):
    proc = run_cli(["info", paths["junk"], "--debug"])
    assert proc.returncode != 0
    assert "Traceback" in proc.stderr
    assert "DatasetError" in proc.stderr
