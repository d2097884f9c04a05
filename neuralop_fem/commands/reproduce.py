"""``neuralop-fem reproduce``: the paper's tables, reproduced and recorded row by row.

Subcommands: ``run`` (generate, train, evaluate and record, resumable), ``record RUN_DIR
--data FILE`` (a finished run trained by hand), ``check-data FILE`` (is a regenerated file
the data of recorded rows) and ``tables`` (rewrite the markdown from the JSON).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..data.fingerprint import SAME_VALUES_RTOL
from ..errors import InputError
from ..number_options import float_range, int_range
from ..path_options import check_output_apart, input_dir, input_file
from ..reproduce.driver import REFERENCE_SEED, ReproduceSettings, reproduce
from ..reproduce.record import build_row, check_data, load_results, merge_rows, save_results
from ..reproduce.rows import upgrade_legacy

__all__ = ["register", "run"]

#: The rows' file, relative to the current directory (a source checkout's root).
RESULTS = Path("benchmarks/results/reproduction.json")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--results", type=Path, metavar="FILE.json",
                   help=f"the rows' file; the markdown is written beside it (default {RESULTS}, "
                        "with --quick reproduction_quick.json beside it)")
    p.add_argument("--quick", action="store_true",
                   help="tiny sizes: a smoke run of every step, recorded apart")


def _training(p: argparse.ArgumentParser) -> None:
    p.add_argument("--label", default="", help="the recipe's name in the results")
    p.add_argument("--reduced", action="store_true",
                   help="the CPU-sized Darcy scale (256 training samples, 20 epochs at 85), "
                        "labelled 'reduced'")
    p.add_argument("--eval-device", dest="eval_device", help="evaluation device")
    p.add_argument("--data-dir", dest="data_dir", type=Path, metavar="DIR",
                   help="datasets (default data/reproduction, or data/reproduction_quick)")


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``reproduce`` subcommand (with its own subcommands) to ``subparsers``."""
    p = subparsers.add_parser(
        "reproduce", help="reproduce the paper's tables and record each run traceably",
        description="Reproduce the relative L2 errors of Cao 2021 (Tables 2a/2b/3): every row "
        "records the dataset seed, checksum and sketch, the code commit, the commands that "
        "rerun it, hardware and threads.")
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    r = sub.add_parser("run", help="generate, train, evaluate and record (resumable)",
                       description="Generate the data, train each preset and seed (an "
                       "unfinished run resumes), evaluate on the test split and record a row.")
    r.add_argument("--preset", action="append", metavar="NAME",
                   help="training preset (repeatable; default burgers-galerkin)")
    r.add_argument("--seed", action="append", type=int_range(0), metavar="S",
                   help="training seed (repeatable; default 1127802, the reference's)")
    r.add_argument("--viscosity", default="gt",
                   help="Burgers viscosity: gt (0.1/(2 pi), default), fno (0.1) or a number")
    r.add_argument("--noise", type=float_range(0, inclusive=True),
                   help="inverse problem noise level (default: the preset's)")
    r.add_argument("--epochs", type=int_range(1), help="override the epochs")
    r.add_argument("--batch-size", dest="batch_size", type=int_range(1),
                   help="override the batch size")
    r.add_argument("--target-normalizer", dest="target_normalizer",
                   choices=("reference", "global"), help="TrainConfig.target_normalizer")
    r.add_argument("--set", dest="set", action="append", default=[], metavar="KEY=VALUE",
                   help="any model or training setting (JSON value); repeatable")
    r.add_argument("--max-epochs-this-call", dest="max_epochs_this_call", type=int_range(1),
                   metavar="K", help="stop each training after K more epochs (call again to "
                   "continue)")
    r.add_argument("--device", default="auto", help="training device (default auto)")
    r.add_argument("--workers", type=int_range(0), help="generation worker processes")
    r.add_argument("--data-seed", dest="data_seed", type=int_range(0), default=0,
                   help="dataset seed (default 0)")
    r.add_argument("--runs-dir", dest="runs_dir", type=Path, metavar="DIR",
                   help="run directories (default runs/reproduction, or runs/reproduction_quick)")
    _training(r)
    _common(r)
    c = sub.add_parser("record", help="evaluate finished runs and record their rows",
                       description="Evaluate finished runs (trained with `neuralop-fem train`) "
                       "on their test split and record one row each.")
    c.add_argument("run_dirs", nargs="+", type=input_dir, metavar="RUN_DIR", help="run directory")
    c.add_argument("--data", type=input_file, required=True, metavar="FILE.nc",
                   help="the runs' dataset (regenerated from its seed is fine)")
    c.add_argument("--training-commit", dest="training_commit", metavar="SHA",
                   help="code commit of runs whose run.json predates recording it")
    _training(c)
    _common(c)
    d = sub.add_parser("check-data", help="is FILE the data of recorded rows",
                       description="Say whether each file holds the data of recorded rows: bit "
                       "for bit, or the same values up to rounding where another CPU's "
                       "kernels round the last bits differently. Exit status 1 when a file "
                       "holds no rows' data.")
    d.add_argument("files", nargs="+", type=input_file, metavar="FILE.nc", help="dataset file")
    d.add_argument("--rtol", type=float_range(0),
                   help="largest relative difference of 'same values' (default 1e-9, "
                        "neuralop_fem.data.fingerprint.SAME_VALUES_RTOL)")
    _common(d)
    t = sub.add_parser("tables", help="rewrite the markdown tables from the rows' JSON",
                       description="Rewrite the markdown beside the rows' file from its rows "
                       "(rows of an older format completed).")
    t.add_argument("--data-dir", dest="data_dir", type=Path, metavar="DIR",
                   help="where the datasets of rows of the older format may be found")
    _common(t)
    return p


def _results(args: argparse.Namespace) -> Path:
    if args.results is not None:
        return args.results
    return RESULTS.with_name("reproduction_quick.json") if args.quick else RESULTS


def _data_dir(args: argparse.Namespace) -> Path:
    return args.data_dir or Path("data") / ("reproduction_quick" if args.quick else
                                            "reproduction")


def run(args: argparse.Namespace) -> int:
    """Execute ``neuralop-fem reproduce ACTION``; 0 on success (``check-data``: 1 when a file
    holds no recorded rows' data)."""
    results = _results(args)
    inputs = [("--data", args.data)] if getattr(args, "data", None) is not None else []
    inputs += [("RUN_DIR", r) for r in getattr(args, "run_dirs", None) or []]
    inputs += [("FILE.nc", f) for f in getattr(args, "files", None) or []]
    for path in (results, results.with_suffix(".md")):
        check_output_apart(path, "--results", inputs, directory=False)
    if args.action == "check-data":
        if not results.is_file():
            msg = (f"--results {results}: no such file (the rows' JSON whose data the files "
                   "are checked against)")
            raise InputError(msg)
        rtol = SAME_VALUES_RTOL if args.rtol is None else args.rtol
        lines, ok = check_data(list(args.files), results, rtol)
        sys.stdout.write("".join(f"{line}\n" for line in lines))
        return 0 if ok else 1
    if args.action == "tables":
        if not results.is_file():
            msg = f"--results {results}: no such file (the rows' JSON to write the tables of)"
            raise InputError(msg)

        data = load_results(results)
        data["runs"] = {k: upgrade_legacy(v, args.data_dir) for k, v in data["runs"].items()}
        _, md = save_results(results, data)
        sys.stdout.write(f"wrote {md}\n")
        return 0
    if args.action == "record":
        rows = [build_row(r, args.data, label=args.label, quick=args.quick,
                          reduced=args.reduced, eval_device=args.eval_device, reproduce=None,
                          training_commit=args.training_commit) for r in args.run_dirs]
        notes = merge_rows(rows, results, quick=args.quick, data_dir=_data_dir(args))
        sys.stdout.write("".join(f"{line}\n" for line in notes))
        sys.stdout.write("".join(f"recorded {r['key']}\n" for r in rows))
        return 0

    runs_dir = args.runs_dir or Path("runs") / ("reproduction_quick" if args.quick else
                                                "reproduction")
    settings = ReproduceSettings(
        viscosity=args.viscosity, noise=args.noise, epochs=args.epochs,
        batch_size=args.batch_size, target_normalizer=args.target_normalizer,
        overrides=tuple(args.set), label=args.label, max_epochs_this_call=args.max_epochs_this_call,
        quick=args.quick, reduced=args.reduced, device=args.device,
        eval_device=args.eval_device, workers=args.workers, data_seed=args.data_seed,
        data_dir=_data_dir(args), runs_dir=runs_dir, results=results)
    for row in reproduce(settings, args.preset or ["burgers-galerkin"],
                         args.seed or [REFERENCE_SEED]):
        errors = ", ".join(f"n={n}: {e['rel_l2']['mean']:.4e}" for n, e in row["errors"].items())
        sys.stdout.write(f"recorded {row['key']}: {errors}\n")
    return 0
