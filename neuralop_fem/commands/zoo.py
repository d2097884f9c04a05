"""``neuralop-fem zoo``: the trained surrogates shipped with the package.

``neuralop-fem zoo`` lists the models (name, problem, test error, size); ``zoo show NAME``
prints a model card; ``zoo add RUN_DIR --name NAME --data FILE.nc`` packs a finished run
(evaluated on its test split, weights-only, with its card). ``zoo:NAME`` is accepted wherever
a run directory is (``evaluate``, ``compare``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import UsageError
from ..number_options import int_range
from ..path_options import check_input_file, input_dir, input_file, output_dir
from ..safe_text import printable, printable_lines
from ..zoo import (
    CARD_MD,
    PREFIX,
    available,
    entry_dir,
    planned_missing,
    read_card,
    summary_row,
)
from ._options import device
from ._run_options import check_run_dir, run_dir

__all__ = ["register", "run"]


def _zoo_dir(parser: argparse.ArgumentParser, *, output: bool, nested: bool = True) -> None:
    # nested: not set unless given, so `zoo --zoo-dir DIR list` keeps the parent's value;
    # `add` has its own destination (an output of the command), the parent's when not given
    parser.add_argument("--zoo-dir", dest="zoo_out" if output else "zoo_dir",
                        type=output_dir if output else input_dir, metavar="DIR",
                        default=argparse.SUPPRESS if nested and not output else None,
                        help="a zoo directory other than the package's")


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``zoo`` subcommand (``list``, ``show``, ``add``, ``verdict``) to ``subparsers``."""
    p = subparsers.add_parser(
        "zoo", help="list, show and add the trained surrogates shipped with the package",
        description="The model zoo: trained surrogates shipped with the package. Without a "
        "subcommand: list them. Use a model with Surrogate.pretrained(NAME) or zoo:NAME "
        "wherever a run directory is accepted (evaluate, compare).",
    )
    _zoo_dir(p, output=False, nested=False)
    sub = p.add_subparsers(dest="zoo_command", metavar="SUBCOMMAND")
    listing = sub.add_parser("list", help="list the models: name, problem, test error, size")
    _zoo_dir(listing, output=False)
    show = sub.add_parser("show", help="print a model card")
    show.add_argument("name", metavar="NAME", help="a model name (or zoo:NAME)")
    _zoo_dir(show, output=False)
    add = sub.add_parser(
        "add", help="pack a finished training run into the zoo",
        description="Evaluate the selected model of RUN_DIR on its test split at each "
        "--resolutions grid, and write its weights (safetensors), run record and model card "
        "(card.json, card.md) into the zoo as NAME.")
    add.add_argument("run_dir", type=run_dir, metavar="RUN_DIR", help="a finished training run")
    add.add_argument("--name", required=True, metavar="NAME",
                     help="zoo name, e.g. burgers-galerkin (lower-case letters, digits, '-')")
    add.add_argument("--data", type=input_file, required=True, metavar="FILE.nc",
                     help="the run's training file (written by `neuralop-fem generate`)")
    add.add_argument("--resolutions", type=int_range(2), nargs="+", metavar="n",
                     help="grids of the test evaluation (default: the training resolution), "
                          "e.g. 512 2048 8192")
    add.add_argument("--report", type=input_dir, metavar="REPORT_DIR",
                     help="a `neuralop-fem compare` report of this run: its fair verdict goes "
                          "into the card")
    add.add_argument("--device", type=device, metavar="D",
                     help="device of the evaluation: auto (default), cpu, cuda, cuda:K")
    add.add_argument("--overwrite", action="store_true", help="replace an entry of that name")
    _zoo_dir(add, output=True)
    verdict = sub.add_parser(
        "verdict", help="replace a model's fair verdict by that of a compare report",
        description="Replace the fair verdict in the card of the zoo model NAME by that of "
        "REPORT_DIR, written by `neuralop-fem compare zoo:NAME` (or `compare DIR/NAME` for "
        "--zoo-dir DIR); the weights and test errors stay as they are.")
    verdict.add_argument("name", metavar="NAME", help="a model name (or zoo:NAME)")
    verdict.add_argument("--report", type=input_dir, required=True, metavar="REPORT_DIR",
                         help="a `neuralop-fem compare` report of this model")
    _zoo_dir(verdict, output=False)
    return p


def _mib(n_bytes: int) -> str:
    return f"{n_bytes / 2**20:.1f} MiB"


def _list(root: Path | None) -> int:
    names = available(root)
    pending = planned_missing(root) if root is None else []
    tail = f"planned, training pending: {', '.join(pending)}\n" if pending else ""
    if not names:
        sys.stdout.write("the zoo is empty\n" + tail)
        return 0
    rows = [summary_row(read_card(n, root)) for n in names]
    head = ("name", "problem", "preset", "test rel. L2 (n)", "parameters", "weights")
    table = [head] + [(*(printable(r[k], limit=100) for k in ("name", "problem", "preset")),
                       f"{r['rel_l2']:.3e} ({r['grid']})", f"{r['n_parameters']:,}",
                       _mib(r["bytes"])) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
             for row in table]
    sys.stdout.write("\n".join(lines) + "\n" + tail)
    return 0


def _show(name: str, root: Path | None) -> int:
    name = name.removeprefix(PREFIX)
    card = (entry_dir(name, root) / CARD_MD).read_text(encoding="utf-8")
    sys.stdout.write(printable_lines(card))  # a card of --zoo-dir is anyone's text
    return 0


def _add(args: argparse.Namespace) -> int:
    check_run_dir(args.run_dir)
    check_input_file(args.data, "--data")
    # `zoo --zoo-dir DIR add ...` (before the subcommand) names the zoo to write into as well
    root = args.zoo_out if args.zoo_out is not None else args.zoo_dir
    if args.zoo_out is not None and args.zoo_dir is not None and (
            Path(args.zoo_out).resolve() != Path(args.zoo_dir).resolve()):
        msg = (f"argument --zoo-dir: must name one zoo directory; got {str(args.zoo_dir)!r} "
               f"before `add` and {str(args.zoo_out)!r} after it.")
        raise UsageError(msg)

    # deferred: torch (packing evaluates the model; `zoo list` and `zoo show` load none)
    from ..zoo.pack import add_to_zoo

    target = add_to_zoo(args.run_dir, name=args.name, data=args.data,
                        resolutions=args.resolutions, report=args.report, root=root,
                        overwrite=args.overwrite,
                        device=None if args.device in (None, "auto") else args.device)
    sys.stdout.write(f"added {args.name} to the zoo: {target}\n")
    return _show(args.name, target.parent)


def _verdict(args: argparse.Namespace) -> int:
    # deferred: torch (as for `zoo add`)
    from ..zoo.pack import replace_verdict

    name = args.name.removeprefix(PREFIX)
    target = replace_verdict(name, args.report, args.zoo_dir)
    sys.stdout.write(f"replaced the fair verdict of {name}: {target / 'card.json'}\n")
    return 0


def run(args: argparse.Namespace) -> int:
    """Execute ``neuralop-fem zoo``; return the exit status."""
    command = args.zoo_command or "list"
    if command == "add":
        return _add(args)
    if command == "verdict":
        return _verdict(args)
    if command == "show":
        return _show(args.name, args.zoo_dir)
    return _list(args.zoo_dir)
