"""``neuralop-fem generate burgers|darcy|...``: generate a dataset file.

One subcommand per problem whose kit has a data config (:mod:`neuralop_fem.problems`). Every
physical and numerical option maps 1:1 onto a field of its config
(:class:`~neuralop_fem.data.BurgersDataConfig`, :class:`~neuralop_fem.data.DarcyDataConfig`
...; ``--final-time`` -> ``final_time``), with the field's help text; the defaults reproduce
the benchmark datasets. With ``--append M`` the options left out
are taken from the file; the ones given must match it.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any

# `generation` resolves its names on first use: `generate --help` imports neither xarray nor
# dask (generation.generate brings them, in `run`).
from ..data import generation
from ..data.generation.config import config_class
from ..errors import DatasetError
from ..number_options import int_range
from ..path_options import check_output_file, output_file
from ..problems import kits
from ..problems.peer_presets import PEER_PRESETS, get_preset

__all__ = ["register", "run"]

# The subcommands are the problems whose kit has a data config (neuralop_fem.problems); their
# options are the config's fields with a help text (``metadata["help"]``), written once there.
_NUMBERS = {"float": float, "int": int_range(1), "str": str}


def _option_kwargs(field: dataclasses.Field[Any]) -> dict[str, Any]:
    """argparse keywords of a config field, from its annotation and help text."""
    kind = str(field.type).split(" | ")[0]
    if kind.startswith("tuple["):
        return {"type": float, "nargs": "+", "metavar": "T", "help": field.metadata["help"]}
    return {"type": _NUMBERS.get(kind, str), "help": field.metadata["help"]}


def _add_common(parser: argparse.ArgumentParser, resolution: int, chunk_size: int) -> None:
    size = parser.add_mutually_exclusive_group(required=True)
    size.add_argument("--samples", type=int_range(1), metavar="N",
                      help="number of samples of a new dataset")
    size.add_argument("--append", type=int_range(1), metavar="M",
                      help="add M samples (next indices and seeds) to the finished file --out; "
                           "options left out are taken from the file")
    parser.add_argument("--out", type=output_file, required=True, metavar="FILE.nc",
                        help="output file; unfinished work is kept in FILE.nc.partial/")
    parser.add_argument("--resolution", type=int_range(1), metavar="n",
                        help=f"solver grid points per side (default {resolution}, the benchmark)")
    parser.add_argument("--seed", type=int_range(0), metavar="S",
                        help="dataset seed; sample k uses SeedSequence([S, k]) (default 0)")
    parser.add_argument("--workers", type=int_range(0), metavar="W",
                        help="local worker processes (default: all cores; 0: in this process)")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="dask.distributed scheduler address, e.g. tcp://host:8786 "
                             "(instead of --workers)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace a finished FILE.nc / discard an unfinished run")
    parser.add_argument("--dtype", metavar="float64|float32",
                        help="storage type of the fields (default float64)")
    parser.add_argument("--chunk-size", dest="chunk_size", type=int_range(1), metavar="C",
                        help="samples per chunk: one solver call, one unit of resumption "
                             f"(default {chunk_size})")
    parser.add_argument("--no-progress", dest="progress", action="store_false", default=None,
                        help="no progress bar, even on a terminal (-v: progress as log lines)")
    parser.add_argument("--device", metavar="cuda|cuda:N|cpu",
                        help="solve with the torch twin of the solver on this device (Burgers "
                             "spectral, Darcy FD on nodes; docs/generating_data.md, 'Generating "
                             "on a GPU'); default: the numpy solvers on CPU processes")
    parser.add_argument("--batch-size", dest="batch_size", type=int_range(1), metavar="B",
                        help="with --device: samples per device call (default: a whole chunk); "
                             "lower it after an out-of-memory error and rerun")


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``generate`` subcommand (one subcommand per generated problem) to ``subparsers``."""
    parser = subparsers.add_parser(
        "generate",
        help="generate a Burgers or Darcy dataset (parallel, resumable, appendable)",
        description="Draw inputs from Gaussian random fields, solve them with the bundled "
        "solvers and write one netCDF4 file. Killed runs resume when the same command is run "
        "again; every default reproduces the benchmark datasets.",
    )
    problems = parser.add_subparsers(dest="problem", metavar="PROBLEM", required=True)
    for kit in kits():
        if not kit.generated:
            continue
        sub = problems.add_parser(kit.name, help=kit.generate_help,
                                  description=kit.generate_description)
        _add_common(sub, kit.benchmark_resolution, kit.chunk_size)
        for field in dataclasses.fields(kit.config_class()):
            if "help" in field.metadata:
                sub.add_argument("--" + field.name.replace("_", "-"), dest=field.name,
                                 **_option_kwargs(field))
        _add_like(sub, kit.name)
    return parser


def _add_like(parser: argparse.ArgumentParser, problem: str) -> None:
    presets = {k: p for k, p in PEER_PRESETS.items() if p.problem == problem}
    if not presets:
        return
    listing = "; ".join(f"{k}: {p.summary}" for k, p in presets.items())
    parser.add_argument("--like", choices=tuple(presets), metavar="PRESET",
                        help=f"the grid, resolution and physics of another tool's dataset "
                             f"(options given beside it override it): {listing}")


def _apply_like(args: argparse.Namespace, base: Any) -> Any:
    """``base`` with the settings of ``--like`` (and its resolution unless given)."""
    name = getattr(args, "like", None)
    if name is None:
        return base
    preset = get_preset(name, args.problem)
    if args.resolution is None and args.append is None:
        args.resolution = preset.resolution
    return base.replace(**preset.settings)


def _build_config(args: argparse.Namespace, base: Any) -> Any:
    overrides = {}
    for field in dataclasses.fields(base):
        value = getattr(args, field.name, None)
        if value is not None:
            overrides[field.name] = tuple(value) if isinstance(value, list) else value
    return base.replace(**overrides)


def run(args: argparse.Namespace) -> int:
    """Execute ``neuralop-fem generate``; return the exit status."""
    check_output_file(args.out, "--out")
    problem = args.problem
    base = config_class(problem)()
    if args.append is not None and args.out.is_file():
        try:
            base = generation.read_generation_settings(args.out)["config"]
        except DatasetError:
            pass  # generate() reports it with the file name
        if type(base) is not config_class(problem):
            base = config_class(problem)()
    config = _build_config(args, _apply_like(args, base))
    append = args.append is not None
    path = generation.generate(
        problem,
        n_samples=args.append if append else args.samples,
        out=args.out,
        resolution=args.resolution,
        seed=args.seed,
        config=config,
        workers=args.workers,
        scheduler=args.scheduler,
        append=append,
        overwrite=args.overwrite,
        dtype=args.dtype,
        chunk_size=args.chunk_size,
        progress=args.progress,
        device=args.device,
        batch_size=args.batch_size,
    )
    sys.stdout.write(f"wrote {path}\n")
    return 0
