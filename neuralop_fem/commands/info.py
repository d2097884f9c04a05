"""``neuralop-fem info FILE.nc``: a human-readable summary of a dataset file.

By default every chunk is read once, so a damaged file (a chunk that fails its checksum)
is reported as an error naming the variable; ``--no-check`` reads only the metadata and the
per-sample diagnostics.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from solvers.problems import get_problem

from ..data import load_dataset
from ..data import schema as S
from ..data.float_paths import describe_float_paths
from ..data.grids import dataset_grid, describe_grid
from ..data.io import read_values, verify_dataset
from ..data.provenance import ValuesDigest, field_names, read_record
from ..path_options import check_input_file, input_file
from ..safe_text import printable

__all__ = ["describe", "register", "run"]

# Global attributes shown in the header rather than in the parameter list.
_HEADER = (
    "title",
    "problem",
    "source",
    "created",
    "neuralop_fem_version",
    "neuralop_fem_schema_version",
    "storage_dtype",
    "dataset_seed",
    "Conventions",
    "config_json",
)


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``info`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "info",
        help="describe a dataset file",
        description="Summarise a neuralop_fem dataset: problem, sizes, grid, every parameter, "
        "solver diagnostics, file size and provenance; read every chunk to verify its "
        "checksum.",
    )
    parser.add_argument("file", type=input_file, metavar="FILE.nc", help="dataset file")
    parser.add_argument("--no-check", dest="check", action="store_false",
                        help="skip reading the fields (no checksum verification; fast on "
                             "large files)")
    return parser


def _shown(value: object) -> str:
    """A value of the file (an attribute, a name) as one line of the summary: control
    characters escaped (no terminal escapes, no forged lines), long values cut."""
    return printable(value)


def _size(n_bytes: int) -> str:
    value = float(n_bytes)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.1f} {unit}" if unit != "B" else f"{n_bytes} B"
        value /= 1024
    return f"{n_bytes} B"  # pragma: no cover


def _stats(values: Any, *, unknown: Any = None, fmt: str = ".3g") -> str:
    import numpy as np

    v = np.asarray(values, dtype=np.float64)
    known = np.isfinite(v) if unknown is None else (v != unknown)
    known &= np.isfinite(v)
    if not known.any():
        return "unknown"
    k = v[known]
    text = f"min {k.min():{fmt}}  mean {k.mean():{fmt}}  max {k.max():{fmt}}"
    if not known.all():
        text += f"  ({np.count_nonzero(~known)} unknown)"
    return text


def _solve_times(values: Any) -> str:
    """Statistics and total of the known solve times (s), or ``unknown`` (imported data)."""
    import numpy as np

    stats = _stats(values)
    return stats if stats == "unknown" else f"{stats} s; total {np.nansum(values):.4g} s"


def describe(path: str | Path, *, check: bool = False) -> str:
    """Return the summary of the dataset file at ``path``.

    Parameters
    ----------
    path
        A dataset file.
    check
        Read every chunk first (:func:`~neuralop_fem.data.io.verify_dataset`); without it
        only the metadata and the per-sample diagnostics are read.

    Raises
    ------
    DatasetError
        A file that is not a dataset, or (``check``) a damaged chunk, naming the variable.
    """
    import numpy as np

    path = Path(path)
    ds = load_dataset(path)
    try:
        names = field_names(ds)
        digest = ValuesDigest(names)
        blocks = verify_dataset(ds, first=names, on_block=digest.add) if check else None
        a = ds.attrs
        problem = a["problem"]
        n_samples = ds.sizes[S.SAMPLE]
        samples = ds[S.SAMPLE].values
        lines = [
            f"file:        {_shown(path)} ({_size(path.stat().st_size)})",
            f"title:       {_shown(a['title'])}",
            f"problem:     {_shown(problem)}",
            f"source:      {_shown(a['source'])}",
            f"created:     {_shown(a['created'])}",
            f"version:     neuralop_fem {_shown(a['neuralop_fem_version'])}, schema "
            f"{_shown(a['neuralop_fem_schema_version'])}, {_shown(a['Conventions'])}",
            f"samples:     {n_samples} (indices {samples.min()}..{samples.max()})",
            f"dataset seed: {_shown(a['dataset_seed'])}",
        ]
        n = ds.sizes[S.X]
        grid = dataset_grid(a, problem, source=str(path))
        spec = get_problem(problem)
        lines.append("grid:        " + (spec.describe_grid(n) if grid == spec.grid
                                        else describe_grid(grid, n, spec.ndim)))
        if S.TIME in ds.dims:
            t = ds[S.TIME].values
            lines.append(f"times:       {t.size} output times {t.min():.4g}..{t.max():.4g}")
        lines.append("variables:")
        for name, var in ds.data_vars.items():
            dims = ", ".join(map(str, var.dims))
            lines.append(f"  {_shown(name):<11s}({_shown(dims)}) {var.dtype}  "
                         f"{_shown(var.attrs.get('long_name', ''))}")
        lines.append(f"storage:     {_shown(a['storage_dtype'])} fields, chunked by sample, zlib")
        lines.append("checksums:   " + ("not checked (--no-check)" if blocks is None else
                                        f"verified ({blocks} chunks read)"))
        if blocks is not None:
            lines.append(f"values:      {digest.checksum()} (of {', '.join(names)})")
        written = describe_float_paths(read_record(a, source=str(path)).get("float_paths"))
        lines.append("written on:  " + "\n             ".join(_shown(line) for line in
                                                             written.split("\n")))
        params = {k: v for k, v in a.items() if k not in _HEADER}
        lines.append("parameters:")
        for key in sorted(params):
            lines.append(f"  {_shown(key)} = {_shown(params[key])}")
        diag = {name: read_values(ds, name) for name in S.DIAGNOSTICS}
        seeds = diag[S.SEED]
        known_seeds = int(np.count_nonzero(seeds != S.SEED_UNKNOWN))
        lines += [
            "diagnostics:",
            f"  iterations: {_stats(diag[S.ITERATIONS], unknown=S.ITERATIONS_UNKNOWN, fmt='.4g')}",
            f"  residual:   {_stats(diag[S.RESIDUAL])}",
            f"  solve_time: {_solve_times(diag[S.SOLVE_TIME])}",
            f"  seeds:      {known_seeds} of {n_samples} known",
        ]
    finally:
        ds.close()
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Print :func:`describe` of ``args.file``; return 0."""
    check_input_file(args.file, "FILE.nc")
    sys.stdout.write(describe(args.file, check=getattr(args, "check", True)) + "\n")
    return 0
