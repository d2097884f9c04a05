"""``neuralop-fem export FILE.nc --format neuralop|pdebench --out FILE``: our data for others.

``--format neuralop`` writes a ``.pt`` dict (``x``, ``y``; Burgers also ``visc`` and the
trajectory times ``t``) that neuraloperator's ``PTDataset`` reads; ``--format pdebench`` an
HDF5 file in PDEBench's layout (1D Burgers ``tensor``/``x-coordinate``/``t-coordinate``, 2D
Darcy ``nu``/``tensor``/coordinates, ``beta``). See docs/data_from_other_tools.md.
"""

from __future__ import annotations

import argparse
import sys

from ..data import load_dataset
from ..data.peers import export_neuralop, export_pdebench
from ..path_options import check_input_file, check_output_file, input_file, output_file

__all__ = ["register", "run"]

_LAYOUTS = {"neuralop": "neuraloperator .pt dict", "pdebench": "PDEBench HDF5"}


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``export`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "export", help="write a dataset in neuraloperator's .pt or PDEBench's HDF5 layout",
        description="Write a neuralop_fem dataset as a neuraloperator .pt dict or a PDEBench "
        "HDF5 file (name it like theirs: 1D_Burgers_Sols_Nu{pi*viscosity}.hdf5, "
        "2D_DarcyFlow_beta{forcing}_Train.hdf5).")
    parser.add_argument("file", type=input_file, metavar="FILE.nc", help="dataset file")
    parser.add_argument("--format", required=True, choices=("neuralop", "pdebench"))
    parser.add_argument("--out", required=True, type=output_file, metavar="FILE",
                        help="output file (.pt or .hdf5)")
    parser.add_argument("--dtype", choices=("float64", "float32"),
                        help="float type of the fields (default: the dataset's)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    return parser


def run(args: argparse.Namespace) -> int:
    """Write ``args.file`` to ``args.out`` in ``args.format``; return 0."""
    check_input_file(args.file, "FILE.nc")
    check_output_file(args.out, "--out", overwrite=args.overwrite)

    write = export_neuralop if args.format == "neuralop" else export_pdebench
    with load_dataset(args.file) as ds:
        out = write(ds, args.out, dtype=args.dtype)
    sys.stdout.write(f"wrote {out} ({_LAYOUTS[args.format]} of {args.file})\n")
    return 0
