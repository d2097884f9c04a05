"""``neuralop-fem import-mat FILE.mat --problem burgers|darcy --out FILE.nc``."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

__all__ = ["register", "run"]

_log = logging.getLogger(__name__)


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``import-mat`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "import-mat",
        help="convert a legacy FNO/Galerkin-Transformer .mat file to netCDF",
        description="Convert burgers_data_R10.mat (keys a, u) or piececonst_r421_*.mat (keys "
        "coeff, sol), MATLAB v5 or v7.3, into a neuralop_fem netCDF dataset. Seeds and "
        "solver diagnostics are unknown for these files and stored as such.",
    )
    parser.add_argument("file", type=Path, metavar="FILE.mat", help="legacy .mat file")
    parser.add_argument("--problem", required=True, choices=("burgers", "darcy"))
    parser.add_argument("--out", required=True, type=Path, metavar="FILE.nc", help="output file")
    parser.add_argument(
        "--dtype",
        choices=("float64", "float32"),
        default=None,
        help="storage type of the fields (default: the type in the .mat file)",
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    return parser


def run(args: argparse.Namespace) -> int:
    """Convert ``args.file`` to ``args.out``; return 0."""
    from ..data.matlab import import_mat

    out = import_mat(
        args.file, args.out, problem=args.problem, dtype=args.dtype, overwrite=args.overwrite
    )
    _log.info("wrote %s", out)
    return 0
