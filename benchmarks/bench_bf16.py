"""What bf16 autocast costs in accuracy and gains in speed, by which parts stay in float32
(``benchmarks.lab.bf16``): the output deviation of the zoo's models whose data file
is given and of any run directories in ``--runs``, and training steps per second.

Run (on a CPU with native bf16; elsewhere bf16 is emulated and the speeds say little)::

    python -m benchmarks.bench_bf16 --burgers-data burgers_nugt_n8192_N1224.nc \
        [--darcy-data darcy_n421_N1224.nc] [--runs RUN ...] [--samples 30]

Writes ``benchmarks/results/bf16.json`` and ``bf16.md``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
import xarray as xr

from benchmarks.lab import bf16
from neuralop_fem.environment import environment_record
from neuralop_fem.reproduce.results import footer, write_results
from neuralop_fem.runs import RunDir
from neuralop_fem.training.amp import cpu_bf16_features
from neuralop_fem.zoo import available

RESULTS = Path(__file__).parent / "results"


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
        problem = RunDir.resolve(source).read().data.problem
        if problem in opened:
            rows.append(bf16.deviation_row(source, opened[problem], args.samples))
            print(rows[-1], flush=True)
    speed = []
    for preset, n, batch in bf16.SPEED_CASES:
        speed.append({"case": f"{preset} {n}, batch {batch}"} | {
            v: bf16.steps_per_second(preset, n, batch, v, args.steps)
            for v in bf16.SPEED_VARIANTS})
        print(speed[-1], flush=True)
    record = environment_record() | {"cpu_bf16_features": list(cpu_bf16_features())}
    md = bf16.markdown(rows, speed, ", ".join(cpu_bf16_features()))
    paths = write_results(RESULTS, "bf16", {"deviation": rows, "speed": speed, **record},
                          "\n".join([*md, "", *footer(record)]))
    print("wrote", *paths)


if __name__ == "__main__":
    main()
