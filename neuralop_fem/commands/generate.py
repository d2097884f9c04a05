"""``neuralop-fem generate burgers|darcy``: generate a dataset file.

Every physical and numerical option maps 1:1 onto a field of
:class:`~neuralop_fem.data.BurgersDataConfig` or
:class:`~neuralop_fem.data.DarcyDataConfig` (``--final-time`` -> ``final_time``);
the defaults reproduce the benchmark datasets. With ``--append M`` the options left out
are taken from the file; the ones given must match it.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
from typing import Any

from ._options import (
    check_output_file,
    int_range,
    output_file,
)

__all__ = ["register", "run"]

# Options of each problem: (field name, type, help). Defaults come from the config classes.
_BURGERS = (
    ("viscosity", float, "viscosity nu > 0 (default 0.1/(2 pi), the Galerkin Transformer paper; "
                         "the FNO paper states 0.1)"),
    ("final_time", float, "final time T > 0; `u` is stored at t = T (default 1)"),
    ("grf_sigma", float, "initial-condition GRF amplitude sigma (default 25)"),
    ("grf_tau", float, "initial-condition GRF inverse length scale tau (default 5)"),
    ("grf_alpha", float, "initial-condition GRF smoothness exponent alpha (default 2)"),
    ("solver", str, "'spectral' (pseudo-spectral exponential integrator, default) or 'fd' "
                    "(finite differences)"),
    ("dt", float, "spectral: largest time step (default: the solver's rule, ~450 steps)"),
    ("first_dt", float, "spectral: first graded step (default 1e-4 dt)"),
    ("growth", float, "spectral: growth ratio of graded steps (default 1.2)"),
    ("n_contour", int_range(1), "spectral: contour points of the ETDRK4 coefficients (default 32)"),
    ("mode_tol", float, "spectral: relative mode truncation of the product (default 1e-16)"),
    ("cfl", float, "fd: fraction of the RK4 stability limit (default 0.8)"),
)
_DARCY = (
    ("grf_tau", float, "GRF inverse length scale tau (default 3)"),
    ("grf_alpha", float, "GRF smoothness exponent alpha (default 2)"),
    ("contrast_high", float, "coefficient where the GRF is > 0 (default 12)"),
    ("contrast_low", float, "coefficient elsewhere (default 3)"),
    ("forcing", float, "constant right-hand side f (default 1)"),
    ("discretisation", str, "'fd' (5-point finite differences, default) or 'fem' (scikit-fem)"),
    ("averaging", str, "FD face averaging: 'harmonic' (default) or 'arithmetic'"),
    ("element", str, "FEM element: 'P1' (default) or 'Q1'"),
    ("linear_solver", str, "'gmg' (CG + geometric multigrid, default), 'amg', 'cg' or 'direct'"),
    ("tol", float, "relative residual tolerance of iterative solves (default 1e-10)"),
    ("maxiter", int_range(1), "iteration limit of iterative solves (default: the solver's)"),
    ("grid", str, "grid of the stored fields: 'nodes' (x_i = i/(n-1), default), 'cell-centred' "
                  "((i + 1/2)/n, PDEBench's) or 'half-open' (i/n, neuraloperator's)"),
)


def _add_common(parser: argparse.ArgumentParser, problem: str, resolution: int) -> None:
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
                             f"(default {16 if problem == 'burgers' else 4})")
    parser.add_argument("--no-progress", dest="progress", action="store_false", default=None,
                        help="log lines instead of a progress bar even on a terminal")


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``generate`` subcommand (with ``burgers`` and ``darcy``) to ``subparsers``."""
    parser = subparsers.add_parser(
        "generate",
        help="generate a Burgers or Darcy dataset (parallel, resumable, appendable)",
        description="Draw inputs from Gaussian random fields, solve them with the bundled "
        "solvers and write one netCDF4 file. Killed runs resume when the same command is run "
        "again; every default reproduces the benchmark datasets.",
    )
    problems = parser.add_subparsers(dest="problem", metavar="PROBLEM", required=True)
    burgers = problems.add_parser(
        "burgers", help="1D periodic viscous Burgers: u0 -> u(., T)",
        description="u_t + u u_x = nu u_xx on [0, 1) periodic; u0 ~ N(0, sigma^2 (-Laplacian + "
        "tau^2)^-alpha) with zero mean; grid x_i = i/n.")
    _add_common(burgers, "burgers", 8192)
    for name, kind, text in _BURGERS:
        burgers.add_argument("--" + name.replace("_", "-"), dest=name, type=kind, help=text)
    burgers.add_argument("--output-times", dest="output_times", type=float, nargs="+",
                         metavar="T", help="also store the trajectory u_t at these times in [0, T]")
    darcy = problems.add_parser(
        "darcy", help="2D Darcy flow: a -> u",
        description="-div(a grad u) = f on [0, 1]^2, u = 0 on the boundary; a = high where a "
        "Neumann GRF ~ N(0, (-Laplacian + tau^2)^-alpha) is > 0, low elsewhere; n x n nodes "
        "x_i = i/(n-1).")
    _add_common(darcy, "darcy", 421)
    for name, kind, text in _DARCY:
        darcy.add_argument("--" + name.replace("_", "-"), dest=name, type=kind, help=text)
    _add_like(darcy, "darcy")
    return parser


def _add_like(parser: argparse.ArgumentParser, problem: str) -> None:
    from ..peer_presets import PEER_PRESETS

    presets = {k: p for k, p in PEER_PRESETS.items() if p.problem == problem}
    listing = "; ".join(f"{k}: {p.summary}" for k, p in presets.items())
    parser.add_argument("--like", choices=tuple(presets), metavar="PRESET",
                        help=f"the grid, resolution and physics of another tool's dataset "
                             f"(options given beside it override it): {listing}")


def _apply_like(args: argparse.Namespace, base: Any) -> Any:
    """``base`` with the settings of ``--like`` (and its resolution unless given)."""
    name = getattr(args, "like", None)
    if name is None:
        return base
    from ..peer_presets import get_preset

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
    from ..data.generation import config_class, generate, read_generation_settings
    from ..errors import DatasetError

    check_output_file(args.out, "--out")
    problem = args.problem
    base = config_class(problem)()
    if args.append is not None and args.out.is_file():
        try:
            base = read_generation_settings(args.out)["config"]
        except DatasetError:
            pass  # generate() reports it with the file name
        if type(base) is not config_class(problem):
            base = config_class(problem)()
    config = _build_config(args, _apply_like(args, base))
    log = logging.getLogger("neuralop_fem.data.generation")
    if log.level == logging.NOTSET:
        log.setLevel(logging.INFO)  # progress lines (off a terminal) and resume notices
    append = args.append is not None
    path = generate(
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
    )
    log.info("wrote %s", path)
    return 0
