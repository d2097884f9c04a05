"""Throughput of dataset generation and the overhead of the data layer.

For each problem at its benchmark resolution (Burgers 8192, Darcy 421) this measures

- samples/s of ``neuralop_fem.data.generate`` with 1 and 2 worker processes (wall time of
  the whole call: worker start-up, solves, chunk files, assembly of the netCDF file);
- the bare solver on the same samples in this process (GRF sampling + ``solve_with_report``
  per chunk, nothing written), and the overhead of ``generate(workers=0)`` over it;
- the file size per sample (float64, zlib).

Writes ``benchmarks/results/generate.json`` and ``generate.md``. ``--quick``: a smoke run at
small resolutions. Run with OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1. The measurement is
:func:`benchmarks.lab.generation.measure`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.lab.generation import markdown, measure
from neuralop_fem.environment import command_line, cpu_model, package_versions, thread_settings
from neuralop_fem.reproduce.results import write_results
from neuralop_fem.reproduce.script_runner import count, run_script

RESULTS = Path(__file__).parent / "results"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run at small resolutions")
    parser.add_argument("--samples", type=count(), default=None, help="samples per measurement")
    parser.add_argument("--repeats", type=count(), default=None)
    args = parser.parse_args(argv)
    if args.quick:
        plan = [("burgers", 256, args.samples or 16), ("darcy", 33, args.samples or 8)]
    else:
        plan = [("burgers", 8192, args.samples or 32), ("darcy", 421, args.samples or 16)]
    repeats = args.repeats or (1 if args.quick else 2)
    rows = [measure(p, n, r, repeats) for p, r, n in plan]
    import os

    info = {"benchmark": "generate", "quick": args.quick, "cpu": cpu_model(),
            "cores": os.cpu_count(), "threads": thread_settings(),
            "note": "2-core box shared with other jobs while measuring; the workers' start-up "
                    "(imports, ~2-5 s each) is inside the 1/2-worker times.",
            "versions": package_versions(), "command": command_line(), "results": rows}
    text = markdown(info)
    write_results(RESULTS, "generate_quick" if args.quick else "generate", info, text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
