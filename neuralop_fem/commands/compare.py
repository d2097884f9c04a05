"""``neuralop-fem compare RUN_DIR --data FILE.nc --out REPORT_DIR``: surrogate vs solver report.

The candidate is the run's best model (:class:`~neuralop_fem.Surrogate`); the reference is the
classical solver that produced the training data (rebuilt from the run's provenance), or
the one named by ``--solver``. Both solve the selected samples of ``--data`` (the inputs are
strided to the model grid when the file is finer); the report (netCDF, markdown, PNGs) goes
to ``--out``. For Darcy the solver is also warm-started from the surrogate's predictions.
Forward runs get the fair verdict: the problem's ladder of cheaper solver settings solves the
same samples, and the surrogate is placed on its accuracy-cost front (speed-up at equal
accuracy, accuracy at equal cost); ``--no-ladder`` skips it.
"""

from __future__ import annotations

import argparse
import logging
import re

import torch

from solvers.problems import PROBLEMS

from ..errors import UsageError
from ..evaluation import compare_run
from ..number_options import int_range
from ..path_options import check_input_file, check_new_output_dir, input_file, naming, output_dir
from ..training.distributed import resolve_device
from ._options import device, indices, plain_text
from ._run_options import check_indices, check_run_dir, run_dir

__all__ = ["register", "run"]


def _solver_choices() -> list[str]:
    return ["auto"] + [f"{p.name}-{short}" for p in PROBLEMS.values() for short in p.solvers]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "compare", help="compare a surrogate against the classical solver and write a report",
        description=plain_text(__doc__.split("\n\n")[1]) if __doc__ else None,
    )
    p.add_argument("run_dir", type=run_dir, metavar="RUN_DIR",
                   help="training run directory, or zoo:NAME (a model of `neuralop-fem zoo`)")
    p.add_argument("--data", type=input_file, required=True, metavar="FILE.nc",
                   help="dataset file")
    p.add_argument("--out", type=output_dir, required=True, metavar="REPORT_DIR",
                   help="report directory")
    p.add_argument("--indices", type=indices, default="test", metavar="test|all|A:B",
                   help="samples to compare: the run's test split (default), all, or positions "
                        "A..B-1 (must exist in --data)")
    p.add_argument("--solver", default="auto", choices=_solver_choices(),
                   help="reference solver (default: the one that generated the training data)")
    p.add_argument("--linear-solver", dest="linear_solver", default=None,
                   choices=("gmg", "amg", "cg", "direct"),
                   help="Darcy linear solver of the reference (gmg, amg, cg, direct)")
    p.add_argument("--maxiter", type=int_range(1), default=None, metavar="N",
                   help="inverse runs: L-BFGS-B iterations of the classical inversion on the "
                        "observation grid (default: the solver's, 40); a saving of the warm "
                        "start is reported only where both inversions met the stopping rule")
    p.add_argument("--max-samples", dest="max_samples", type=int_range(1), default=64,
                   metavar="N", help="compare at most N >= 1 samples (default 64)")
    p.add_argument("--no-warm-start", dest="warm_start", action="store_false",
                   help="Darcy: skip the warm-start measurement")
    p.add_argument("--snap-warm-start", dest="snap_warm_start", action="store_true",
                   help="inverse runs: warm-start the inversion from the surrogate's coefficient "
                        "snapped to the two phase values the dataset records")
    p.add_argument("--no-ladder", dest="ladder", action="store_false",
                   help="skip the fair verdict (the surrogate placed on the accuracy-cost "
                        "front of the problem's solver ladder, against the dataset's stored "
                        "solutions, or its true coefficient for inverse runs); only the "
                        "reference solver is compared")
    p.add_argument("--ladder-budget", dest="ladder_budget", type=_budget, default=2.0,
                   metavar="FACTOR",
                   help="time the ladder's climb may take, as a multiple of the reference "
                        "solves, at least 10 s (default 2; 'none': no limit); a surrogate more "
                        "accurate than every rung measured within it gets a lower bound on its "
                        "speed-up")
    p.add_argument("--device", type=device, default=None,
                   help="surrogate device: auto, cpu, cuda or cuda:K (default: cuda if present)")
    p.add_argument("--solver-device", dest="solver_device", type=_solver_device, default=None,
                   metavar="D",
                   help="forward runs: also time the solver's torch twins (the ladder's spectral "
                        "Burgers and FD Darcy rungs) on D and place the surrogate against them, "
                        "like for like: cpu, cuda, cuda:K or none (default: the surrogate's "
                        "device when it is a GPU, else none)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the report an earlier run wrote in REPORT_DIR")


def _budget(text: str) -> float | None:
    """``--ladder-budget``: a positive factor, or 'none'."""
    if text.strip().lower() == "none":
        return None
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (value > 0 and value != float("inf")):
        msg = f"expected a positive number or 'none'; got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def _solver_device(text: str) -> str:
    """``--solver-device``: cpu, cuda, cuda:K or none."""
    if text in ("cpu", "cuda", "none") or re.fullmatch(r"cuda:\d+", text):
        return text
    msg = f"must be cpu, cuda, cuda:K or none; got {text!r}"
    raise argparse.ArgumentTypeError(msg)


def _check(args: argparse.Namespace) -> None:
    """The paths and device, before anything is loaded or solved."""
    check_run_dir(args.run_dir)
    check_input_file(args.data, "--data")
    check_indices(args.indices, args.data)
    check_new_output_dir(args.out, "--out", overwrite=args.overwrite)
    if args.device not in (None, "auto"):
        resolve_device(args.device)
    if args.solver_device not in (None, "none", "cpu"):
        index = int(args.solver_device.partition(":")[2] or 0)
        if index >= (torch.cuda.device_count() if torch.cuda.is_available() else 0):
            msg = (f"argument --solver-device: must be an available device; got "
                   f"{args.solver_device!r} but this machine has "
                   f"{torch.cuda.device_count() if torch.cuda.is_available() else 0} CUDA "
                   "device(s).")
            raise UsageError(msg)


def run(args: argparse.Namespace) -> int:
    """Execute ``neuralop-fem compare``; return the exit status."""
    _check(args)

    if args.device == "auto":
        args.device = None
    with naming(args.out):
        result = compare_run(
            args.run_dir, data=args.data, out=args.out, indices=args.indices, solver=args.solver,
            linear_solver=args.linear_solver, maxiter=args.maxiter, max_samples=args.max_samples,
            warm_start=args.warm_start, snap_warm_start=args.snap_warm_start, device=args.device,
            ladder=args.ladder, ladder_budget=args.ladder_budget, overwrite=args.overwrite,
            solver_device=args.solver_device,
        )
    logging.getLogger("neuralop_fem").info("report written to %s", args.out)
    print(result["text"], end="")
    print(f"Report: {args.out}/summary.md, plots {', '.join(p.name for p in result['plots'])}")
    return 0
