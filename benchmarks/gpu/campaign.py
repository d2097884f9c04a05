"""The GPU campaign: each stage is one command that ends inside its budget (default 8 minutes).

Stages (docs/training.md, "What has run on a GPU"):

- ``correctness``: the tests marked ``cuda`` (tests/gpu) on the GPU;
- ``throughput``: training it/s against the paper's RTX 3090, inference against the solver on
  all cores (trained Darcy weights from a ``darcy`` output given as ``--from``);
- ``darcy``: darcy-galerkin and darcy-inverse-galerkin (noise 0.01) for 100 epochs of 1024
  samples, resumed across calls (``--from`` the previous call's output);
- ``wheels``: only install the wheels of ``--wheels`` into ``--out`` (a check of the folder;
  ``--python-version 3.12`` checks it for the device image from another interpreter);
- ``unpack``: extract the state parts and ``RUN.best.pt`` files of ``--from`` into ``--out``
  (the run directories, for ``neuralop-fem reproduce record``).

Each GPU stage writes ``STAGE.json``, ``STAGE.md`` and ``STAGE.log`` (GPU, driver, torch, CUDA,
the commands) and what the next call needs into ``--out``: at most 8 files, each under 16 MiB,
the limits of the device machine. Data are generated on the machine from their seeds; packages
the device image lacks are installed offline from ``--wheels`` (benchmarks/gpu/fetch_wheels.sh).

Examples::

    python benchmarks/gpu/campaign.py correctness --out $OUT
    python benchmarks/gpu/campaign.py darcy --out $OUT --from carry/darcy1
    python benchmarks/gpu/campaign.py throughput --out out/t --rehearse     # CPU, seconds
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

from _campaign import (
    DEVICE_PYTHON,
    ROOT,
    CampaignError,
    Deadline,
    check_outputs,
    ensure_packages,
    environment,
    install_wheels,
    log,
    previous_results,
    setup_logging,
    unpack_runs,
    write_result,
)

STAGES = ("correctness", "throughput", "darcy")
#: Default budget of a stage in seconds: well inside the device's 10 minutes per command.
BUDGET_S = 480.0
#: Budget of a rehearsal (CPU, tiny sizes).
REHEARSE_BUDGET_S = 600.0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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
    p.add_argument("--select", help="correctness stage: pytest -k expression")
    p.add_argument("--commit", help="the code's git commit, recorded when the copy on the "
                   "device machine is no git checkout")
    return p


def _side_commands(args: argparse.Namespace) -> int:
    args.out.mkdir(parents=True, exist_ok=True)
    if args.stage == "wheels":
        print(install_wheels(args.wheels, args.out, python_version=args.python_version))
        return 0
    if args.source is None:
        parser().error("unpack needs --from")
    for name in unpack_runs(args.source, args.out):
        print(args.out / name)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.stage in ("wheels", "unpack"):
        return _side_commands(args)
    deadline = Deadline(args.budget_s or (REHEARSE_BUDGET_S if args.rehearse else BUDGET_S))
    args.work = (args.work or Path("/tmp/neuralop_fem_campaign")).resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    install = ensure_packages(args.wheels, args.work)  # may start this command again
    import torch

    args.device = args.device or ("cpu" if args.rehearse else "cuda")
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        msg = "no CUDA device here; pass --rehearse to run the stage on the CPU"
        raise CampaignError(msg)
    args.out.mkdir(parents=True, exist_ok=True)
    if any(args.out.iterdir()) and not (args.source and args.source.resolve() ==
                                        args.out.resolve()):
        for old in args.out.iterdir():  # a stage's output is only its own files
            if old.is_file():
                old.unlink()
    setup_logging(args.out, args.stage)
    if args.stage == "correctness":
        import stage_correctness as stage
    elif args.stage == "throughput":
        import stage_throughput as stage
    else:
        import stage_darcy as stage
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(deadline.t0))
    result, lines, code = stage.run(args, deadline, args.out)
    commands = [shlex.join([sys.executable.rsplit("/", 1)[-1], "benchmarks/gpu/campaign.py",
                            *sys.argv[1:]])]
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


if __name__ == "__main__":
    try:
        sys.exit(main())
    except CampaignError as exc:
        print(f"campaign: {exc}", file=sys.stderr)
        sys.exit(2)
