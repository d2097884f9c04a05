"""Samples/s of the torch twins of the Burgers and Darcy solvers against the numpy solvers.

Burgers n = 128, 1024, 8192 and Darcy 43, 141, 421; the twin at batch sizes 1 to 1024 (on a
CPU fewer, and fewer samples at the large grids), the numpy solvers as the generator runs them
on all cores (:mod:`benchmarks.lab.gpu_solvers` says what is timed). Writes
``benchmarks/results/gpu_solvers.{json,md}`` (``--device cuda``: ``gpu_solvers_cuda``; the GPU
campaign's ``solvers`` stage runs it on a GPU).

    nice -n 10 python -m benchmarks.bench_gpu_solvers              # this CPU, a few minutes
    python -m benchmarks.bench_gpu_solvers --device cuda           # a GPU machine
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.lab.gpu_solvers import markdown, run
from neuralop_fem.reproduce.results import write_results
from neuralop_fem.reproduce.script_runner import count, run_script

RESULTS = Path(__file__).parent / "results"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", help="torch device of the twins (default cpu)")
    parser.add_argument("--workers", type=count(), help="numpy processes (default: all cores)")
    parser.add_argument("--rehearse", action="store_true", help="tiny sizes (seconds)")
    args = parser.parse_args(argv)
    info = run(args.device, rehearse=args.rehearse, workers=args.workers)
    text = markdown(info)
    stem = "gpu_solvers" + ("" if args.device == "cpu" else "_cuda")
    if not args.rehearse:
        write_results(RESULTS, stem, info, text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
