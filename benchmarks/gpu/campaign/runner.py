"""The GPU campaign's command line: parse a stage's options, run it, write its results.

``python -m benchmarks.gpu.campaign STAGE --out DIR [--from DIR] [--rehearse]``, from the
repository root, runs :func:`main`. Before a GPU stage
imports anything beyond the standard library, the packages the device image lacks are
installed offline from ``--wheels`` and the command starts again with them
(:func:`~benchmarks.gpu.campaign.machine.ensure_packages`); the stage modules are imported
only then.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from .machine import (
    DEVICE_PYTHON,
    ROOT,
    CampaignError,
    Deadline,
    ensure_packages,
    environment,
    install_wheels,
    log,
)
from .outputs import (
    check_outputs,
    clear_outputs,
    previous_results,
    setup_logging,
    unpack_runs,
    write_result,
)

__all__ = ["BUDGET_S", "DRIVER", "REHEARSE_BUDGET_S", "STAGES", "main", "parser", "run"]

#: The stages that run on the GPU (``wheels`` and ``unpack`` are side commands).
STAGES = ("correctness", "throughput", "darcy", "prepare", "inference", "solvers", "verdicts")
#: The program a stage's results name in their commands: the driver of the documentation.
DRIVER = ("-m", "benchmarks.gpu.campaign")
#: The first line of ``--help``.
DESCRIPTION = ("The GPU campaign: each stage is one command that ends inside its budget "
               "(default 8 minutes).")
#: Default budget of a stage in seconds: well inside the device's 10 minutes per command.
BUDGET_S = 480.0
#: Budget of a rehearsal (CPU, tiny sizes).
REHEARSE_BUDGET_S = 600.0


def parser(prog: str | None = None) -> argparse.ArgumentParser:
    """The options of every stage (``--help`` of the driver); ``prog`` names the program in
    the usage (default: the script's file name)."""
    p = argparse.ArgumentParser(prog=prog, description=DESCRIPTION)
    p.add_argument("stage", choices=(*STAGES, "wheels", "unpack"))
    p.add_argument("--out", type=Path, required=True, help="output folder (the device's $OUT)")
    p.add_argument("--from", dest="source", type=Path,
                   help="a previous stage's output folder (state and results)")
    p.add_argument("--rehearse", action="store_true", help="tiny sizes on the CPU")
    p.add_argument("--budget-s", dest="budget_s", type=float,
                   help=f"wall-clock budget in seconds (default {BUDGET_S:.0f})")
    p.add_argument("--work", type=Path, help="scratch folder for data, runs and packages "
                   "(default /tmp/neuralop_fem_campaign)")
    p.add_argument("--wheels", type=Path, default=ROOT / ".whl",
                   help="folder of wheels for the offline install (default .whl)")
    p.add_argument("--python-version", dest="python_version",
                   help=f"wheels stage: install for this Python (the device: {DEVICE_PYTHON})")
    p.add_argument("--device", help="torch device (default cuda; cpu with --rehearse)")
    p.add_argument("--amp", choices=("none", "bf16"), default="none",
                   help="darcy stage: mixed precision of the runs (default none, as the paper)")
    p.add_argument("--max-epochs-this-call", dest="max_epochs_this_call", type=int,
                   help="darcy stage: at most K epochs per run in this call")
    p.add_argument("--select", help="correctness stage: pytest -k expression; verdicts stage: "
                   "zoo models, comma-separated")
    p.add_argument("--commit", help="the code's git commit, recorded when the copy on the "
                   "device machine is no git checkout")
    return p


def _side_commands(args: argparse.Namespace, p: argparse.ArgumentParser) -> int:
    args.out.mkdir(parents=True, exist_ok=True)
    if args.stage == "wheels":
        print(install_wheels(args.wheels, args.out, python_version=args.python_version))
        return 0
    if args.source is None:
        p.error("unpack needs --from")
    for name in unpack_runs(args.source, args.out):
        print(args.out / name)
    return 0


def main(argv: Sequence[str] | None = None, *, program: Sequence[str] = DRIVER) -> int:
    """Run one stage (``argv``: the command line without the program, default ``sys.argv``);
    its exit status. A stage that cannot run (:class:`CampaignError`) is one line on stderr,
    ``campaign: <why>``, and status 2. ``program`` is what the results record as the command
    that ran (default: the driver, ``-m benchmarks.gpu.campaign``)."""
    try:
        return run(argv, program=program)
    except CampaignError as exc:
        print(f"campaign: {exc}", file=sys.stderr)
        return 2


def run(argv: Sequence[str] | None = None, *, program: Sequence[str] = DRIVER) -> int:
    """:func:`main` without the one-line error: raises :class:`CampaignError`."""
    p = parser(shlex.join(["python", *program]))
    args = p.parse_args(None if argv is None else list(argv))
    if args.stage in ("wheels", "unpack"):
        return _side_commands(args, p)
    deadline = Deadline(args.budget_s or (REHEARSE_BUDGET_S if args.rehearse else BUDGET_S))
    args.work = (args.work or Path("/tmp/neuralop_fem_campaign")).resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    install = ensure_packages(args.wheels, args.work)  # may start this command again
    import torch

    args.device = args.device or ("cpu" if args.rehearse else "cuda")
    if (args.device.startswith("cuda") and not torch.cuda.is_available()
            and args.stage != "prepare"):
        msg = "no CUDA device here; pass --rehearse to run the stage on the CPU"
        raise CampaignError(msg)
    args.out.mkdir(parents=True, exist_ok=True)
    if not (args.source and args.source.resolve() == args.out.resolve()):
        clear_outputs(args.out, args.stage)  # a stage's output is only its own files
    setup_logging(args.out, args.stage)
    # deferred: a stage imports the packages that ensure_packages has just installed
    if args.stage == "correctness":
        from . import correctness as stage
    elif args.stage == "throughput":
        from . import throughput as stage
    elif args.stage == "darcy":
        from . import darcy as stage
    elif args.stage == "solvers":
        from . import solvers as stage
    elif args.stage == "inference":
        from . import inference as stage
    elif args.stage == "verdicts":
        from . import verdicts as stage
    else:
        from . import prepare as stage
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(deadline.t0))
    result, lines, code = stage.run(args, deadline, args.out)
    given = sys.argv[1:] if argv is None else list(argv)
    commands = [shlex.join([sys.executable.rsplit("/", 1)[-1], *program, *given])]
    if install:
        commands.insert(0, install)
    if "pytest_command" in result:
        commands.append(result["pytest_command"])
    summary = {k: result[k] for k in ("ok", "counts", "finished") if k in result}
    full = {"stage": args.stage, "rehearse": args.rehearse, "started": started,
            "seconds": round(deadline.elapsed(), 1), "budget_s": deadline.budget_s,
            "summary": summary, "previous": previous_results(args.source),
            "environment": environment(args.commit), "commands": commands, **result}
    lines += ["", f"Stage time {full['seconds']:.0f} s of a {deadline.budget_s:.0f} s budget."]
    write_result(args.out, args.stage, full, lines)
    listed = check_outputs(args.out)
    log.info("%s: %s in %.0f s; outputs %s", args.stage, summary, deadline.elapsed(),
             ", ".join(f"{f['name']} ({f['bytes']} B)" for f in listed))
    return code

