"""``neuralop-fem reproduce`` as a reader meets it: rows only of finished runs on their own data,
user errors as one line on stderr (the benchmark scripts share
``reproduce.script_runner.run_script``), and ``benchmarks/reproduce_paper.py``, the earlier
command line, still taking its options."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from neuralop_fem.data import generate
from neuralop_fem.errors import ConfigError, RunDirectoryError
from neuralop_fem.reproduce.record import check_recordable
from neuralop_fem.reproduce.rows import (
    dataset_record,
    row_key,
    run_scale,
    run_tag,
    scale_shortfalls,
)
from neuralop_fem.runs import RunDir, RunRecord
from tests._surrogate_fixtures import tiny_burgers_run

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "neuralop_fem.cli", "reproduce", *args],
                          capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from neuralop_fem.data import BurgersDataConfig

    tmp = tmp_path_factory.mktemp("reproduce")
    out = {"data": generate("burgers", n_samples=16, resolution=32, seed=1, out=tmp / "b.nc",
                            workers=0, progress=False)}
    out["same"] = generate("burgers", n_samples=16, resolution=32, seed=1,
                           out=tmp / "b_again.nc", workers=0, progress=False)
    out["viscous"] = generate("burgers", n_samples=16, resolution=32, seed=1,
                              config=BurgersDataConfig(viscosity=0.1), out=tmp / "b_nu.nc",
                              workers=0, progress=False)
    out["fewer"] = generate("burgers", n_samples=12, resolution=32, seed=1,
                            out=tmp / "b_12.nc", workers=0, progress=False)
    out["darcy"] = generate("darcy", n_samples=4, resolution=9, seed=1, out=tmp / "d.nc",
                            workers=0, progress=False)
    out["finished"] = tiny_burgers_run(out["data"], tmp / "finished")
    out["unfinished"] = tiny_burgers_run(out["data"], tmp / "unfinished", epochs=3, stop_after=1)
    return out


def _info(run: Path) -> RunRecord:
    return RunDir(run).read()


def test_a_finished_run_on_regenerated_data_is_recordable(files: dict[str, Path]) -> None:
    # the same seed and settings at another path: the row's data is the run's data
    same = dataset_record(files["same"])
    assert same["checksum"] == dataset_record(files["data"])["checksum"]
    check_recordable(_info(files["finished"]), files["finished"], same)


def test_an_unfinished_run_is_refused(files: dict[str, Path]) -> None:
    with pytest.raises(RunDirectoryError, match=r"has not finished .*1 of 3 epochs"):
        check_recordable(_info(files["unfinished"]), files["unfinished"],
                         dataset_record(files["data"]))


@pytest.mark.parametrize(("name", "match"), [
    ("viscous", r"differs in viscosity: 0.1 \(trained on 0.0159"),
    ("fewer", r"differs in n_samples: 12 \(trained on 16\)"),
    ("darcy", r"a darcy dataset, but the run .* was trained on burgers data"),
])
def test_other_data_than_the_runs_is_refused(files: dict[str, Path], name: str,
                                             match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        check_recordable(_info(files["finished"]), files["finished"], dataset_record(files[name]))


@pytest.mark.parametrize(("args", "message"), [
    (["record", "{tmp}/nowhere", "--data", "{data}"], "RUN_DIR: must be an existing directory"),
    (["record", "{unfinished}", "--data", "{data}"], "has not finished"),
    (["record", "{finished}", "--data", "{viscous}"], "not the data the run"),
    (["record", "{finished}", "--data", "{finished}/run.json"], "netCDF"),
    (["run", "--preset", "no-such-preset", "--quick"], "Unknown preset 'no-such-preset'"),
    (["record", "{finished}"], "the following arguments are required: --data"),
    (["record", "{finished}", "--data", "{data}"],
     "not a paper-scale run of burgers-galerkin: epochs 1 (< 100), n_train 8 (< 1024)"),
    (["tables"], "no such file"),
    (["check-data", "{data}", "--results", "{data}"], "argument --results: must not name an input"),
])
def test_user_errors_are_one_line_on_stderr(files: dict[str, Path], tmp_path: Path,
                                            args: list[str], message: str) -> None:
    names = {k: str(v) for k, v in files.items()} | {"tmp": str(tmp_path)}
    argv = [a.format(**names) for a in args]
    argv += [] if "--results" in args else ["--results", str(tmp_path / "rows.json")]
    if args[0] in ("run", "record"):
        argv += ["--data-dir", str(tmp_path / "data")]
    if args[0] == "run":
        argv += ["--runs-dir", str(tmp_path / "runs")]
    proc = _cli(*argv)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("neuralop-fem reproduce"), proc.stderr
    assert message in last
    assert not (tmp_path / "rows.json").exists()


def test_a_finished_run_is_recorded_and_its_tables_rewritten(files: dict[str, Path],
                                                             tmp_path: Path) -> None:
    import json

    rows = tmp_path / "rows.json"
    proc = _cli("record", str(files["finished"]), "--data", str(files["same"]), "--quick",
                "--label", "tiny", "--results", str(rows))
    assert proc.returncode == 0, proc.stderr
    [(key, row)] = json.loads(rows.read_text())["runs"].items()
    assert proc.stdout.strip() == f"recorded {key}"
    assert key == "burgers-galerkin|b_again|quick|tiny|seed1127802"
    assert row["data"]["checksum"] == dataset_record(files["data"])["checksum"]
    assert list(row["errors"]) == ["32"]  # the quick grids reach no further than the data
    assert row["commands"]["train"].startswith("neuralop-fem train --data")
    assert row["recorded_by"]["hardware"]["cpu"]
    commit = (_info(files["finished"]).code or {}).get("commit")
    assert row["training_code"]["history"] == [{"commit": commit, "dirty": row["training_code"][
        "dirty"], "from_epoch": 1}]  # every commit the run trained under
    table = rows.with_suffix(".md").read_text()
    assert "| burgers-galerkin | tiny | b_again |" in table
    rows.with_suffix(".md").unlink()
    proc = _cli("tables", "--results", str(rows))
    assert proc.returncode == 0, proc.stderr
    assert rows.with_suffix(".md").read_text() == table


def test_the_earlier_command_line_still_runs(files: dict[str, Path], tmp_path: Path) -> None:
    """The reproduce commands recorded in reproduction.json name benchmarks/reproduce_paper.py
    with the options of its time: it passes them on to ``neuralop-fem reproduce``."""
    script = ROOT / "benchmarks" / "reproduce_paper.py"
    proc = subprocess.run([sys.executable, str(script), "--record", str(files["unfinished"]),
                           "--data", str(files["data"]), "--data-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 2
    assert "has not finished" in proc.stderr.strip().splitlines()[-1]
    (tmp_path / "rows.json").write_text('{"runs": {}}')  # a results file without rows
    proc = subprocess.run([sys.executable, str(script), "--check-data", str(files["viscous"]),
                           "--results", str(tmp_path / "rows.json")],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 1, proc.stderr
    assert "no row of rows.json" in proc.stdout


@pytest.mark.parametrize(("script", "args", "message"), [
    ("inverse_defaults.py", ["--train", "-1"], "argument --train: must be an integer >= 1"),
    ("bench_inverse.py", ["--run", "{tmp}/nowhere", "--data", "{tmp}/none.nc"],
     "no such directory"),
    ("plot_learning_curves.py", ["--out", "{tmp}/c.png", "--run", "A={tmp}/none.csv"],
     "No such file or directory"),
    ("bench_warmstart.py", ["--resolution", "2"], "argument --resolution: must be an integer >= 3"),
    ("bench_fair.py", ["--run", "zoo:nope:{readme}"], "argument --run: unknown zoo model 'nope'"),
    ("bench_fair.py", ["--run", "zoo:burgers-fno:{tmp}/none.nc"],
     "must be RUN_DIR:DATA.nc or zoo:NAME:DATA.nc"),
    ("plot_learning_curves.py", ["--out", "{tmp}/c.png", "--run", "A={readme}"],
     "expected a training metrics.csv with epoch and val_rel_l2 columns"),
    ("plot_learning_curves.py", ["--out", "{tmp}/c.png", "--run", "A={readme}",
                                 "--reference", "paper=abc"], "must be LABEL=NUMBER"),
    ("plot_tensorboard_run.py", ["{tmp}", "--out", "{tmp}/c.png"],
     "expected a directory of TensorBoard event files"),
])
def test_benchmark_scripts_refuse_bad_input_in_one_line(tmp_path: Path, script: str,
                                                        args: list[str], message: str) -> None:
    results = sorted((ROOT / "benchmarks" / "results").glob("*"))
    before = {p: p.stat().st_mtime_ns for p in results}
    proc = subprocess.run([sys.executable, "-m", f"benchmarks.{Path(script).stem}",
                           *[a.format(tmp=tmp_path, readme=ROOT / 'README.md') for a in args]],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith(f"{script}: error:")
    assert message in proc.stderr
    assert {p: p.stat().st_mtime_ns for p in results} == before  # no results file rewritten


def test_run_script_reports_a_bug_as_an_internal_error(capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    from neuralop_fem.reproduce.script_runner import run_script

    def broken(argv: list[str]) -> int:
        msg = "boom"
        raise ZeroDivisionError(msg)

    assert run_script(broken, ["--x"]) == 1
    err = capsys.readouterr().err
    assert "internal error: ZeroDivisionError: boom" in err
    assert "--debug" in err
    with pytest.raises(ZeroDivisionError):
        run_script(broken, ["--debug"])


def test_the_inverse_problems_noise_levels_have_their_own_runs_and_rows() -> None:
    tags = {run_tag("darcy-inverse-galerkin", "darcy_n421_N1224", "reduced", 1, label="",
                    noise=eps) for eps in (0.0, 0.01, 0.1)}
    keys = {row_key("darcy-inverse-galerkin", "darcy_n421_N1224", "reduced", 1, label="",
                    noise=eps) for eps in (0.0, 0.01, 0.1)}
    assert len(tags) == 3
    assert len(keys) == 3
    assert "darcy-inverse-galerkin_darcy_n421_N1224_reduced_noise0.01_seed1" in tags
    # the forward problems keep the names they had
    assert run_tag("burgers-galerkin", "b", "paper", 2, label="long run", noise=None) == (
        "burgers-galerkin_b_paper_seed2_long-run")
    assert row_key("burgers-galerkin", "b", "paper", 2, label="", noise=None) == (
        "burgers-galerkin|b|paper|preset|seed2")


def test_a_row_states_the_scale_its_run_had() -> None:
    info = {"train_config": {"epochs": 100, "n_train": 1000, "n_val": 100, "n_test": 100,
                             "resolution": 512},
            "epochs_completed": 100, "data": {"n_samples": 1224, "grid": [8192]}}
    paper = dict(info["train_config"])
    assert scale_shortfalls(RunRecord.from_dict(info), paper) == []
    assert run_scale(RunRecord.from_dict(info))["data_samples"] == 1224
    longer = {**info, "train_config": {**info["train_config"], "epochs": 300},
              "epochs_completed": 300}
    # a longer recipe has the paper's scale
    assert scale_shortfalls(RunRecord.from_dict(longer), paper) == []
    small = {**info, "train_config": {**info["train_config"], "epochs": 1, "n_train": 8,
                                      "resolution": 64}, "epochs_completed": 1}
    assert scale_shortfalls(RunRecord.from_dict(small), paper) == [
        "epochs 1 (< 100)", "n_train 8 (< 1000)", "resolution 64 (not 512)",
        "epochs_completed 1 (< 100)"]


@pytest.mark.slow  # two trainings and a generation: about two minutes on a shared 2-core CPU
def test_a_quick_reproduction_resumes_and_records_a_row_that_reruns_it(tmp_path: Path) -> None:
    import json

    dirs = ["--data-dir", str(tmp_path / "data"), "--runs-dir", str(tmp_path / "runs"),
            "--results", str(tmp_path / "rows.json"), "--device", "cpu"]
    proc = _cli("run", "--quick", "--max-epochs-this-call", "1", *dirs)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""  # 1 of 2 epochs: nothing recorded yet
    assert not (tmp_path / "rows.json").exists()
    proc = _cli("run", "--quick", *dirs)
    assert proc.returncode == 0, proc.stderr
    [(key, row)] = json.loads((tmp_path / "rows.json").read_text())["runs"].items()
    assert proc.stdout.startswith(f"recorded {key}: n=64: ")
    assert row["commands"]["reproduce"] == (
        "neuralop-fem reproduce run --preset burgers-galerkin --seed 1127802 --viscosity gt "
        "--data-seed 0 --quick")
    assert row["epochs_completed"] == 2
    assert sorted(row["errors"], key=int) == ["64", "128", "256"]
    assert row["data"]["generate_command"].startswith("neuralop-fem generate burgers")


@pytest.mark.parametrize(("changes", "message"), [
    ({"viscosity": "thin"}, "`viscosity` must be one of ['fno', 'gt'] or a positive number"),
    ({"viscosity": "-0.1"}, "`viscosity` must be one of"),
    ({"epochs": 0}, "`epochs` must be None or an integer >= 1; got 0"),
    ({"overrides": ("d_model",)}, "`overrides` must be KEY=VALUE items"),
    ({"quick": True, "reduced": True}, "two scales"),
])
def test_reproduction_settings_are_checked(changes: dict, message: str) -> None:
    from neuralop_fem.reproduce.driver import ReproduceSettings

    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        ReproduceSettings(**changes)
    assert ReproduceSettings(viscosity="0.05").viscosity == "0.05"
