"""neuralop_fem.reproduce.epoch_budget and benchmarks/plot_epoch_budget.py: which recorded runs
form a series, their means, the figure
and the one-line refusals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from neuralop_fem.reproduce.epoch_budget import collect, series, table
from neuralop_fem.training import training_preset

ROOT = Path(__file__).resolve().parents[2]
#: The driver, run from the repository root.
SCRIPT = ["-m", "benchmarks.plot_epoch_budget"]

DATA = "burgers_nugt_n64_N20"


def _run(preset: str, error: float, *, data: str = DATA, model_changes: dict | None = None,
         **train: Any) -> dict[str, Any]:
    config = training_preset(preset).replace(**train).to_dict()
    return {"task": "burgers", "mode": "paper", "preset": preset,
            "model_changes": model_changes or {}, "data": {"path": f"/somewhere/{data}.nc"},
            "train_config": config, "errors": {"512": {"rel_l2": {"mean": error}}}}


RUNS = [
    _run("burgers-galerkin", 2.0e-3, seed=1),
    _run("burgers-galerkin", 1.0e-3, seed=2),
    _run("burgers-galerkin", 1.2e-3, seed=1, epochs=300, lr_max=5e-4, gamma=0.5),
    _run("burgers-galerkin-long", 0.9e-3, seed=2, epochs=300),  # the same recipe, own name
    _run("burgers-fno", 4.0e-3, seed=1),
    _run("burgers-galerkin", 1.1e-3, seed=3, batch_size=4),  # another lever: left out
    _run("burgers-galerkin", 1.1e-3, seed=3, model_changes={"d_model": 104}),  # left out
    _run("burgers-galerkin", 1.1e-3, seed=3, data="burgers_nufno_n64_N20"),  # other data
]


def test_series_group_by_model_and_recipe_and_average_over_seeds() -> None:
    groups = series(collect(dict(enumerate(RUNS)), DATA, "512"))
    assert list(groups) == [("galerkin", 1e-3, 0.1), ("galerkin", 5e-4, 0.5),
                            ("fno", 1e-3, 0.1)]
    long = groups[("galerkin", 5e-4, 0.5)]
    assert list(long) == [300]
    assert sorted(p.seed for p in long[300]) == [1, 2]
    text = table(groups)
    assert "| galerkin | 0.0005 | 0.5 | 300 | 2 | 1.050e-03 |" in text
    assert "| galerkin | 0.001 | 0.1 | 100 | 2 | 1.500e-03 |" in text
    assert "| fno | 0.001 | 0.1 | 100 | 1 | 4.000e-03 |" in text
    assert "1.100e-03" not in text  # none of the runs with another change


def test_a_record_without_a_later_setting_counts_as_its_default() -> None:
    old = _run("burgers-galerkin", 2.0e-3, seed=1)
    del old["train_config"]["target_normalizer"]
    changed = _run("burgers-galerkin", 2.0e-3, seed=1, target_normalizer="global")
    assert len(collect({"old": old}, DATA, "512")) == 1
    assert collect({"new": changed}, DATA, "512") == []
    assert collect({"old": old}, DATA, "2048") == []  # no error recorded at that resolution


def test_the_script_writes_the_figure_and_prints_the_table(tmp_path: Path) -> None:
    results = tmp_path / "reproduction.json"
    results.write_text(json.dumps({"runs": {str(i): r for i, r in enumerate(RUNS)}}))
    out = tmp_path / "budget.png"
    proc = subprocess.run([sys.executable, *SCRIPT, "--results", str(results),
                           "--data-name", DATA, "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| galerkin | 0.0005 | 0.5 | 300 | 2 | 1.050e-03 |" in proc.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["--data-name", "nothing_here"], "--data-name 'nothing_here' / --resolution 512: no"),
    (["--data-name", DATA, "--resolution", "999"], "--resolution 999: no recorded"),
    (["--data-name", DATA, "--goal", "-1"], "argument --goal: must be a positive number"),
    (["--data-name", DATA, "--results", "{readme}"], "expected a reproduction.json"),
    (["--data-name", DATA, "--results", "{tmp}/none.json"], "No such file or directory"),
    (["--data-name", DATA, "--results", "{tmp}/tampered.json"],
     "run '1': expected a reproduction record with numeric settings and errors"),
    (["--data-name", DATA, "--results", "{tmp}/listed.json"], "with a 'runs' mapping"),
])
def test_bad_input_is_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    results = tmp_path / "reproduction.json"
    results.write_text(json.dumps({"runs": {"0": RUNS[0]}}))
    tampered = json.loads(json.dumps(RUNS[0]))
    tampered["errors"]["512"]["rel_l2"]["mean"] = "small"
    (tmp_path / "tampered.json").write_text(json.dumps({"runs": {"0": RUNS[0], "1": tampered}}))
    (tmp_path / "listed.json").write_text(json.dumps({"runs": [RUNS[0]]}))
    argv = ["--results", str(results), "--out", str(tmp_path / "x.png")]
    argv += [a.format(tmp=tmp_path, readme=ROOT / "README.md") for a in args]
    proc = subprocess.run([sys.executable, *SCRIPT, *argv], capture_output=True, text=True,
                          cwd=ROOT, timeout=300, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("plot_epoch_budget.py: error:"), proc.stderr
    assert message in last
    assert not (tmp_path / "x.png").exists()
