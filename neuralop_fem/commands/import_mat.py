"""``neuralop-fem import-mat FILE.mat --problem burgers|darcy --out FILE.nc``.

The legacy files hold the fields only: give the physical parameters the labels were computed
with (Burgers ``--viscosity`` and ``--final-time``, Darcy ``--forcing``) so that the file
records them as ``generate`` does; a parameter left out is recorded as ``unknown``, and
comparisons refuse to pick a reference solver for such data instead of assuming defaults.
"""

from __future__ import annotations

import argparse
import math
import sys

from ..data.matlab import import_mat
from ..errors import UsageError
from ..number_options import float_range
from ..path_options import check_input_file, check_output_file, input_file, output_file
from ..problems import kits

__all__ = ["register", "run"]


def _physics() -> dict[str, str]:
    """Option dest -> the problem it applies to (the kits' physical parameters)."""
    return {name: kit.name for kit in kits() if kit.mat_keys for name in kit.physics}


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``import-mat`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "import-mat",
        help="convert a legacy FNO/Galerkin-Transformer .mat file to netCDF",
        description="Convert burgers_data_R10.mat (keys a, u) or piececonst_r421_*.mat (keys "
        "coeff, sol), MATLAB v5 or v7.3, into a neuralop_fem netCDF dataset. Seeds and "
        "solver diagnostics are unknown for these files and stored as such; so are the "
        "physical parameters unless given (--viscosity and --final-time for Burgers, "
        "--forcing for Darcy), and a comparison then refuses to guess the reference solver.",
    )
    parser.add_argument("file", type=input_file, metavar="FILE.mat", help="legacy .mat file")

    parser.add_argument("--problem", required=True,
                        choices=tuple(kit.name for kit in kits() if kit.mat_keys))
    parser.add_argument("--out", required=True, type=output_file, metavar="FILE.nc",
                        help="output file")
    parser.add_argument(
        "--dtype",
        choices=("float64", "float32"),
        default=None,
        help="storage type of the fields (default: the type in the .mat file)",
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    parser.add_argument("--viscosity", type=float_range(0), metavar="NU",
                        help="Burgers: the viscosity nu > 0 of the labels (the Galerkin "
                             "Transformer paper: 0.1/(2 pi) = 0.0159...; the FNO paper: 0.1)")
    parser.add_argument("--final-time", dest="final_time", type=float_range(0), metavar="T",
                        help="Burgers: the time T > 0 of the stored solution (benchmark: 1)")
    parser.add_argument("--forcing", type=float_range(-math.inf), metavar="F",
                        help="Darcy: the constant right-hand side f (benchmark: 1)")
    return parser


def _check(args: argparse.Namespace) -> None:
    check_input_file(args.file, "FILE.mat")
    check_output_file(args.out, "--out", overwrite=args.overwrite)
    for dest, problem in _physics().items():
        if getattr(args, dest) is not None and problem != args.problem:
            option = "--" + dest.replace("_", "-")
            msg = (f"argument {option}: applies to --problem {problem} only; got --problem "
                   f"{args.problem}.")
            raise UsageError(msg)


def run(args: argparse.Namespace) -> int:
    """Convert ``args.file`` to ``args.out``; return 0."""
    _check(args)

    owners = _physics()
    physics = {dest: getattr(args, dest, None) for dest in owners}
    out = import_mat(
        args.file, args.out, problem=args.problem, dtype=args.dtype, overwrite=args.overwrite,
        **{k: v for k, v in physics.items() if owners[k] == args.problem},
    )
    sys.stdout.write(f"wrote {out} (netCDF, from the MATLAB file {args.file})\n")
    return 0
