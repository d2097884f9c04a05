"""The loss-jump table behind the divergence guard's threshold (bench_loss_jumps.py)."""

from __future__ import annotations

import math

from benchmarks.lab.loss_jumps import jump_rows, largest_jump, markdown


def _csv(path, losses):
    rows = ["epoch,train_loss,val_rel_l2"] + [f"{i + 1},{v},0.5" for i, v in enumerate(losses)]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_the_rows_flag_a_collapse_and_not_a_noisy_run(tmp_path):
    calm = _csv(tmp_path / "calm_metrics.csv", [1.0, 0.5, 0.9, 0.4, 0.45])
    collapse = _csv(tmp_path / "collapse_metrics.csv", [1.0, 0.5, 0.3, 600.0, float("nan")])
    rows = jump_rows([calm, collapse], factor=10.0)
    assert [r["run"] for r in rows] == ["collapse", "calm"]
    assert math.isinf(rows[0]["largest_jump"])  # the nan epoch
    assert rows[0]["guard_fires"]
    assert rows[1] == {"run": "calm", "epochs": 5, "largest_jump": 1.8, "at_epoch": 3,
                       "guard_fires": False}
    text = "\n".join(markdown(rows, factor=10.0))
    assert "2 runs; the guard (factor 10) would have undone an epoch in 1" in text
    assert "The largest jump of the others: 1.8 times" in text


def test_the_largest_jump_is_measured_against_the_lowest_earlier_epoch():
    assert largest_jump([2.0, 1.0, 4.0, 0.5, 3.0]) == (6.0, 5)
    assert largest_jump([1.0]) == (0.0, 0)
