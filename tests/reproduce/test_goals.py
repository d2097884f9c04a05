"""neuralop_fem.reproduce.goals: goals beyond the paper judged on the seed-pooled rows, their
checks, and the section of reproduction.md they give."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from neuralop_fem.errors import DatasetError
from neuralop_fem.reproduce.goals import Goal, goal_status, load_goals
from neuralop_fem.reproduce.record import load_results
from neuralop_fem.reproduce.tables import aggregate, markdown

from .test_tables import _row

GOAL = {"preset": "burgers-fno", "data": "burgers", "n": "512", "at_most": 1.0e-3, "seeds": 2,
        "reference": "paper 1.1e-3"}


def _rows(errors: dict[int, float], **train_changes: Any) -> list[dict[str, Any]]:
    rows = [_row(seed, err, **train_changes) for seed, err in errors.items()]
    for r in rows:
        r["key"] += f"|{sorted(train_changes.items())}"
        r["label"] = ", ".join(f"{k} {v}" for k, v in train_changes.items()) or "paper"
    return rows


def _status(rows: list[dict[str, Any]], **changes: Any):
    return goal_status(Goal.from_dict(GOAL | changes, where="goals[0]"), aggregate(rows))


def test_a_recipe_with_the_seeds_at_or_below_the_goal_meets_it() -> None:
    st = _status(_rows({1: 9.0e-4, 2: 1.1e-3}) + _rows({1: 2.0e-3, 2: 2.0e-3}, epochs=7))
    assert st.status == "met"
    assert st.best is not None
    assert st.best["errors"]["512"]["mean"] == pytest.approx(1.0e-3)
    assert st.tried == 2


def test_one_seed_below_the_goal_does_not_meet_a_two_seed_goal() -> None:
    rows = _rows({1: 1.2e-3, 2: 1.4e-3}) + _rows({1: 8.0e-4}, epochs=7)
    st = _status(rows)
    assert st.status == "missed"
    assert st.best is not None
    assert st.best["errors"]["512"]["mean"] == pytest.approx(1.3e-3)
    assert [g["label"] for g in st.promising] == ["epochs 7"]
    assert _status(rows, seeds=1).status == "met"


def test_no_recipe_with_the_seeds_leaves_the_goal_open() -> None:
    st = _status(_rows({1: 5.0e-4}))
    assert (st.status, st.best, st.tried) == ("open", None, 1)


@pytest.mark.parametrize("change", [{"preset": "burgers-fourier"}, {"data": "other"},
                                    {"n": "2048"}])
def test_rows_of_another_preset_data_or_resolution_do_not_count(change: dict[str, Any]) -> None:
    st = _status(_rows({1: 5.0e-4, 2: 5.0e-4}), **change)
    assert (st.status, st.tried) == ("open", 0)


@pytest.mark.parametrize(("change", "field"), [
    ({"at_most": 0}, "at_most"), ({"at_most": "1e-3"}, "at_most"),
    ({"at_most": float("nan")}, "at_most"), ({"seeds": 0}, "seeds"), ({"seeds": 1.5}, "seeds"),
    ({"seeds": True}, "seeds"), ({"preset": ""}, "preset"), ({"n": 512}, "n"),
    ({"curves": "a.png"}, "curves"), ({"tried": 3}, "tried"), ({"colour": "red"}, "colour"),
])
def test_a_bad_goal_is_refused_naming_its_field(change: dict[str, Any], field: str) -> None:
    with pytest.raises(DatasetError, match=rf"goals\[0\].*{field}"):
        load_goals({"goals": [GOAL | change]})


def test_the_markdown_states_each_goal_its_best_recipe_and_status() -> None:
    rows = _rows({1: 1.2e-3, 2: 1.4e-3}) + _rows({1: 8.0e-4}, epochs=7)
    results = {"runs": {r["key"]: r for r in rows},
               "goals": [GOAL | {"curves": ["c.png"], "tried": "A longer run is training."}]}
    text = markdown(results)
    section = text[text.index("## Goals beyond the paper"):]
    line = next(x for x in section.splitlines() if x.startswith("| burgers-fno"))
    assert "<= 1.00e-03 (2)" in line
    assert "paper (2 seeds)" in line
    assert "1.300e-03" in line
    assert line.endswith("**missed** |")
    assert "epochs 7 is below the goal on 1 of 2 seeds (8.000e-04)." in section
    assert "A longer run is training." in section
    assert "](c.png)" in section
    assert "## Goals" not in markdown({"runs": results["runs"]})


def test_a_results_file_with_a_bad_goal_is_one_line_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "reproduction.json"
    path.write_text(json.dumps({"runs": {}, "goals": [GOAL | {"seeds": -1}]}))
    with pytest.raises(DatasetError, match=r"reproduction\.json: goals\[0\]\.seeds"):
        load_results(path)
    proc = subprocess.run([sys.executable, "-m", "neuralop_fem.cli", "reproduce", "tables",
                           "--results", str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "goals[0].seeds" in proc.stderr
    assert "Traceback" not in proc.stderr
