"""The fair verdict for trained surrogates: speed-up at equal accuracy and accuracy at equal cost.

For each ``--run RUN_DIR:DATA.nc`` pair, ``neuralop_fem.evaluation.compare_run`` places the run's
surrogate on the accuracy-cost front of its problem's solver ladder (solvers/problems.py), on
the run's test split of the dataset: errors against the dataset's stored solutions (inverse
runs: the coefficient error against the true coefficient on the observation grid, the
inversion ladder inverting the same noisy observations), times per
sample at the full batch and one sample per call on one thread, and on all cores (the solver in
a process pool, the surrogate with as many torch threads). The surrogate's training budget
(epochs, samples, wall time) is recorded beside it: a verdict is about that model, not about
what the architecture could reach. Writes benchmarks/results/fair.{json,md}; the reports
(summary.md, plots, comparison.nc) go to ``--reports``.

Run: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python benchmarks/bench_fair.py \\
         --run RUN_DIR:DATA.nc [--run ...] [--max-samples 16] [--reports DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from neuralop_fem.environment import environment_record as record
from neuralop_fem.reproduce.results import footer, write_results
from neuralop_fem.reproduce.script import count, run_script

RESULTS = Path(__file__).resolve().parent / "results"


def _pair(text: str) -> tuple[Path, Path]:
    run, sep, data = text.rpartition(":")
    if not sep or not Path(run).is_dir() or not Path(data).is_file():
        msg = f"must be RUN_DIR:DATA.nc with an existing run directory and file; got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return Path(run), Path(data)


def _budget(run_dir: Path) -> dict[str, Any]:
    info = json.loads((run_dir / "run.json").read_text())
    cfg = info.get("train_config", {})
    return {"preset": info.get("preset"), "epochs": info.get("epochs_completed", cfg.get("epochs")),
            "n_train": len(info.get("splits", {}).get("train", [])),
            "resolution": info.get("resolution"),
            "train_seconds": info.get("wall_time_s")}


def one_run(run_dir: Path, data: Path, *, max_samples: int, reports: Path) -> dict[str, Any]:
    from neuralop_fem.evaluation import compare_run

    out = reports / run_dir.name
    rep = compare_run(run_dir, data=data, out=out, indices="test", max_samples=max_samples,
                      warm_start=False)
    ds = rep["dataset"]
    a = ds.attrs
    keys = [k for k in a if k.startswith(("fair_", "verdict"))]
    rungs = [{"rung": str(label), "on_front": bool(ds["on_front"].values[i]),
              "rel_l2_mean": float(ds["ladder_rel_l2"].values[i].mean()),
              "ms_batch": 1e3 * float(ds["ladder_time"].values[i].mean()),
              "ms_one_per_call": 1e3 * float(ds["ladder_time_batch1"].values[i].mean()),
              "ms_all_cores": (1e3 * float(ds["ladder_time_all_cores"].values[i])
                               if "ladder_time_all_cores" in ds else None)}
             for i, label in enumerate(ds["rung"].values)]
    n = int(a["n_samples"])
    ladder_s = (float(ds["ladder_time"].mean("sample").sum())
                + min(n, 4) / n * float(ds["ladder_time_batch1"].mean("sample").sum())
                + (float(ds["ladder_time_all_cores"].sum()) if "ladder_time_all_cores" in ds
                   else 0.0))
    return {"run": str(run_dir), "data": str(data), "problem": a["problem"],
            "ladder_s_per_sample": ladder_s,
            "reference_s_per_sample": float(ds["time"].sel(approach="classical").mean()
                                            if "approach" in ds.dims
                                            else ds["reference_time"].mean()),
            "candidate": a["candidate"], "n_samples": int(a["n_samples"]),
            "budget": _budget(run_dir), "report": str(out),
            "surrogate_rel_l2_vs_truth": float(ds["truth_rel_l2"].mean()),
            "surrogate_ms_batch": 1e3 * float(a["fair_surrogate_time"]),
            "surrogate_ms_one_per_call": 1e3 * float(a.get("fair_batch1_surrogate_time", np.nan)),
            "surrogate_ms_all_cores": 1e3 * float(a.get("fair_all_cores_surrogate_time", np.nan)),
            "fair": {k: (v.item() if isinstance(v, np.generic) else v) for k, v in a.items()
                     if k in keys},
            "rungs": rungs}


def markdown(data: dict[str, Any]) -> str:
    lines = ["# The fair verdict: surrogates on the solver's accuracy-cost front", "",
             "Errors against the dataset's stored solutions on the model grid (mean relative "
             "L2 over the run's test samples; the inverse problem: the recovered coefficient "
             "against the true one on the observation grid, from noisy observations); times "
             "per sample. Speed-up = solver time at the "
             "surrogate's accuracy (log-log interpolated along the front) / surrogate time.",
             "", "| problem | surrogate (training budget) | rel. L2 | speed-up at equal "
             "accuracy: batch, 1 thread | one per call | all cores | best rung within the "
             "surrogate's time (batch, 1 thread) |", "|---|---|---|---|---|---|---|"]
    for r in data["runs"]:
        f, b = r["fair"], r["budget"]
        bud = f"{b['preset']}, {b['epochs']} epochs on {b['n_train']} samples at {b['resolution']}"

        def speed(prefix: str, f: dict[str, Any] = f) -> str:
            status = f.get(f"{prefix}status", "")
            if not status:
                return "n/a"
            if status == "more accurate than every rung":
                return "more accurate than every rung"
            bound = "<= " if status.startswith("at most") else ""
            return f"{bound}{f[f'{prefix}speedup']:.2g}x"

        cost = f.get("fair_equal_cost_rung") or "none"
        if cost != "none":
            cost += f" ({f['fair_equal_cost_error']:.1e})"
        lines.append(f"| {r['problem']} | {r['candidate']} ({bud}) | "
                     f"{r['surrogate_rel_l2_vs_truth']:.2e} | {speed('fair_')} | "
                     f"{speed('fair_batch1_')} | {speed('fair_all_cores_')} | {cost} |")
    for r in data["runs"]:
        lines += ["", f"## {r['problem']}: {r['candidate']}", "", r["fair"]["verdict"], "",
                  "| rung | front | rel. L2 | ms batch | ms one per call | ms all cores |",
                  "|---|---|---|---|---|---|"]
        for g in r["rungs"]:
            allc = f"{g['ms_all_cores']:.3g}" if g["ms_all_cores"] is not None else "n/a"
            lines.append(f"| {g['rung']} | {'yes' if g['on_front'] else ''} | "
                         f"{g['rel_l2_mean']:.2e} | {g['ms_batch']:.3g} | "
                         f"{g['ms_one_per_call']:.3g} | {allc} |")
        lines.append(f"| **surrogate** | | {r['surrogate_rel_l2_vs_truth']:.2e} | "
                     f"{r['surrogate_ms_batch']:.3g} | {r['surrogate_ms_one_per_call']:.3g} | "
                     f"{r['surrogate_ms_all_cores']:.3g} |")
        lines += ["", f"The ladder's timed solves cost {1e3 * r['ladder_s_per_sample']:.3g} ms "
                  f"per sample, the reference solver's (at the model grid; inverse: the "
                  f"classical inversion's) "
                  f"{1e3 * r['reference_s_per_sample']:.3g} ms."]
    lines += ["", *data["notes"], "", *footer(data["record"])]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=_pair, action="append", required=True,
                        metavar="RUN_DIR:DATA.nc", help="a training run and its dataset")
    parser.add_argument("--max-samples", type=count(2), default=16,
                        help="test samples per run (default 16)")
    parser.add_argument("--reports", type=Path, default=Path("fair_reports"),
                        help="directory for the comparison reports (default ./fair_reports)")
    parser.add_argument("--note", action="append", default=[],
                        help="a line for the results file (e.g. what is missing); repeatable")
    args = parser.parse_args(argv)
    runs = [one_run(r, d, max_samples=args.max_samples, reports=args.reports)
            for r, d in args.run]
    data = {"runs": runs, "notes": args.note, "record": record()}
    text = markdown(data)
    js, md = write_results(RESULTS, "fair", data, text)
    print(text)
    print(f"wrote {js} and {md}")
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
