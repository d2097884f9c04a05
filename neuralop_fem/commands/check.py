"""``neuralop-fem check FILE.nc``: our solver on a dataset's inputs, against its labels.

Solves the first ``--samples`` inputs with the classical solver the file's provenance names, on
grids ``--refine`` times finer than the data (read at the data's own points: the source
coordinates of an imported file), and prints the relative L2 error against the stored labels
per grid and where it levels off. Import a peer's file first (``neuralop-fem import``) and
give the physical parameters it lacks there.
"""

from __future__ import annotations

import argparse
import sys

from ..data import load_dataset
from ..data.peers.check import check_labels
from ..files import write_json_atomic
from ..number_options import int_range
from ..path_options import check_input_file, check_output_file, input_file, output_file

__all__ = ["register", "run"]


def _factors(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        values = ()
    if not values or any(v < 1 or v > 64 for v in values):
        msg = f"must be comma-separated integers in [1, 64], e.g. 1,2,4; got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return values


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``check`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "check", help="check a dataset's labels with our solver (per sample, grid by grid)",
        description="Solve the inputs of FILE.nc with our solver on finer grids and compare "
        "with its labels at the data's points: the error per grid and where it levels off.")
    p.add_argument("file", type=input_file, metavar="FILE.nc", help="dataset file")
    p.add_argument("--samples", type=int_range(1), default=8, metavar="N",
                   help="check the first N samples (default 8)")
    p.add_argument("--refine", type=_factors, default=(1, 2, 4), metavar="R1,R2,...",
                   help="grid refinement factors (default 1,2,4)")
    p.add_argument("--out", type=output_file, metavar="FILE.json",
                   help="also write the per-sample errors as JSON")
    return p


def run(args: argparse.Namespace) -> int:
    """Execute ``neuralop-fem check``; return 0."""
    check_input_file(args.file, "FILE.nc")
    if args.out is not None:
        check_output_file(args.out, "--out")

    with load_dataset(args.file) as ds:
        result = check_labels(ds, refinements=args.refine, samples=args.samples)
    lines = [f"{args.file.name}: {result['solver']} on {result['samples']} samples against "
             "the stored labels (relative L2)",
             f"{result['grid']:>8}{'mean':>12}{'median':>12}{'max':>12}"]
    for row in result["rows"]:
        s = row["rel_l2"]
        lines.append(f"{row['grid']:>8}{s['mean']:>12.4e}{s['median']:>12.4e}{s['max']:>12.4e}")
    agree = result["agree_at"]
    unit = result["grid"] + (" per side" if result["ndim"] > 1 else "")
    if agree["round_off"]:
        lines.append(f"agree to round-off from grid {agree['grid']} ({unit}) on (mean "
                     f"{agree['mean_rel_l2']:.4e}, at most {agree['round_off_level']:g})")
    else:
        lines.append(f"closest from grid {agree['grid']} ({unit}) on (mean "
                     f"{agree['mean_rel_l2']:.4e})")
    sys.stdout.write("\n".join(lines) + "\n")
    if args.out is not None:
        write_json_atomic(args.out, result)
    return 0
