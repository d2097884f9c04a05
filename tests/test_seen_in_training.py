"""Evaluation data that repeat a run's training or validation samples are named, not scored
silently: `generate` with the run's settings and seed regenerates its training samples."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from neuralop_fem.data import generate
from neuralop_fem.errors import ConfigError
from neuralop_fem.evaluation import evaluate_run
from neuralop_fem.evaluation.training_overlap import SeenInTrainingWarning
from tests._surrogate_fixtures import tiny_burgers_run

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("seen")
    out = {"data": generate("burgers", n_samples=16, resolution=32, seed=1, out=tmp / "b.nc",
                            workers=0, progress=False)}
    # the same settings and seed, fewer samples: samples 0..11 again
    out["again"] = generate("burgers", n_samples=12, resolution=32, seed=1,
                            out=tmp / "b_again.nc", workers=0, progress=False)
    out["other_seed"] = generate("burgers", n_samples=12, resolution=32, seed=2,
                                 out=tmp / "b_seed2.nc", workers=0, progress=False)
    out["run"] = tiny_burgers_run(out["data"], tmp / "run")
    return out


def test_regenerated_training_samples_are_counted_and_warned(files):
    with pytest.warns(SeenInTrainingWarning, match=r"12 of the 12 samples evaluated .*\(8 in "
                      r"its training split, 4 in its validation split.*seed 1"):
        res = evaluate_run(files["run"], files["again"], indices="all")
    assert (res["seen_in_training"], res["seen_in_validation"]) == (8, 4)


@pytest.mark.parametrize(("data", "indices"), [("other_seed", "all"), ("data", "test")])
def test_unseen_samples_give_no_warning(files, data, indices):
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeenInTrainingWarning)
        res = evaluate_run(files["run"], files[data], indices=indices)
    assert (res["seen_in_training"], res["seen_in_validation"]) == (0, 0)


def test_the_training_files_own_training_split_is_named_too(files):
    with pytest.warns(SeenInTrainingWarning, match="4 of the 4 samples evaluated"):
        res = evaluate_run(files["run"], files["data"], indices="0:4")
    assert res["seen_in_training"] == 4


def test_a_test_split_beyond_a_smaller_file_says_what_to_do(files):
    with pytest.raises(ConfigError, match=r"'test' \(the default\) selects the run's test split, "
                       r"positions 12..15 .* this dataset has 12 samples.*another --seed"):
        evaluate_run(files["run"], files["again"])


def test_compare_says_so_before_any_number_and_the_cli_in_one_line(files, tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "neuralop_fem.cli", "compare", str(files["run"]),
                           "--data", str(files["again"]), "--indices", "0:6", "--no-ladder",
                           "--out", str(tmp_path / "rep")],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    warned = [line for line in proc.stderr.splitlines() if "samples the run has seen" in line]
    assert len(warned) == 1
    assert warned[0].startswith("neuralop-fem compare: warning: 6 of the 6 samples evaluated")
    summary = (tmp_path / "rep" / "summary.md").read_text()
    assert summary.index("**Warning:** 6 of the 6 samples") < summary.index("| relative L2 |")
