"""What bf16 autocast costs in accuracy and gains in speed, by which parts stay in float32
(``benchmarks/bench_bf16.py``).

* :func:`deviation_row`: how far a bf16 forward pass moves a trained model's output,
  ``mean_i ||f_bf16(x_i) - f(x_i)|| / ||f(x_i)||`` on its test split, under each rule of
  :data:`RULES`: only the output layer in float32 (the rule before the float32 parts), and the
  model's ``float32_parts`` (the package's rule, :class:`~neuralop_fem.training.amp.AmpForward`).
* :func:`steps_per_second`: AdamW training steps per second on random data of a preset's
  shape, in float32 and in bf16 under both rules.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from neuralop_fem.models import build_model
from neuralop_fem.runs import RunRecord
from neuralop_fem.runs.operator import load_run
from neuralop_fem.training.amp import AmpForward, bf16_deviation, float32_parts, keep_float32_parts
from neuralop_fem.training.setup import make_dataset

__all__ = ["RULES", "SPEED_CASES", "SPEED_VARIANTS", "deviation_row", "markdown",
           "rounded_forward", "steps_per_second"]

#: The bf16 rules compared: what stays in float32 besides the FFTs and the normalisers.
RULES = ("output layer", "float32 parts")
#: The speed measurement's variants.
SPEED_VARIANTS = ("float32", "bf16, output layer", "bf16, float32 parts")
#: preset, resolution, batch size of the speed measurement
SPEED_CASES = (("burgers-fourier", 512, 8), ("burgers-galerkin", 512, 8),
               ("darcy-galerkin", 141, 4))


def _names(rule: str) -> tuple[str, ...] | None:
    """The float32 part names of ``rule`` (None: the model class's own)."""
    if rule not in RULES:
        msg = f"`rule` must be one of {RULES}; got {rule!r}."
        raise ValueError(msg)
    return () if rule == "output layer" else None  # (): the output layer alone


def rounded_forward(operator: Any, rule: str) -> Any:
    """The bf16 forward pass (:class:`~neuralop_fem.training.amp.AmpForward`) of ``operator``
    under ``rule`` (one of :data:`RULES`). The hooks stay on the model: use a fresh model for
    each rule."""

    return AmpForward(operator, amp="bf16", device_type="cpu", parts=_names(rule))


def _test_split(record: RunRecord, data: Any, samples: int) -> Any:
    indices = np.asarray(record.test_indices)[:samples]
    return make_dataset(data, record.config, indices=indices, resolution=record.resolution,
                        coarse=record.coarse_resolution, noisy=False)


def deviation_row(source: str, data: Any, samples: int) -> dict[str, Any]:
    """The output deviation of the trained model ``source`` (a run directory or ``zoo:NAME``)
    under each of :data:`RULES`, on the first ``samples`` of its test split read from ``data``
    (its xarray dataset; the inverse task without noise), one thread's worth of CPU."""
    row: dict[str, Any] = {"model": source}
    test = None
    for rule in RULES:  # a fresh model for each rule: the hooks stay on a model
        operator, record = load_run(source)
        test = _test_split(record, data, samples) if test is None else test
        row[rule] = bf16_deviation(operator, test, device=torch.device("cpu"), batch_size=4,
                                   forward=rounded_forward(operator, rule))
    row["parts"] = list(float32_parts(operator.model))
    row["samples"] = len(test)
    row["precision trained"] = (record.precision or {}).get("amp", "none")
    return row


def steps_per_second(preset: str, n: int, batch: int, variant: str, steps: int) -> float:
    """AdamW steps per second of ``preset`` at ``n`` points per side, batch ``batch``, random
    data, in ``variant`` (one of :data:`SPEED_VARIANTS`), after three warm-up steps."""
    torch.manual_seed(0)
    model = build_model(preset)
    bf16 = variant != "float32"
    if bf16:
        keep_float32_parts(model, _names(variant.removeprefix("bf16, ")))
    shape = (batch, n, 1) if preset.startswith("burgers") else (batch, n, n, 1)
    x, y = torch.randn(shape), torch.randn(shape)
    opt = torch.optim.AdamW(model.parameters(), 1e-4)

    def step() -> None:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            out = model(x)
        loss = ((out.float() - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()

    for _ in range(3):
        step()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    return steps / (time.perf_counter() - t0)


def markdown(rows: list[dict[str, Any]], speed: list[dict[str, Any]], cpu_flags: str) -> list[str]:
    """The tables of ``bf16.md`` (without the footer)."""
    md = ["# bf16 autocast: output deviation and training speed", "",
          f"CPU native bf16: {cpu_flags or 'none'}; one thread.", "",
          "## How far a bf16 forward pass moves trained models' outputs", "",
          "Mean over test samples of ||f_bf16(x) - f(x)|| / ||f(x)||.", "",
          "| model | trained in | samples | output layer in float32 | float32 parts | parts |",
          "|---|---|---|---|---|---|"]
    md += [f"| {r['model']} | {r['precision trained']} | {r['samples']} | "
           f"{r['output layer']:.2e} | {r['float32 parts']:.2e} | {', '.join(r['parts'])} |"
           for r in rows]
    md += ["", "## Training steps per second (AdamW, random data)", "",
           "| case | float32 | bf16, output layer in float32 | bf16, float32 parts |",
           "|---|---|---|---|"]
    md += [f"| {s['case']} | " + " | ".join(f"{s[v]:.2f}" for v in SPEED_VARIANTS) + " |"
           for s in speed]
    return md
