"""Inference speed of the zoo's models: ``Surrogate.solve`` against the bare forward pass, FLOPs,
the share of a dense matmul's rate, and each precision's accuracy cost
(``benchmarks.lab.inference``).

Run (a few minutes on two cores; ``--gpu`` adds a CUDA device's rows)::

    nice python -m benchmarks.bench_inference [--models NAME ...] [--samples 24] [--gpu]

Writes ``benchmarks/results/inference.json`` and ``inference.md`` (``--out`` another folder);
``--merge`` measures only ``--models`` and replaces their entries in the existing file (the
commands of both runs are recorded).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from benchmarks.lab import inference, inference_report
from neuralop_fem.environment import environment_record
from neuralop_fem.reproduce.results import footer, write_results
from neuralop_fem.training.amp import cpu_bf16_features

RESULTS = Path(__file__).parent / "results"
PARSER = argparse.ArgumentParser(description=__doc__.splitlines()[0])
PARSER.add_argument("--models", nargs="*", default=inference.zoo_models())
PARSER.add_argument("--samples", type=int, default=24)
PARSER.add_argument("--batches", type=int, nargs="*", default=list(inference.CPU_BATCHES))
PARSER.add_argument("--max-call-s", type=float, default=30.0,
                    help="skip a cell whose one call would take longer (default 30)")
PARSER.add_argument("--gpu", action="store_true", help="also time CUDA")
PARSER.add_argument("--out", type=Path, default=RESULTS)
PARSER.add_argument("--compile", nargs="*", default=[], metavar="NAME",
                    help="time these models' forward pass under torch.compile too")
PARSER.add_argument("--merge", action="store_true",
                    help="replace only these models' entries of the existing results")


def main() -> None:
    args = PARSER.parse_args()
    cores = os.cpu_count() or 1
    plan = inference.Plan(models=tuple(args.models), samples=args.samples,
                          cpu_threads=(1, cores) if cores > 1 else (1,),
                          cpu_batches=tuple(args.batches), gpu=args.gpu,
                          max_call_s=args.max_call_s)
    result = inference.measure(plan, log=lambda line: print(line, flush=True))
    result["compile"] = inference_report.compile_rows(args.compile)
    record = environment_record() | {"cpu_bf16_features": list(cpu_bf16_features())}
    notes = [f"CPU native bf16: {', '.join(cpu_bf16_features()) or 'none'}."]
    if args.merge:
        old = json.loads((args.out / "inference.json").read_text())
        record["commands"] = inference_report.merge(old, result, record["command"])
        record["command"] = " && ".join(record["commands"])
        notes += inference_report.merge_notes(record["commands"], PARSER.parse_args)
    md = inference_report.markdown(result["models"], result["peaks"], notes=notes,
                                   compiled=result["compile"])
    paths = write_results(args.out, "inference", {**result, **record},
                          "\n".join([*md, "", *footer(record)]))
    print("wrote", *paths)


if __name__ == "__main__":
    main()
