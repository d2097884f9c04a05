"""Reproduce Cao 2021's tables: the command line of earlier releases, on `neuralop-fem reproduce`.

Kept so that the commands recorded in ``results/reproduction.json`` still run: ``--check-data
FILE`` becomes ``reproduce check-data FILE``, ``--record RUN_DIR --data FILE`` ``reproduce
record``, anything else ``reproduce run``; the results, data and run folders default to
``benchmarks/results/``, ``data/`` and ``runs/`` of this checkout. New commands: see
``neuralop-fem reproduce --help`` and docs/training.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from neuralop_fem.cli import main

ROOT = Path(__file__).resolve().parents[1]


def translate(argv: list[str]) -> list[str]:
    """The ``neuralop-fem`` arguments of this script's arguments."""
    p = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    for flag in ("--record", "--check-data"):
        p.add_argument(flag, action="append", default=[])
    for flag in ("--data-dir", "--runs-dir", "--results"):
        p.add_argument(flag)
    p.add_argument("--quick", action="store_true")
    known, rest = p.parse_known_args(argv)
    stem = "reproduction_quick" if known.quick else "reproduction"
    common = ["--results", known.results or str(ROOT / "benchmarks" / "results" / f"{stem}.json")]
    common += ["--quick"] if known.quick else []
    data_dir = ["--data-dir", known.data_dir or str(ROOT / "data" / stem)]
    if known.check_data:
        return ["reproduce", "check-data", *known.check_data, *rest, *common]
    if known.record:
        return ["reproduce", "record", *known.record, *rest, *common, *data_dir]
    runs = ["--runs-dir", known.runs_dir or str(ROOT / "runs" / stem)]
    return ["reproduce", "run", *rest, *common, *data_dir, *runs]


if __name__ == "__main__":
    sys.exit(main(translate(sys.argv[1:])))
