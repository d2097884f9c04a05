"""The fair verdicts of trained runs in one results file: each run's surrogate on the
accuracy-cost front of its problem's solver ladder (:func:`neuralop_fem.evaluation.compare_run`),
with the training budget it had."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from neuralop_fem.evaluation import compare_run
from neuralop_fem.reproduce.results import footer
from neuralop_fem.runs import RunDir

from .rungs import ladder_seconds

__all__ = ["markdown", "training_budget", "verdict_of_run"]


def training_budget(run_dir: Path) -> dict[str, Any]:
    """Preset, epochs, training samples, resolution and wall seconds of a run (run.json)."""
    record = RunDir(run_dir).read()
    epochs = record.epochs_completed
    if epochs is None:
        epochs = (record.train_config or {}).get("epochs")
    return {"preset": record.preset, "epochs": epochs,
            "n_train": len(record.splits.train) if record.splits else 0,
            "resolution": record.resolution, "train_seconds": record.wall_time_s}


def verdict_of_run(run_dir: Path, data: Path, *, max_samples: int,
                   reports: Path) -> dict[str, Any]:
    """The fair verdict of the run ``run_dir`` on the test split of ``data`` (at most
    ``max_samples``; the reports go to ``reports/<run name>``): the surrogate's error and times,
    the verdict's attributes, each rung's error and times, the ladder's and the reference's
    seconds per sample."""

    out = reports / run_dir.name
    rep = compare_run(run_dir, data=data, out=out, indices="test", max_samples=max_samples,
                      warm_start=False, overwrite=True)  # the bench's own reports directory
    ds = rep["dataset"]
    a = ds.attrs
    allc = ds["ladder_time_all_cores"].values if "ladder_time_all_cores" in ds else None
    rungs = [{"rung": str(label), "on_front": bool(ds["on_front"].values[i]),
              "rel_l2_mean": float(ds["ladder_rel_l2"].values[i].mean()),
              "ms_batch": 1e3 * float(ds["ladder_time"].values[i].mean()),
              "ms_one_per_call": 1e3 * float(ds["ladder_time_batch1"].values[i].mean()),
              "ms_all_cores": 1e3 * float(allc[i]) if allc is not None else None}
             for i, label in enumerate(ds["rung"].values)]
    ladder_s = ladder_seconds(ds["ladder_time"].values, ds["ladder_time_batch1"].values, allc)
    return {"run": str(run_dir), "data": str(data), "problem": a["problem"],
            "ladder_s_per_sample": ladder_s,
            "reference_s_per_sample": float(ds["time"].sel(approach="classical").mean()
                                            if "approach" in ds.dims
                                            else ds["reference_time"].mean()),
            "candidate": a["candidate"], "n_samples": int(a["n_samples"]),
            "budget": training_budget(run_dir), "report": str(out),
            "surrogate_rel_l2_vs_truth": float(ds["truth_rel_l2"].mean()),
            "surrogate_ms_batch": 1e3 * float(a["fair_surrogate_time"]),
            "surrogate_ms_one_per_call": 1e3 * float(a.get("fair_batch1_surrogate_time", np.nan)),
            "surrogate_ms_all_cores": 1e3 * float(a.get("fair_all_cores_surrogate_time", np.nan)),
            "fair": {k: (v.item() if isinstance(v, np.generic) else v) for k, v in a.items()
                     if k.startswith(("fair_", "verdict"))},
            "rungs": rungs}


def _speed(f: dict[str, Any], prefix: str) -> str:
    status = f.get(f"{prefix}status", "")
    if not status:
        return "n/a"
    if status == "more accurate than every rung":
        return status
    bound = "<= " if status.startswith("at most") else ""
    return f"{bound}{f[f'{prefix}speedup']:.2g}x"


def markdown(data: dict[str, Any]) -> str:
    """The results file of :func:`verdict_of_run` for each run (``data``: ``runs``,
    ``notes`` and the environment ``record``)."""

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
        cost = f.get("fair_equal_cost_rung") or "none"
        if cost != "none":
            cost += f" ({f['fair_equal_cost_error']:.1e})"
        lines.append(f"| {r['problem']} | {r['candidate']} ({bud}) | "
                     f"{r['surrogate_rel_l2_vs_truth']:.2e} | {_speed(f, 'fair_')} | "
                     f"{_speed(f, 'fair_batch1_')} | {_speed(f, 'fair_all_cores_')} | {cost} |")
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
