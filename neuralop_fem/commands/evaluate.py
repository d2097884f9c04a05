"""``neuralop-fem evaluate``: relative L2 / H1 errors of a trained run on a dataset.

Evaluates the selected model of RUN_DIR at the training resolution or another one reachable
from the file's grid (e.g. trained at 512, evaluated at 2048 and 8192), prints a summary table
and writes the per-sample errors to a CSV file and the summary to a JSON file beside it.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UsageError
from ..evaluation import evaluate_run
from ..files import write_json_atomic, write_text_atomic
from ..number_options import int_range
from ..path_options import (
    check_input_file,
    check_output_apart,
    check_output_dir,
    check_output_file,
    input_file,
    output_file,
)
from ..training.distributed import resolve_device
from ..zoo import is_entry
from ._options import device, indices
from ._run_options import check_indices, check_run_dir, run_dir

if TYPE_CHECKING:  # pragma: no cover
    from ..evaluation.run_evaluation import RunEvaluation

__all__ = ["register", "run", "write_results"]


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``evaluate`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "evaluate", help="relative L2 / H1 errors of a trained run on a dataset",
        description="Per-sample relative L2 and H1-seminorm errors of the selected model of "
        "RUN_DIR, summarised (mean, median, p95, max).",
    )
    p.add_argument("run_dir", type=run_dir, metavar="RUN_DIR",
                   help="a training run directory, or zoo:NAME (a model of `neuralop-fem zoo`)")
    p.add_argument("--data", type=input_file, required=True, metavar="FILE.nc",
                   help="dataset file")
    p.add_argument("--resolution", type=int_range(2), metavar="n",
                   help="evaluation grid (default: the training resolution)")
    p.add_argument("--indices", type=indices, default="test", metavar="test|all|A:B",
                   help="samples: the run's test split (default), all, or positions A..B-1 "
                        "(must exist in --data)")
    p.add_argument("--out", type=output_file, metavar="FILE.csv",
                   help="per-sample CSV (default RUN_DIR/eval_<data>_n<res>_<indices>.csv, or "
                        "eval_<NAME>_<data>_n<res>_<indices>.csv here for zoo:NAME; e.g. "
                        "eval_burgers_n512_test.csv for --indices test, eval_burgers_n512_0-8.csv "
                        "for 0:8); the summary goes to the same name with .json")
    p.add_argument("--batch-size", dest="batch_size", type=int_range(1), metavar="B",
                   help="evaluation batch size >= 1 (default: the run's)")
    p.add_argument("--device", type=device, metavar="D",
                   help="auto, cpu, cuda or cuda:K (default auto: cuda if available)")
    return p


#: The per-sample columns of the CSV, in order (PDEBench's RMSE, max and bRMSE after ours).
_PER_SAMPLE = ("rel_l2", "rel_h1", "rmse", "max_error", "boundary_rmse")


def write_results(result: RunEvaluation, path: Path) -> Path:
    """Per-sample CSV at ``path`` and the summary JSON at ``path.with_suffix('.json')``.

    Both are written atomically (:mod:`neuralop_fem.files`): a link at either name is
    replaced, never written through.
    """
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    columns = [c for c in _PER_SAMPLE if c in result]
    writer.writerow(["sample", *columns])
    for row, i in enumerate(result["indices"]):
        writer.writerow([int(i), *(repr(float(result[c][row])) for c in columns)])  # type: ignore[literal-required]
    write_text_atomic(path, text.getvalue())
    summary = {k: v for k, v in result.items() if k not in ("indices", *_PER_SAMPLE)}
    summary["csv"] = str(path)
    json_path = path.with_suffix(".json")
    write_json_atomic(json_path, summary)
    return json_path


def _table(result: RunEvaluation) -> str:
    s = result["summary"]
    head = (f"{result['preset'] or 'run'}: {result['n_samples']} samples "
            f"at n={result['resolution']}"
            f" (trained at n={result['train_resolution']})")
    rows = [f"{'error':<8}{'mean':>12}{'median':>12}{'p95':>12}{'max':>12}"]
    for name, label in (("rel_l2", "rel. L2"), ("rel_h1", "rel. H1"), ("rmse", "RMSE"),
                        ("max_error", "max err"), ("boundary_rmse", "bRMSE")):
        if name not in s:
            continue
        v = s[name]
        rows.append(f"{label:<8}{v['mean']:>12.4e}{v['median']:>12.4e}{v['p95']:>12.4e}"
                    f"{v['max']:>12.4e}")
    if "pdebench" in s:
        p = s["pdebench"]
        rows.append(f"PDEBench: nRMSE (= rel. L2) {p['nrmse']:.4e}, RMSE {p['rmse']:.4e}, max "
                    f"{p['max_error']:.4e}, bRMSE {p['boundary_rmse']:.4e}, fRMSE low/mid/high "
                    f"{p['frmse_low']:.3e}/{p['frmse_mid']:.3e}/{p['frmse_high']:.3e}")
    return "\n".join([head, *rows])


def _check(args: argparse.Namespace) -> None:
    """The paths and device, before anything is loaded or evaluated."""
    check_run_dir(args.run_dir)
    check_input_file(args.data, "--data")
    check_indices(args.indices, args.data)
    if args.out is None:  # the default --out goes to RUN_DIR (a zoo model's: here)
        check_output_dir(Path() if is_entry(args.run_dir) else args.run_dir, "RUN_DIR")
    else:
        if args.out.suffix == ".json":
            msg = (f"argument --out: must not end in .json (the summary goes to "
                   f"{args.out.stem}.json beside the CSV); got {str(args.out)!r}.")
            raise UsageError(msg)
        check_output_file(args.out, "--out")
        check_output_file(args.out.with_suffix(".json"), "--out")
        check_output_apart(args.out.with_suffix(".json"), "--out",  # the summary beside it
                           [("--data", args.data), ("RUN_DIR", args.run_dir)], directory=False)
    if args.device not in (None, "auto"):
        resolve_device(args.device)


def run(args: argparse.Namespace) -> int:
    """Execute ``neuralop-fem evaluate``; return the exit status."""
    _check(args)

    dev = None if args.device == "auto" else args.device
    result = evaluate_run(args.run_dir, args.data, resolution=args.resolution,
                          indices=args.indices, batch_size=args.batch_size, device=dev)
    out = args.out
    if out is None:  # in RUN_DIR; for a zoo model in the working directory, named after it
        tag = args.indices.replace(":", "-") if isinstance(args.indices, str) else "custom"
        stem = f"{args.data.stem}_n{result['resolution']}_{tag}.csv"
        out = Path(f"eval_{args.run_dir.name}_{stem}") if is_entry(args.run_dir) else \
            args.run_dir / f"eval_{stem}"
    json_path = write_results(result, out)
    sys.stdout.write(_table(result) + f"\nwrote {out} and {json_path}\n")
    return 0
