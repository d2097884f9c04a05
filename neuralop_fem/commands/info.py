"""``neuralop-fem info FILE.nc``: a human-readable summary of a dataset file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

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


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``info`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "info",
        help="describe a dataset file",
        description="Summarise a neuralop_fem dataset: problem, sizes, grid, every parameter, "
        "solver diagnostics, file size and provenance.",
    )
    parser.add_argument("file", type=Path, metavar="FILE.nc", help="dataset file")
    return parser


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


def describe(path: str | Path) -> str:
    """Return the summary of the dataset file at ``path`` (reads only the diagnostics)."""
    import numpy as np

    from solvers.problems import get_problem

    from ..data import load_dataset
    from ..data import schema as S

    path = Path(path)
    ds = load_dataset(path)
    try:
        a = ds.attrs
        problem = a["problem"]
        n_samples = ds.sizes[S.SAMPLE]
        samples = ds[S.SAMPLE].values
        lines = [
            f"file:        {path} ({_size(path.stat().st_size)})",
            f"title:       {a['title']}",
            f"problem:     {problem}",
            f"source:      {a['source']}",
            f"created:     {a['created']}",
            f"version:     neuralop_fem {a['neuralop_fem_version']}, schema "
            f"{a['neuralop_fem_schema_version']}, {a['Conventions']}",
            f"samples:     {n_samples} (indices {samples.min()}..{samples.max()})",
            f"dataset seed: {a['dataset_seed']}",
        ]
        n = ds.sizes[S.X]
        lines.append(f"grid:        {get_problem(problem).describe_grid(n)}")
        if S.TIME in ds.dims:
            t = ds[S.TIME].values
            lines.append(f"times:       {t.size} output times {t.min():.4g}..{t.max():.4g}")
        lines.append("variables:")
        for name, var in ds.data_vars.items():
            dims = ", ".join(map(str, var.dims))
            lines.append(f"  {name:<11s}({dims}) {var.dtype}  {var.attrs.get('long_name', '')}")
        lines.append(f"storage:     {a['storage_dtype']} fields, chunked by sample, zlib")
        params = {k: v for k, v in a.items() if k not in _HEADER}
        lines.append("parameters:")
        for key in sorted(params):
            lines.append(f"  {key} = {params[key]}")
        seeds = ds[S.SEED].values
        known_seeds = int(np.count_nonzero(seeds != S.SEED_UNKNOWN))
        lines += [
            "diagnostics:",
            f"  iterations: {_stats(ds[S.ITERATIONS].values, unknown=S.ITERATIONS_UNKNOWN, fmt='.4g')}",
            f"  residual:   {_stats(ds[S.RESIDUAL].values)}",
            f"  solve_time: {_stats(ds[S.SOLVE_TIME].values)} s; total "
            f"{np.nansum(ds[S.SOLVE_TIME].values):.4g} s",
            f"  seeds:      {known_seeds} of {n_samples} known",
        ]
    finally:
        ds.close()
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Print :func:`describe` of ``args.file``; return 0."""
    sys.stdout.write(describe(args.file) + "\n")
    return 0
