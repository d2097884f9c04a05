"""Inference speed of the zoo's models: ``Surrogate.solve`` against the bare forward pass, FLOPs,
the share of a dense matmul's rate, and each precision's accuracy cost
(``neuralop_fem.benchmarking.inference``).

Run (a few minutes on two cores; ``--gpu`` adds a CUDA device's rows)::

    nice python benchmarks/bench_inference.py [--models NAME ...] [--samples 24] [--gpu]

Writes ``benchmarks/results/inference.json`` and ``inference.md`` (``--out`` another folder);
``--merge`` measures only ``--models`` and replaces their entries in the existing file (the
commands of both runs are recorded).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
from pathlib import Path

from neuralop_fem.benchmarking import inference
from neuralop_fem.environment import environment_record
from neuralop_fem.reproduce.results import footer, write_results
from neuralop_fem.surrogate import Surrogate
from neuralop_fem.training.amp import cpu_bf16_features

RESULTS = Path(__file__).parent / "results"


def parser() -> argparse.ArgumentParser:
    """The command line (also read back from the recorded commands of a merged file)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=inference.zoo_models())
    parser.add_argument("--samples", type=int, default=24)
    parser.add_argument("--batches", type=int, nargs="*", default=list(inference.CPU_BATCHES))
    parser.add_argument("--max-call-s", type=float, default=30.0,
                        help="skip a cell whose one call would take longer (default 30)")
    parser.add_argument("--gpu", action="store_true", help="also time CUDA")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--compile", nargs="*", default=[], metavar="NAME",
                        help="also time these models' forward pass under torch.compile "
                        "(batch 16, one CPU thread)")
    parser.add_argument("--merge", action="store_true",
                        help="replace only these models' entries of the existing results")
    return parser


def merge_notes(commands: list[str]) -> list[str]:
    """One line per ``--merge`` command: the models and compile timings it measured again."""
    notes = []
    for command in commands:
        args = parser().parse_args(shlex.split(command)[2:])
        if args.merge:
            again = ", ".join(args.models) or "no model"
            extra = f"; torch.compile: {', '.join(args.compile)}" if args.compile else ""
            notes.append(f"`{command}` measured again: {again}{extra} (the matmul peaks are "
                         "the first command's).")
    return notes


def main() -> None:
    args = parser().parse_args()
    cores = os.cpu_count() or 1
    plan = inference.Plan(models=tuple(args.models), samples=args.samples,
                          cpu_threads=(1, cores) if cores > 1 else (1,),
                          cpu_batches=tuple(args.batches), gpu=args.gpu,
                          max_call_s=args.max_call_s)
    result = inference.measure(plan, log=lambda line: print(line, flush=True))
    compiled = []
    for name in args.compile:
        sur = Surrogate.pretrained(name, device="cpu")
        ds = inference.fresh_dataset(sur.card or {}, 2)
        with inference.threads(1):
            row = inference.compile_row(sur, inference.fresh_samples(sur, ds)[0])
        compiled.append({**row, "name": name, "where": "CPU, 1 thread"})
        print(compiled[-1], flush=True)
    result["compile"] = compiled
    record = environment_record() | {"cpu_bf16_features": list(cpu_bf16_features())}
    notes = [f"CPU native bf16: {', '.join(cpu_bf16_features()) or 'none'}."]
    if args.merge:
        old = json.loads((args.out / "inference.json").read_text())
        new = {m["name"]: m for m in result["models"]}
        result["models"] = [new.pop(m["name"], m) for m in old["models"]] + list(new.values())
        result["peaks"] = old["peaks"]
        again = {c["name"] for c in compiled}
        result["compile"] = [c for c in old.get("compile", []) if c["name"] not in again]
        result["compile"] += compiled
        commands = [*old.get("commands", [old["command"]]), record["command"]]
        record["command"] = " && ".join(commands)
        record["commands"] = commands
        notes += merge_notes(commands)
    md = inference.markdown(result["models"], result["peaks"], notes=notes,
                            compiled=result["compile"])
    paths = write_results(args.out, "inference", {**result, **record},
                          "\n".join([*md, "", *footer(record)]))
    print("wrote", *paths)


if __name__ == "__main__":
    main()
