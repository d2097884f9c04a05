"""benchmarks/reproduce_paper.py as a reader meets it: rows only of finished runs on their own
data, and user errors as one line on stderr (the benchmark scripts share `_common.run_script`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from neuralop_fem.data import generate
from neuralop_fem.errors import ConfigError, RunDirectoryError

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from _reproduction_record import dataset_record  # noqa: E402
from reproduce_paper import check_recordable  # noqa: E402


def _tiny_run(data: Path, run: Path, *, epochs: int, stop_after: int | None) -> Path:
    from neuralop_fem.models import PRESETS
    from neuralop_fem.training import TrainConfig, Trainer

    model = PRESETS["burgers-galerkin"].replace(d_model=8, num_layers=1, d_ff=8, freq_dim=4,
                                                modes=2, decoder_ff=4)
    config = TrainConfig(task="burgers", epochs=epochs, batch_size=4, eval_batch_size=4,
                         n_train=8, n_val=4, n_test=4, device="cpu", resolution=32)
    with Trainer(run, data, model_config=model, config=config, preset="burgers-galerkin") as t:
        t.fit(max_epochs_this_call=stop_after)
    return run


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
    out["finished"] = _tiny_run(out["data"], tmp / "finished", epochs=1, stop_after=None)
    out["unfinished"] = _tiny_run(out["data"], tmp / "unfinished", epochs=3, stop_after=1)
    return out


def _info(run: Path) -> dict:
    from neuralop_fem.training import read_run_info

    return read_run_info(run)


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
    (["--record", "{tmp}/nowhere", "--data", "{data}"], "no such directory"),
    (["--record", "{unfinished}", "--data", "{data}"], "has not finished"),
    (["--record", "{finished}", "--data", "{viscous}"], "not the data the run"),
    (["--record", "{finished}", "--data", "{finished}/run.json"], "netCDF"),
    (["--preset", "no-such-preset", "--quick"], "Unknown preset 'no-such-preset'"),
    (["--record", "{finished}"], "--record needs --data"),
    (["--record", "{finished}", "--data", "{data}"],
     "not a paper-scale run of burgers-galerkin: epochs 1 (< 100), n_train 8 (< 1024)"),
])
def test_user_errors_are_one_line_on_stderr(files: dict[str, Path], tmp_path: Path,
                                            args: list[str], message: str) -> None:
    names = {k: str(v) for k, v in files.items()} | {"tmp": str(tmp_path)}
    argv = [a.format(**names) for a in args]
    argv += ["--data-dir", str(tmp_path / "data"), "--runs-dir", str(tmp_path / "runs")]
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "reproduce_paper.py"),
                           *argv], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("reproduce_paper.py: error:"), proc.stderr
    assert message in last


@pytest.mark.parametrize(("script", "args", "message"), [
    ("inverse_defaults.py", ["--train", "-1"], "argument --train: must be an integer >= 1"),
    ("bench_inverse.py", ["--run", "{tmp}/nowhere", "--data", "{tmp}/none.nc"],
     "no such directory"),
    ("plot_learning_curves.py", ["--out", "{tmp}/c.png", "--run", "A={tmp}/none.csv"],
     "No such file or directory"),
    ("bench_warmstart.py", ["--resolution", "2"], "argument --resolution: must be an integer >= 3"),
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
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script),
                           *[a.format(tmp=tmp_path, readme=ROOT / 'README.md') for a in args]],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith(f"{script}: error:")
    assert message in proc.stderr
    assert {p: p.stat().st_mtime_ns for p in results} == before  # no results file rewritten


def test_run_script_reports_a_bug_as_an_internal_error(capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    from _common import run_script

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
    from reproduce_paper import row_key, run_tag

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
    from _reproduction_record import run_scale, scale_shortfalls

    info = {"train_config": {"epochs": 100, "n_train": 1000, "n_val": 100, "n_test": 100,
                             "resolution": 512},
            "epochs_completed": 100, "data": {"n_samples": 1224, "grid": [8192]}}
    paper = dict(info["train_config"])
    assert scale_shortfalls(info, paper) == []
    assert run_scale(info)["data_samples"] == 1224
    longer = {**info, "train_config": {**info["train_config"], "epochs": 300},
              "epochs_completed": 300}
    assert scale_shortfalls(longer, paper) == []  # a longer recipe has the paper's scale
    small = {**info, "train_config": {**info["train_config"], "epochs": 1, "n_train": 8,
                                      "resolution": 64}, "epochs_completed": 1}
    assert scale_shortfalls(small, paper) == [
        "epochs 1 (< 100)", "n_train 8 (< 1000)", "resolution 64 (not 512)",
        "epochs_completed 1 (< 100)"]
