"""The fair verdict for trained surrogates: speed-up at equal accuracy and accuracy at equal cost.

For each ``--run RUN_DIR:DATA.nc`` pair, ``neuralop_fem.evaluation.compare_run`` places the run's
surrogate on the accuracy-cost front of its problem's solver ladder (solvers/problems.py), on
the run's test split of the dataset: errors against the dataset's stored solutions (inverse
runs: the coefficient error against the true coefficient on the observation grid, the
inversion ladder inverting the same noisy observations), times per
sample at the full batch and one sample per call on one thread, and on all cores (the solver in
a process pool, the surrogate with as many torch threads). The surrogate's training budget
(epochs, samples, wall time) is recorded beside it: a verdict is about that model, not about
what the architecture could reach. Writes benchmarks/results/fair.{json,md}; the reports
(summary.md, plots, comparison.nc) go to ``--reports``. The measurement is
:func:`benchmarks.lab.fair.verdict_of_run`.

Run: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python -m benchmarks.bench_fair \\
         --run RUN_DIR:DATA.nc [--run zoo:NAME:DATA.nc ...] [--max-samples 16] [--reports DIR]
         [--results DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.lab.fair import markdown, verdict_of_run
from neuralop_fem.environment import environment_record as record
from neuralop_fem.errors import InputError
from neuralop_fem.reproduce.results import write_results
from neuralop_fem.reproduce.script_runner import count, run_script
from neuralop_fem.zoo import resolve_run_dir

RESULTS = Path(__file__).resolve().parent / "results"


def _pair(text: str) -> tuple[Path, Path]:
    """``RUN_DIR:DATA.nc`` or ``zoo:NAME:DATA.nc`` (a model of the zoo)."""
    run, sep, data = text.rpartition(":")
    if run.startswith("zoo:"):  # a model of the zoo: its directory, or why there is none
        try:
            run = str(resolve_run_dir(run))
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc).rstrip(".")) from None
    if not sep or not Path(run).is_dir() or not Path(data).is_file():
        msg = ("must be RUN_DIR:DATA.nc or zoo:NAME:DATA.nc with an existing run directory and "
               f"file; got {text!r}")
        raise argparse.ArgumentTypeError(msg)
    return Path(run), Path(data)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=_pair, action="append", required=True,
                        metavar="RUN_DIR:DATA.nc",
                        help="a training run (or zoo:NAME) and its dataset")
    parser.add_argument("--max-samples", type=count(2), default=16,
                        help="test samples per run (default 16)")
    parser.add_argument("--reports", type=Path, default=Path("fair_reports"),
                        help="directory for the comparison reports (default ./fair_reports)")
    parser.add_argument("--results", type=Path, default=RESULTS,
                        help="directory of fair.{json,md} (default benchmarks/results, the "
                             "committed figures)")
    parser.add_argument("--note", action="append", default=[],
                        help="a line for the results file (e.g. what is missing); repeatable")
    args = parser.parse_args(argv)
    runs = [verdict_of_run(r, d, max_samples=args.max_samples, reports=args.reports)
            for r, d in args.run]
    data = {"runs": runs, "notes": args.note, "record": record()}
    text = markdown(data)
    args.results.mkdir(parents=True, exist_ok=True)
    js, md = write_results(args.results, "fair", data, text)
    print(text)
    print(f"wrote {js} and {md}")
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
