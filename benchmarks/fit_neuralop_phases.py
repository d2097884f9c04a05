"""Which two-phase coefficient reproduces neuraloperator's small Darcy labels best?

Their ``darcy_train_16.pt`` stores the coefficient as booleans and no forcing. For each phase
ratio, this script maps True -> 1 and False -> 1/ratio (and the reverse), solves the first
``--samples`` coefficients with ``DarcyFDSolver`` (forcing 1) on the 17-node grid that holds
their points ``x_i = i/16`` (the last row and column copied), fits one scale factor per sample
(the forcing over the high phase value, since u is linear in f / a) and reports the median
relative L2 misfit and the median fitted scale
(:func:`benchmarks.lab.peers.fit_phases`). Writes ``results/neuralop_phases.{json,md}``::

    python -m benchmarks.fit_neuralop_phases --data /path/to/darcy_train_16.pt
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from benchmarks.lab.peers import PHASE_RATIOS, fit_phases, phase_markdown
from neuralop_fem.environment import environment_record as record
from neuralop_fem.reproduce.results import write_results
from neuralop_fem.reproduce.script_runner import run_script

RESULTS = Path(__file__).resolve().parent / "results"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="darcy_train_16.pt")
    parser.add_argument("--samples", type=int, default=50)
    args = parser.parse_args(argv)
    from neuralop_fem.data.peers.safe_torch import load_plain

    d = load_plain(args.data)
    x, y = d["x"][: args.samples], d["y"][: args.samples].astype(np.float64)
    rows = [{"ratio": ratio, "true_is_high": true_high,
             **fit_phases(x, y, *((1.0, 1.0 / ratio) if true_high else (1.0 / ratio, 1.0)))}
            for ratio in PHASE_RATIOS for true_high in (True, False)]
    rec = record()
    write_results(RESULTS, "neuralop_phases", {"rows": rows, "record": rec},
                  phase_markdown(rows, len(y), rec))
    return 0


if __name__ == "__main__":
    raise SystemExit(run_script(main))
