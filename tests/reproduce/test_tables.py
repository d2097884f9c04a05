"""neuralop_fem.reproduce.tables: which rows of reproduction.json are seeds of one recipe, and the
markdown the repository's rows give."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from neuralop_fem.reproduce.record import load_results
from neuralop_fem.reproduce.tables import aggregate, markdown

ROOT = Path(__file__).resolve().parents[2]


def _row(seed: int, error: float, **train_changes: Any) -> dict[str, Any]:
    from neuralop_fem.training import training_preset

    train = training_preset("burgers-fno").to_dict()
    train.update(seed=seed, **train_changes)
    return {"key": f"burgers-fno|data|paper|preset|seed{seed}", "preset": "burgers-fno",
            "mode": "paper", "task": "burgers", "seed": seed, "label": "",
            "data": {"path": "/d/burgers.nc", "checksum": "sha256:ab"},
            "model_config": {"modes": 16}, "train_config": train, "n_parameters": 10,
            "train_wall_time_s": 3600.0, "device": "cpu",
            "errors": {"512": {"rel_l2": {"mean": error}, "rel_h1": {"mean": 10 * error},
                               "zero_shot": False}}}


def test_seeds_of_one_recipe_are_one_group_with_mean_and_spread() -> None:
    (group,) = aggregate([_row(1, 3.0e-3), _row(2, 5.0e-3)])
    assert group["seeds"] == [1, 2]
    e = group["errors"]["512"]
    assert e["mean"] == pytest.approx(4.0e-3)
    assert e["std"] == pytest.approx(1.4142135e-3)
    assert (e["min"], e["max"]) == (3.0e-3, 5.0e-3)


def test_a_row_lacking_a_later_training_setting_counts_it_as_its_default() -> None:
    old = _row(1, 3.0e-3)
    del old["train_config"]["target_normalizer"]  # rows trained before the setting existed
    groups = aggregate([old, _row(2, 5.0e-3)])
    assert len(groups) == 1
    assert groups[0]["seeds"] == [1, 2]


def test_seeds_recorded_before_amp_and_threads_pool_with_float32_runs_on_given_threads() -> None:
    """A row without ``amp`` trained in float32 (the setting came with ``"none"`` before
    ``"auto"``); threads and checkpoint intervals say where a run ran, not what it learned."""
    old = _row(1, 3.0e-3)
    for key in ("amp", "threads", "checkpoint_minutes"):
        old["train_config"].pop(key, None)
    new = _row(2, 5.0e-3, amp="none", threads=1, checkpoint_minutes=5.0)
    (group,) = aggregate([old, new])
    assert group["seeds"] == [1, 2]
    assert len(aggregate([old, _row(2, 5.0e-3, amp="bf16", threads=1)])) == 2


def test_bf16_rows_that_kept_other_parts_in_float32_are_not_pooled() -> None:
    """bf16 runs from before the float32 parts (only the output layer in float32, nothing
    recorded) and after them (``precision.float32_parts``) trained different computations."""
    before = [_row(1, 3.0e-3, amp="bf16"), _row(2, 4.0e-3, amp="bf16")]
    after = _row(3, 1.0e-3, amp="bf16")
    after["precision"] = {"amp": "bf16", "float32_parts": ["lift", "proj"]}
    groups = aggregate([*before, after])
    assert sorted(g["seeds"] for g in groups) == [[1, 2], [3]]
    also = _row(4, 2.0e-3, amp="bf16")
    also["precision"] = {"amp": "bf16", "float32_parts": ["lift", "proj"]}
    assert len(aggregate([after, also])) == 1
    float32 = _row(5, 2.0e-3, amp="none")
    float32["precision"] = {"amp": "none"}
    assert len(aggregate([_row(6, 2.0e-3, amp="none"), float32])) == 1


@pytest.mark.parametrize("change", [{"target_normalizer": "global"}, {"gamma": 0.5},
                                    {"epochs": 200}])
def test_rows_that_differ_in_a_setting_are_not_pooled(change: dict[str, Any]) -> None:
    groups = aggregate([_row(1, 3.0e-3), _row(2, 5.0e-3, **change)])
    assert len(groups) == 2


def test_rows_on_different_data_are_not_pooled() -> None:
    other = _row(2, 5.0e-3)
    other["data"] = copy.deepcopy(other["data"]) | {"checksum": "sha256:cd"}
    assert len(aggregate([_row(1, 3.0e-3), other])) == 2


def test_the_recorded_rows_give_the_recorded_tables() -> None:
    """The repository's reproduction.md is the markdown of its reproduction.json (the rows
    all load, and regenerating the tables changes nothing)."""
    path = ROOT / "benchmarks" / "results" / "reproduction.json"
    results = load_results(path)
    assert results["runs"]
    assert markdown(results) == path.with_suffix(".md").read_text()
    assert all("seed" in row for row in json.loads(path.read_text())["runs"].values())
