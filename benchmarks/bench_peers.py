"""Our presets on neuraloperator's small Darcy set, beside their example FNO, same data and CPU.

Their ``darcy_train_16.pt``, ``darcy_test_16.pt`` and ``darcy_test_32.pt`` (their repository,
``neuralop/data/datasets/data``) are imported; the ``neuralop-darcy`` family of presets
(:mod:`neuralop_fem.problems.peer_presets`) trains as it stands and is evaluated on the test
files fed directly; their example FNO (``examples/models/plot_FNO_darcy.py``'s model and
settings) trains in the same process where the ``neuralop`` package imports. What is measured
and how:
:mod:`benchmarks.lab.peers` (``ours``, ``theirs``). Writes ``results/peers.{json,md}``.
Usage::

    python -m benchmarks.bench_peers --data-dir DIR [--epochs 15] [--presets A,B] [--seed S]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.lab.peers import THEIRS, import_files, markdown, ours, theirs
from neuralop_fem.environment import environment_record as record
from neuralop_fem.problems.peer_presets import get_preset
from neuralop_fem.reproduce.results import write_results
from neuralop_fem.reproduce.script_runner import run_script

RESULTS = Path(__file__).resolve().parent / "results"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True,
                        help="folder with darcy_train_16.pt, darcy_test_16.pt, darcy_test_32.pt")
    parser.add_argument("--epochs", type=int, default=15,
                        help="epochs of their FNO (their example's: 15)")
    parser.add_argument("--presets", default=",".join(get_preset("neuralop-darcy").train_presets),
                        help="our training presets, comma-separated (default: the "
                             "neuralop-darcy family)")
    parser.add_argument("--seed", type=int, default=0, help="seed of their FNO")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        files = import_files(args.data_dir, work)
        try:
            rows[THEIRS] = theirs(args.data_dir, args.epochs, args.seed)
        except ImportError as exc:
            rows[THEIRS] = {"error": f"not run: {exc}"}
        for preset in args.presets.split(","):
            rows[preset] = ours(preset, files, work)
    rec = record()
    write_results(RESULTS, "peers", {"rows": rows, "record": rec}, markdown(rows, rec))
    return 0


if __name__ == "__main__":
    raise SystemExit(run_script(main))
