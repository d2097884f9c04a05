"""Our presets on neuraloperator's small Darcy set, beside their example FNO, same data and CPU.

The data are neuraloperator's ``darcy_train_16.pt`` (1000 samples, 16 x 16), ``darcy_test_16.pt``
and ``darcy_test_32.pt`` (50 each; their repository, ``neuralop/data/datasets/data``). They go
through ``import_neuralop`` (boolean phases -> the default phase values; the points ``x_i = i/n``
recorded, so our models pin only the first row and column of the prediction). Our presets tuned
for this size of data (``darcy-*-neuralop``: models/presets.py, the ``neuralop-darcy`` family of
:mod:`neuralop_fem.peer_presets`) train with ``neuralop-fem train --preset NAME`` as they stand:
950 training samples, 49 validation samples that pick the best epoch, each preset's epoch
count. They are evaluated on the two test files with ``evaluate_run``, each model fed the
file's own grid (at 32 the 32 x 32 data, as their FNO is; ``rel_l2_resample`` in the JSON is the
error through the 16 x 16 training grid instead). Where the ``neuralop`` package imports, their
example's FNO (``examples/models/plot_FNO_darcy.py``: n_modes 8, 24 channels, projection ratio
2, AdamW lr 1e-2 weight decay 1e-4, cosine schedule T_max 30, batch 64, H1 training loss on the
normalised output, 15 epochs) is trained on all 1000 samples by this script and evaluated on
the same files with the same metric (mean relative L2 = PDEBench's nRMSE), in the same process
on the same thread.

Writes ``results/peers.{json,md}`` (the measurements: :mod:`neuralop_fem.benchmarking.peers`).
Usage::

    python benchmarks/bench_peers.py --data-dir DIR [--epochs 15] [--presets A,B] [--seed S]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from neuralop_fem.benchmarking.peers import THEIRS, import_files, markdown, ours, theirs
from neuralop_fem.environment import environment_record as record
from neuralop_fem.peer_presets import get_preset
from neuralop_fem.reproduce.results import write_results
from neuralop_fem.reproduce.script import run_script

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
