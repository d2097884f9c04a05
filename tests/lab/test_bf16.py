"""The bf16 benchmark's measurements: each rule keeps what it says in float32, the deviation
row reads a run's test split, the speed loop runs every variant."""

from __future__ import annotations

import math

import pytest
import torch

from benchmarks.lab import bf16
from neuralop_fem.models import NormalizedOperator, build_model

TINY = {"d_model": 8, "num_layers": 1, "d_ff": 8, "modes": 4, "freq_dim": 4}


def _hooked(model) -> set[str]:
    return {n for n, m in model.named_modules() if getattr(m, "_amp_float32", False)}


@pytest.mark.parametrize(("rule", "expected"), [("output layer", {"decoder.head.2"}),
                                                ("float32 parts", {"input_proj", "decoder"})])
def test_each_rule_keeps_its_parts_in_float32(rule, expected):
    op = NormalizedOperator(build_model("burgers-galerkin", **TINY))
    fwd = bf16.rounded_forward(op, rule)
    assert _hooked(op.model) == expected
    assert fwd(torch.rand(2, 32, 1)).dtype == torch.float32
    assert type(op.model).float32_parts == ("input_proj", "decoder")  # the class is unchanged
    with pytest.raises(ValueError, match="`rule` must be one of"):
        bf16.rounded_forward(op, "everything")


def test_deviation_row_of_a_trained_run(tmp_path, burgers_file):
    import xarray as xr

    from neuralop_fem.models import PRESETS
    from neuralop_fem.training import TrainConfig, Trainer

    config = TrainConfig(task="burgers", epochs=1, batch_size=4, n_train=12, n_val=4, n_test=4,
                         resolution=64, amp="none")
    with Trainer(tmp_path / "r", burgers_file, preset="burgers-galerkin",
                 model_config=PRESETS["burgers-galerkin"].replace(**TINY), config=config) as t:
        t.fit()
    with xr.open_dataset(burgers_file) as ds:
        row = bf16.deviation_row(str(tmp_path / "r"), ds.load(), samples=3)
    assert row["samples"] == 3
    assert row["parts"] == ["input_proj", "decoder"]
    assert row["precision trained"] == "none"
    for rule in bf16.RULES:
        assert 0 < row[rule] < 0.1, rule
    lines = bf16.markdown([row], [], "avx512_bf16")
    assert any(line.startswith(f"| {tmp_path / 'r'} | none | 3 |") for line in lines)


def test_steps_per_second_of_every_variant():
    for variant in bf16.SPEED_VARIANTS:
        rate = bf16.steps_per_second("burgers-fno", 64, 2, variant, steps=1)
        assert math.isfinite(rate)
        assert rate > 0
