"""Our presets on neuraloperator's small Darcy set, beside their example FNO, same data and CPU.

The data are neuraloperator's ``darcy_train_16.pt`` (1000 samples, 16 x 16), ``darcy_test_16.pt``
and ``darcy_test_32.pt`` (50 each; their repository, ``neuralop/data/datasets/data``). They go
through ``import_neuralop`` (boolean phases -> the default phase values); our presets train on
the first 950 training samples with ``neuralop-fem train`` (49 validation samples pick the best
epoch) and are evaluated on the two test files with ``evaluate_run`` (at 32 through the
training grid, as ``evaluate`` does for Darcy). Where the ``neuralop`` package imports, their
example's FNO (``examples/models/plot_FNO_darcy.py``: n_modes 8, 24 channels, projection ratio
2, AdamW lr 1e-2 weight decay 1e-4, cosine schedule T_max 30, batch 64, H1 training loss on the
normalised output, 15 epochs) is trained on all 1000 samples by this script and evaluated on
the same files with the same metric (mean relative L2 = PDEBench's nRMSE).

Writes ``results/peers.{json,md}`` (the measurements: :mod:`neuralop_fem.benchmarking.peers`).
Usage::

    python benchmarks/bench_peers.py --data-dir DIR [--epochs 15] [--galerkin-epochs 5]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from neuralop_fem.benchmarking.peers import import_files, markdown, ours, theirs
from neuralop_fem.environment import environment_record as record
from neuralop_fem.reproduce.results import write_results
from neuralop_fem.reproduce.script import run_script

RESULTS = Path(__file__).resolve().parent / "results"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True,
                        help="folder with darcy_train_16.pt, darcy_test_16.pt, darcy_test_32.pt")
    parser.add_argument("--epochs", type=int, default=15, help="epochs (their example's: 15)")
    parser.add_argument("--galerkin-epochs", type=int, default=5,
                        help="epochs of darcy-galerkin (about 3x the cost per epoch)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        files = import_files(args.data_dir, work)
        try:
            rows["neuraloperator FNO (their example)"] = theirs(args.data_dir, args.epochs,
                                                                args.seed)
        except ImportError as exc:
            rows["neuraloperator FNO (their example)"] = {"error": f"not run: {exc}"}
        rows["darcy-fno"] = ours("darcy-fno", files, work, args.epochs)
        rows["darcy-galerkin"] = ours("darcy-galerkin", files, work, args.galerkin_epochs)
    rec = record()
    write_results(RESULTS, "peers", {"rows": rows, "record": rec}, markdown(rows, rec))
    return 0


if __name__ == "__main__":
    raise SystemExit(run_script(main))
