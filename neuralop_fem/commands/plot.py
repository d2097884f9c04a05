"""``neuralop-fem plot FILE.nc --out DIR``: figures of a few samples of a dataset.

Burgers: input and solution curves per sample; Darcy: coefficient and solution maps, x
horizontal, one colour scale per field (:func:`neuralop_fem.data.plotting.plot_samples`).
An existing ``DIR/samples.png`` is replaced only with ``--overwrite`` (as ``compare`` and
``export`` do); ``DIR`` is created only when the figure is written, so an error leaves nothing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys

from ..data import load_dataset
from ..data.plotting import plot_samples
from ..errors import UsageError
from ..number_options import int_range
from ..path_options import check_input_file, check_output_dir, input_file, output_dir

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``plot`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "plot", help="plot a few samples of a dataset file",
        description="Write DIR/samples.png: the first samples of a dataset (Burgers: u0 and u "
        "over x; Darcy: a and u maps with x horizontal and y up, one colour scale per field).",
    )
    p.add_argument("file", type=input_file, metavar="FILE.nc", help="dataset file")
    p.add_argument("--out", type=output_dir, required=True, metavar="DIR",
                   help="directory for the PNG (created)")
    p.add_argument("--samples", type=int_range(1, 12), default=3, metavar="K",
                   help="samples shown, the first K (default 3, at most 12)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an existing DIR/samples.png")
    return p


def run(args: argparse.Namespace) -> int:
    """Execute ``neuralop-fem plot``; return the exit status."""
    check_input_file(args.file, "FILE.nc")
    check_output_dir(args.out, "--out")
    target = args.out / "samples.png"
    if target.exists() and not args.overwrite:
        msg = (f"argument --out: {os.fspath(target)!r} exists (pass --overwrite to replace "
               "it).")
        raise UsageError(msg)
    import matplotlib

    matplotlib.use("Agg")

    created = not args.out.exists()
    args.out.mkdir(exist_ok=True)
    try:
        with load_dataset(args.file) as ds:
            path = plot_samples(ds, args.out, n_samples=args.samples)
    except BaseException:
        if created:  # leave nothing behind: the folder is ours and holds at most a part-PNG
            shutil.rmtree(args.out, ignore_errors=True)
        raise
    sys.stdout.write(f"wrote {path}\n")
    return 0
