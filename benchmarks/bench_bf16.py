"""What bf16 autocast costs in accuracy and gains in speed, by which parts stay in float32.

Two measurements, one thread:

* **Output deviation** of trained models: the mean over test samples of
  ``||f_bf16(x) - f(x)|| / ||f(x)||``, the float32 forward ``f`` against the bf16 one, with
  only the output layer in float32 (the rule before the float32 parts) and with the model's
  ``float32_parts`` (input layer and decoder: the package's rule, ``AmpForward``). A model
  trained in bf16 saw its training loss through this rounding. Models: the zoo's entries whose
  data file is given, and any run directories passed with ``--runs``.
* **Training speed** (optimiser steps per second, AdamW, random data of the presets' shapes)
  in float32 and in bf16 under both rules.

Run (on a CPU with native bf16; elsewhere bf16 is emulated and the speeds say little)::

    python benchmarks/bench_bf16.py --burgers-data burgers_nugt_n8192_N1224.nc \
        [--darcy-data darcy_n421_N1224.nc] [--runs RUN ...] [--samples 30]

Writes ``benchmarks/results/bf16.json`` and ``bf16.md``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from unittest import mock

import numpy as np
import torch
import xarray as xr

from neuralop_fem.environment import environment_record
from neuralop_fem.models import build_model
from neuralop_fem.reproduce.results import footer, write_results
from neuralop_fem.training import TrainConfig, load_trained
from neuralop_fem.training.amp import (
    AmpForward,
    bf16_deviation,
    cpu_bf16_features,
    keep_float32_parts,
)
from neuralop_fem.training.setup import make_dataset
from neuralop_fem.zoo import available

RESULTS = Path(__file__).parent / "results"
RULES = ("output layer", "float32 parts")
#: preset, resolution, batch size of the speed measurement
SPEED_CASES = (("burgers-fourier", 512, 8), ("burgers-galerkin", 512, 8),
               ("darcy-galerkin", 141, 4))


def rounded(operator, rule: str) -> AmpForward:
    """The bf16 forward of ``operator`` under ``rule`` (a fresh model per rule: the hooks stay)."""
    if rule == "float32 parts":
        return AmpForward(operator, amp="bf16", device_type="cpu")
    with mock.patch.object(type(operator.model), "float32_parts", ()):
        return AmpForward(operator, amp="bf16", device_type="cpu")


def test_split(info: dict, data: xr.Dataset, samples: int):
    fields = TrainConfig.__dataclass_fields__
    config = TrainConfig(**{k: v for k, v in info["train_config"].items()
                            if k in fields and not k.endswith("_indices")})
    indices = np.asarray(info["splits"]["test"])[:samples]
    return make_dataset(data, config, indices=indices, resolution=info["resolution"],
                        coarse=info.get("coarse_resolution"), noisy=False)


def deviations(source: str, data: xr.Dataset, samples: int) -> dict:
    row = {"model": source}
    for rule in RULES:
        operator, info = load_trained(source)
        test = test_split(info, data, samples)
        fwd = rounded(operator, rule)
        row[rule] = bf16_deviation(operator, test, device=torch.device("cpu"),
                                   batch_size=4, forward=fwd)
        row["float32 parts, names"] = list(fwd.float32_parts)
    row["samples"] = len(test)
    row["precision trained"] = info.get("precision", {}).get("amp", "none")
    return row


def steps_per_second(preset: str, n: int, batch: int, variant: str, steps: int) -> float:
    torch.manual_seed(0)
    model = build_model(preset)
    if variant == "bf16, output layer":
        with mock.patch.object(type(model), "float32_parts", ()):
            keep_float32_parts(model)
    elif variant == "bf16, float32 parts":
        keep_float32_parts(model)
    shape = (batch, n, 1) if preset.startswith("burgers") else (batch, n, n, 1)
    x, y = torch.randn(shape), torch.randn(shape)
    opt = torch.optim.AdamW(model.parameters(), 1e-4)

    def step():
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=variant != "float32"):
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--burgers-data", type=Path)
    parser.add_argument("--darcy-data", type=Path)
    parser.add_argument("--runs", nargs="*", default=[], metavar="RUN")
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--steps", type=int, default=15)
    args = parser.parse_args()
    torch.set_num_threads(1)
    files = {"burgers": args.burgers_data, "darcy": args.darcy_data}
    opened = {k: xr.open_dataset(v).load() for k, v in files.items() if v is not None}
    rows = []
    for source in [*(f"zoo:{name}" for name in available()), *args.runs]:
        problem = load_trained(source)[1]["data"]["problem"]
        if problem in opened:
            rows.append(deviations(source, opened[problem], args.samples))
            print(rows[-1], flush=True)
    speed = []
    for preset, n, batch in SPEED_CASES:
        entry = {"case": f"{preset} {n}, batch {batch}"}
        for variant in ("float32", "bf16, output layer", "bf16, float32 parts"):
            entry[variant] = steps_per_second(preset, n, batch, variant, args.steps)
        speed.append(entry)
        print(entry, flush=True)
    record = environment_record()
    record["cpu_bf16_features"] = list(cpu_bf16_features())
    md = ["# bf16 autocast: output deviation and training speed", "",
          f"CPU native bf16: {', '.join(cpu_bf16_features()) or 'none'}; one thread.", "",
          "## How far a bf16 forward pass moves trained models' outputs", "",
          "Mean over test samples of ||f_bf16(x) - f(x)|| / ||f(x)||.", "",
          "| model | trained in | samples | output layer in float32 | float32 parts | parts |",
          "|---|---|---|---|---|---|"]
    md += [f"| {r['model']} | {r['precision trained']} | {r['samples']} | "
           f"{r['output layer']:.2e} | {r['float32 parts']:.2e} | "
           f"{', '.join(r['float32 parts, names'])} |" for r in rows]
    md += ["", "## Training steps per second (AdamW, random data)", "",
           "| case | float32 | bf16, output layer in float32 | bf16, float32 parts |",
           "|---|---|---|---|"]
    md += [f"| {s['case']} | {s['float32']:.2f} | {s['bf16, output layer']:.2f} | "
           f"{s['bf16, float32 parts']:.2f} |" for s in speed]
    md += ["", *footer(record)]
    paths = write_results(RESULTS, "bf16", {"deviation": rows, "speed": speed, **record},
                          "\n".join(md))
    print("wrote", *paths)


if __name__ == "__main__":
    main()
