"""``neuralop-fem train`` / ``evaluate`` through ``neuralop_fem.cli.main``, and their bad input."""

from __future__ import annotations

import csv
import json
import re
import warnings

import pytest

from neuralop_fem.cli import main

from .conftest import TINY_BURGERS, TINY_DARCY, set_args

SMALL = ["--epochs", "2", "--n-train", "12", "--n-val", "4", "--n-test", "4"]


def _train(data, preset, out, *extra):
    return main(["train", "--data", str(data), "--preset", preset, "--out", str(out), *extra])


def test_train_then_evaluate_burgers_at_two_resolutions(tmp_path, burgers_file, capsys):
    run = tmp_path / "run"
    assert _train(burgers_file, "burgers-galerkin", run, "--resolution", "64", "--batch-size",
                  "4", *SMALL, *set_args(TINY_BURGERS)) == 0
    assert "test rel. L2" in capsys.readouterr().out
    info = json.loads((run / "run.json").read_text())
    assert info["status"] == "finished"
    assert info["resolution"] == 64
    assert info["model_config"]["d_model"] == 16
    assert info["train_config"]["batch_size"] == 4
    assert info["splits"]["test"] == list(range(20, 24))
    assert info["data"]["problem"] == "burgers"
    assert "config_json" in info["data"]
    assert "cpu_model" in info["hardware"]
    assert "torch" in info["versions"]

    for n in ("64", "128"):
        out = tmp_path / f"eval{n}.csv"
        assert main(["evaluate", str(run), "--data", str(burgers_file), "--resolution", n,
                     "--out", str(out)]) == 0
        text = capsys.readouterr().out
        assert f"at n={n}" in text
        assert "rel. H1" in text
        with out.open() as fh:
            rows = list(csv.DictReader(fh))
        assert [int(r["sample"]) for r in rows] == [20, 21, 22, 23]
        summary = json.loads(out.with_suffix(".json").read_text())
        assert summary["summary"]["rel_l2"]["max"] == max(float(r["rel_l2"]) for r in rows)
    # At the training resolution the evaluation reproduces the trainer's test error of the
    # selected model (the same samples, model and metric).
    at64 = json.loads((tmp_path / "eval64.json").read_text())["summary"]["rel_l2"]["mean"]
    assert at64 == pytest.approx(info["test_rel_l2_best"], rel=1e-6)  # float32 batch order


def test_train_darcy_with_set_and_evaluate_all(tmp_path, darcy_file, capsys):
    run = tmp_path / "run"
    assert _train(darcy_file, "darcy-galerkin", run, "--resolution", "29", "--batch-size", "2",
                  "--epochs", "1",
                  "--n-train", "8", "--n-val", "3", "--n-test", "3", "--set", "gamma=0.25",
                  *set_args(TINY_DARCY)) == 0
    info = json.loads((run / "run.json").read_text())
    assert info["train_config"]["gamma"] == 0.25
    assert info["normalizers"]["dirichlet"]
    from neuralop_fem.evaluation.training_overlap import SeenInTrainingWarning

    with warnings.catch_warnings():  # shown as the command line shows it, not raised
        warnings.simplefilter("always", SeenInTrainingWarning)
        assert main(["evaluate", str(run), "--data", str(darcy_file), "--indices", "0:5"]) == 0
    out = capsys.readouterr()
    assert "5 samples at n=29" in out.out
    # samples 0..4 are in the run's training split: one warning line says so
    assert "neuralop-fem evaluate: warning: 5 of the 5 samples evaluated" in out.err
    assert (run / "eval_darcy_n29_0-5.csv").is_file()


def test_resume_from_the_command_line(tmp_path, burgers_file, capsys):
    args = ["--resolution", "64", "--batch-size", "4", *SMALL, *set_args(TINY_BURGERS)]
    assert _train(burgers_file, "burgers-galerkin", tmp_path / "r", *args,
                  "--max-epochs-this-call", "1") == 0
    assert "finished: False" in capsys.readouterr().out
    assert _train(burgers_file, "burgers-galerkin", tmp_path / "r", *args) == 0
    assert "epochs completed: 2 (finished: True)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("case", "match"),
    [
        ("unknown preset", r"argument --preset: must be one of burgers-galerkin, .*"
                           r"burgers-fno-long; got 'burgers-gt'\.$"),
        ("problem mismatch",
         "must be a burgers dataset for preset 'burgers-galerkin'; got a darcy"),
        ("unreachable resolution", r"--resolution must be reachable from 128 .* got 100"),
        ("too few samples", r"argument --n-train: must be at most 22 \(the 24 samples of .* "
                            r"less one each for validation and test\); got 30"),
        ("unknown set key", "`--set` key must be a model or training hyper-parameter; got 'widht'"),
        ("bad set value", "error: argument --set: key `num_layers` must be an integer >= 1; "
                          "got 0"),
        ("bad set training value", "error: argument --set: key `epochs` must be an integer "
                                   ">= 1; got 'abc'"),
    ],
)
def test_bad_input(case, match, tmp_path, burgers_file, darcy_file, capsys):
    base = ["--resolution", "64", *SMALL]
    args = {
        "unknown preset": (burgers_file, "burgers-gt", base),
        "problem mismatch": (darcy_file, "burgers-galerkin", []),
        "unreachable resolution": (burgers_file, "burgers-galerkin", ["--resolution", "100",
                                                                       *SMALL]),
        "too few samples": (burgers_file, "burgers-galerkin", ["--resolution", "64",
                                                               "--n-train", "30"]),
        "unknown set key": (burgers_file, "burgers-galerkin", [*base, "--set", "widht=3"]),
        "bad set value": (burgers_file, "burgers-galerkin", [*base, "--set", "num_layers=0"]),
        "bad set training value": (burgers_file, "burgers-galerkin", [*base, "--set",
                                                                      "epochs=abc"]),
    }[case]
    assert _train(args[0], args[1], tmp_path / "run", *args[2]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("neuralop-fem train: error:")
    assert re.search(match, err), err


def test_evaluate_bad_indices(tmp_path, burgers_file, capsys):
    run = tmp_path / "run"
    assert _train(burgers_file, "burgers-galerkin", run, "--resolution", "64", "--batch-size",
                  "4", "--epochs", "1", "--n-train", "12", "--n-val", "4", "--n-test", "4",
                  *set_args(TINY_BURGERS)) == 0
    capsys.readouterr()
    assert main(["evaluate", str(run), "--data", str(burgers_file), "--indices", "a:b"]) == 2
    assert "argument --indices: must be test, all or A:B with integers" in capsys.readouterr().err
    assert main(["evaluate", str(run), "--data", str(burgers_file), "--resolution", "48"]) == 2
    assert "must be reachable from 128" in capsys.readouterr().err
    # Positions past the end are an error naming the valid range, not clipped.
    assert main(["evaluate", str(run), "--data", str(burgers_file), "--indices", "20:30"]) == 2
    err = capsys.readouterr().err
    assert "argument --indices:" in err
    assert "in [-24, 24] for this dataset of 24 samples" in err


@pytest.mark.parametrize(("spec", "expected"), [
    ("all", list(range(6))), ("test", [4, 5]), ("1:3", [1, 2]), (":2", [0, 1]), ("4:", [4, 5]),
    ("-2:", [4, 5]), ("0:6", list(range(6))),
])
def test_parse_indices(spec, expected):
    from neuralop_fem.evaluation.run_evaluation import parse_indices

    assert parse_indices(spec, n_samples=6, test=[4, 5]).tolist() == expected


@pytest.mark.parametrize(("spec", "match"), [
    ("0:1000", r"A and B in \[-6, 6\] for this dataset of 6 samples"),
    ("-7:", r"A and B in \[-6, 6\]"),
    ("4:2", "must select at least one sample"),
    ("x:2", "with integers"),
    ("1-3", "'test', 'all' or 'A:B'"),
])
def test_parse_indices_refuses_instead_of_clipping(spec, match):
    from neuralop_fem.errors import ConfigError
    from neuralop_fem.evaluation.run_evaluation import parse_indices

    with pytest.raises(ConfigError, match=match):
        parse_indices(spec, n_samples=6, test=[4, 5])


def test_evaluate_help_names_the_file_it_writes(capsys):
    assert main(["evaluate", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "RUN_DIR/eval_<data>_n<res>_<indices>.csv" in text
    assert "eval_burgers_n512_test.csv" in text


def test_a_run_directory_of_another_problem_is_refused_in_a_short_line(tmp_path, burgers_file,
                                                                        darcy_file, capsys):
    """The preset and problem that differ are named, not the dozens of model and training
    fields that differ because of them."""
    run = tmp_path / "run"
    assert _train(burgers_file, "burgers-galerkin", run, "--resolution", "64", "--batch-size",
                  "4", "--max-epochs-this-call", "1", *SMALL, *set_args(TINY_BURGERS)) == 0
    capsys.readouterr()
    assert _train(darcy_file, "darcy-galerkin", run, "--n-train", "8", "--n-val", "3",
                  "--n-test", "3") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert re.fullmatch(
        rf"neuralop-fem train: error: {re.escape(str(run))} holds a run with other settings: "
        r"task: 'burgers' \(run\) vs 'darcy' \(now\); preset: 'burgers-galerkin' \(run\) vs "
        r"'darcy-galerkin' \(now\); data_path: '.*burgers.nc' \(run\) vs '.*darcy.nc' \(now\); "
        r"\d+ other settings differ as well\. Use another --out or pass --overwrite to discard "
        r"it\.\n", err), err
