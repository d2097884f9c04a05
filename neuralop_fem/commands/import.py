"""``neuralop-fem import neuralop|pdebench FILE --out FILE.nc``: other tools' data to netCDF.

* ``import neuralop FILE.pt``: a neuraloperator ``.pt`` dict (``x``/``y`` or
  ``input``/``output``), read without running code from the file (a pickle of anything but
  tensors, dicts and lists is refused);
* ``import pdebench FILE.hdf5``: a PDEBench 1D Burgers or 2D Darcy file, streamed in sample
  chunks (files of several GB), its parameter taken from the file (name) unless given.

The result is a dataset of the schema, with the source's grid convention, keys and physical
parameters in its attributes (``neuralop-fem info`` shows them); ``train``, ``evaluate`` and
``compare`` take it like any other. See docs/data_from_other_tools.md.
"""

from __future__ import annotations

import argparse
import math
import sys

from ..data.peers import import_neuralop, import_pdebench
from ..errors import UsageError
from ..number_options import float_range
from ..path_options import check_input_file, check_output_file, input_file, output_file
from ..problems import get_kit, kits

__all__ = ["register", "run"]


def _phases(text: str) -> tuple[float, float]:
    parts = text.split(",")
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        values = ()
    if len(values) != 2 or not all(math.isfinite(v) and v > 0 for v in values):
        msg = f"must be HIGH,LOW: two finite numbers > 0; got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return values  # type: ignore[return-value]


def _common(p: argparse.ArgumentParser, suffix: str, mapping: str) -> None:
    p.add_argument("file", type=input_file, metavar=f"FILE{suffix}", help="the file to import")
    p.add_argument("--out", required=True, type=output_file, metavar="FILE.nc",
                   help="output netCDF file")
    # The problems whose kit maps this tool's files (their `mapping` field).
    p.add_argument("--problem", choices=tuple(k.name for k in kits() if getattr(k, mapping)),
                   help="the problem (default: the one whose layout the file's arrays fit)")
    p.add_argument("--dtype", choices=("float64", "float32"),
                   help="storage type of the fields (default: the file's)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    p.add_argument("--viscosity", type=float_range(0), metavar="NU",
                   help="Burgers: viscosity of u_t + u u_x = NU u_xx (default: from the file)")
    p.add_argument("--forcing", type=float_range(-math.inf), metavar="F",
                   help="Darcy: the constant right-hand side f (default: from the file, else "
                        "unknown)")


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``import`` subcommand (with ``neuralop`` and ``pdebench``) to ``subparsers``."""
    parser = subparsers.add_parser(
        "import", help="convert a neuraloperator .pt or PDEBench .hdf5 file to netCDF",
        description="Convert another tool's dataset into a neuralop_fem netCDF file that "
        "states the source grid, keys and parameters. Legacy .mat files: import-mat.")
    formats = parser.add_subparsers(dest="format", metavar="FORMAT", required=True)
    nop = formats.add_parser(
        "neuralop", help="a neuraloperator .pt dict (x, y)",
        description="A neuraloperator .pt dict: Darcy x (N, n, n) bool or float, y (N, n, n); "
        "Burgers x (N, n), y (N, T, n) trajectory, visc. Read with torch.load(weights_only="
        "True): a file that pickles anything but tensors, dicts and lists is refused unread.")
    _common(nop, ".pt", "neuralop_format")
    nop.add_argument("--final-time", dest="final_time", type=float_range(0), metavar="T",
                     help="Burgers: the time of the last trajectory step (not in the files)")
    nop.add_argument("--phase-values", dest="phase_values", type=_phases, metavar="HIGH,LOW",
                     help="Darcy: coefficient of the True and False phases of a boolean x "
                          "(default 1,0.05)")
    pdb = formats.add_parser(
        "pdebench", help="a PDEBench 1D Burgers or 2D Darcy .hdf5 file",
        description="A PDEBench HDF5 file: 1D_Burgers_Sols_Nu{nu}.hdf5 (tensor (N, T, n), "
        "x-coordinate, t-coordinate; viscosity nu/pi from the name) or "
        "2D_DarcyFlow_beta{b}_Train.hdf5 (nu, tensor (N, 1, n, n), coordinates; forcing b). "
        "Streamed in sample chunks.")
    _common(pdb, ".hdf5", "pdebench_format")
    pdb.add_argument("--no-trajectory", dest="trajectory", action="store_false",
                     help="Burgers: keep only the first and last times (no u_t)")
    return parser


def run(args: argparse.Namespace) -> int:
    """Convert ``args.file`` to ``args.out``; return 0."""
    check_input_file(args.file, "FILE")
    check_output_file(args.out, "--out", overwrite=args.overwrite)

    if args.problem and "viscosity" not in get_kit(args.problem).physics \
            and args.viscosity is not None:
        msg = f"argument --viscosity: applies to Burgers files only; got --problem {args.problem}."
        raise UsageError(msg)
    common = {"problem": args.problem, "dtype": args.dtype, "overwrite": args.overwrite,
              "viscosity": args.viscosity, "forcing": args.forcing}
    if args.format == "neuralop":
        out = import_neuralop(args.file, args.out, final_time=args.final_time,
                              phase_values=args.phase_values, **common)
    else:
        out = import_pdebench(args.file, args.out, trajectory=args.trajectory, **common)
    sys.stdout.write(f"wrote {out} (netCDF, from the {args.format} file {args.file})\n")
    return 0
