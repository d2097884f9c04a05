"""The largest rise of an epoch's mean training loss over the lowest before it, in every
committed ``*metrics.csv`` of ``benchmarks/results`` (and any further files given):
the evidence for the divergence guard's default factor (``benchmarks.lab.loss_jumps``).

Run::

    python -m benchmarks.bench_loss_jumps [--files RUN/metrics.csv ...]

Writes ``benchmarks/results/loss_jumps.json`` and ``loss_jumps.md``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks.lab import loss_jumps
from neuralop_fem.environment import environment_record
from neuralop_fem.reproduce.results import footer, write_results
from neuralop_fem.training import TrainConfig

RESULTS = Path(__file__).parent / "results"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", nargs="*", default=[], type=Path, metavar="CSV")
    args = parser.parse_args()
    factor = TrainConfig().divergence_factor
    paths = sorted(RESULTS.rglob("*metrics.csv")) + args.files
    rows = loss_jumps.jump_rows(paths, factor=factor)
    record = environment_record()
    md = loss_jumps.markdown(rows, factor=factor)
    out = write_results(RESULTS, "loss_jumps", {"factor": factor, "runs": rows, **record},
                        "\n".join([*md, "", *footer(record)]))
    print("\n".join(md[:3]), "\nwrote", *out)


if __name__ == "__main__":
    main()
