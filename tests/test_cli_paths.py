"""The command line as a user meets it (subprocesses, output to a pipe): an output that names
an input is refused by every command that writes, ``compare`` keeps an earlier report unless
``--overwrite``, a mistyped option or command gets the closest one suggested, and messages
name the options as flags, not as Python arguments."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from neuralop_fem.cli import COMMANDS, build_parser, command_line_wording, run_reporting
from neuralop_fem.data import generate
from neuralop_fem.path_options import path_options

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "neuralop_fem.cli", *map(str, args)],
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=300,
                          check=False)


def _one_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr
    return done.stderr


@pytest.fixture(scope="module")
def darcy_file(tmp_path_factory):
    return generate("darcy", n_samples=3, resolution=9, seed=2,
                    out=tmp_path_factory.mktemp("paths") / "d.nc", workers=0, progress=False)


@pytest.fixture
def run_dir(tmp_path):
    """A directory standing for a run (the refusals come before it is read)."""
    run = tmp_path / "run"
    run.mkdir()
    return run


def test_every_writing_command_declares_its_paths():
    """The shared check sees each command's inputs and outputs through the argparse types."""
    expected = {
        "generate": ({"--out"}, set()),
        "info": (set(), {"FILE.nc"}),
        "plot": ({"--out"}, {"FILE.nc"}),
        "import-mat": ({"--out"}, {"FILE.mat"}),
        # Both formats' positional `file` (FILE.pt, FILE.hdf5): one destination, seen once.
        "import": ({"--out"}, {"FILE.pt"}),
        "export": ({"--out"}, {"FILE.nc"}),
        "check": ({"--out"}, {"FILE.nc"}),
        "train": ({"--out"}, {"--data", "--config"}),
        "evaluate": ({"--out"}, {"RUN_DIR", "--data"}),
        "compare": ({"--out"}, {"RUN_DIR", "--data"}),
        "demo": ({"--out"}, set()),
        # --results is checked by the command itself (it is both read and written)
        "reproduce": (set(), {"RUN_DIR", "--data", "FILE.nc"}),
        "zoo": ({"--zoo-dir"}, {"--zoo-dir", "RUN_DIR", "--data", "--report"}),
    }
    assert set(expected) == {c.replace("_", "-") for c in COMMANDS}
    for command, (outputs, inputs) in expected.items():
        parser = build_parser(only=command)
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        found = path_options(sub.choices[command])

        def names(role, found=found):
            return {max(a.option_strings, key=len) if a.option_strings else a.metavar
                    for a, r in found if r == role}

        assert (names("output"), names("input")) == (outputs, inputs), command


@pytest.mark.parametrize("case", ["compare-out-is-run", "compare-out-holds-data",
                                  "train-out-holds-data", "evaluate-out-is-data",
                                  "evaluate-out-is-a-link-to-data", "evaluate-summary-is-data",
                                  "import-mat-out-is-input"])
def test_an_output_naming_an_input_is_refused(tmp_path, darcy_file, run_dir, case):
    data = tmp_path / "in" / "d.nc"
    data.parent.mkdir()
    data.write_bytes(Path(darcy_file).read_bytes())
    data.with_suffix(".json").write_bytes(data.read_bytes())  # a dataset of any name
    before = data.read_bytes()
    link = tmp_path / "link.csv"
    link.symlink_to(data)
    mat = tmp_path / "legacy.mat"
    mat.write_bytes(b"not really a mat file")
    argv, option, named = {
        "compare-out-is-run": (["compare", run_dir, "--data", data, "--out", run_dir],
                               "--out", "RUN_DIR"),
        "compare-out-holds-data": (["compare", run_dir, "--data", data, "--out", data.parent,
                                    "--overwrite"], "--out", "--data"),
        "train-out-holds-data": (["train", "--data", data, "--preset", "darcy-galerkin",
                                  "--out", data.parent, "--overwrite"], "--out", "--data"),
        "evaluate-out-is-data": (["evaluate", run_dir, "--data", data, "--out", data],
                                 "--out", "--data"),
        "evaluate-out-is-a-link-to-data": (["evaluate", run_dir, "--data", data, "--out",
                                            link], "--out", "--data"),
        "evaluate-summary-is-data": (["evaluate", run_dir, "--data", data.with_suffix(".json"),
                                      "--out", data.with_suffix(".csv")], "--out", "--data"),
        "import-mat-out-is-input": (["import-mat", mat, "--problem", "darcy", "--out", mat,
                                     "--overwrite"], "--out", "FILE.mat"),
    }[case]
    err = _one_error(_cli(*argv))
    assert f"error: argument {option}: must not " in err, err
    assert f"which {'holds' if 'holds' in case else 'is'} {named} " in err, err
    assert data.read_bytes() == before
    assert mat.read_bytes() == b"not really a mat file"


def test_compare_keeps_an_earlier_report_unless_overwrite(tmp_path, darcy_file, run_dir):
    report = tmp_path / "report"
    report.mkdir()
    (report / "summary.md").write_text("an earlier report\n")
    err = _one_error(_cli("compare", run_dir, "--data", darcy_file, "--out", report))
    assert "argument --out: must be a new or empty directory (pass --overwrite" in err
    assert (report / "summary.md").read_text() == "an earlier report\n"
    # with --overwrite the option check passes and the command goes on to read the run
    err = _one_error(_cli("compare", run_dir, "--data", darcy_file, "--out", report,
                          "--overwrite"))
    assert "--out" not in err, err
    assert "run.json" in err, err


def test_a_mistyped_option_or_command_gets_a_suggestion(tmp_path, darcy_file):
    err = _one_error(_cli("train", "--data", darcy_file, "--preset", "darcy-galerkin", "--out",
                          tmp_path / "run", "--epcohs", "3"))
    assert "unrecognized arguments: --epcohs 3 (did you mean --epochs?)" in err
    err = _one_error(_cli("generate", "darcy", "--samples", "2", "--out", tmp_path / "x.nc",
                          "--resolutoin", "9"))
    assert "(did you mean --resolution?)" in err
    err = _one_error(_cli("trian", "--data", darcy_file))
    assert "invalid choice: 'trian'" in err
    assert "(did you mean train?)" in err
    # The option of another subcommand is said to be one (not "did you mean" the same name),
    # and only the options of the subcommand used are suggested.
    err = _one_error(_cli("generate", "darcy", "--samples", "2", "--out", tmp_path / "x.nc",
                          "--viscosity", "0.1"))
    assert "did you mean" not in err, err
    assert ("(--viscosity is an option of `neuralop-fem generate burgers`, not of "
            "`neuralop-fem generate darcy`)") in err
    err = _one_error(_cli("generate", "burgers", "--samples", "2", "--out", tmp_path / "x.nc",
                          "--forcin", "1"))
    assert "--forcing" not in err, err


def test_messages_name_flags_not_python_arguments(tmp_path, darcy_file):
    """The library says ``overwrite=True`` / ``append=True``; the command line says the flags."""
    err = _one_error(_cli("generate", "darcy", "--samples", "2", "--resolution", "9",
                          "--out", darcy_file))
    assert "Pass --overwrite to replace it or --append M to extend it" in err, err
    assert "=True" not in err


def test_the_wording_of_python_arguments_on_the_command_line():
    parser = build_parser(only="compare")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    compare = sub.choices["compare"]
    assert command_line_wording("or warm_start=False; `max_samples` must be >= 1; set "
                                "max_samples=3; keep strict=True", compare) == (
        "or --no-warm-start; --max-samples must be >= 1; set --max-samples 3; keep strict=True")


def test_a_warning_is_one_line_with_flags(capsys):
    parser = build_parser(only="train")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))

    def command() -> int:
        warnings.warn("a finished run: pass overwrite=True\nto train again", UserWarning,
                      stacklevel=1)
        return 0

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        status = run_reporting(command, "neuralop-fem train", debug=False,
                               wording=lambda text: command_line_wording(text,
                                                                         sub.choices["train"]))
    assert status == 0
    assert capsys.readouterr().err == ("neuralop-fem train: warning: a finished run: pass "
                                       "--overwrite to train again (UserWarning)\n")
