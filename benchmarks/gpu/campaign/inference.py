"""Stage ``inference``: ``benchmarks/bench_inference.py`` on the GPU, in one call.

For every zoo model (weights shipped with the package, so nothing is carried): FLOPs per
sample, samples/s of ``Surrogate.solve`` and of the bare forward pass at batch 1, 16, 128 and
1024 on the GPU and at 1, 16, 128 on the CPU (one thread and all cores), the achieved
TFLOP/s against a dense matmul measured in the same call, the solve-over-forward overhead, and
each precision's accuracy cost (float32, TF32, bf16 on the GPU; float32, bf16 on one CPU
thread) on fresh samples drawn with the bundled solvers
(:mod:`benchmarks.lab.inference`). The GPU rows of a model run before its CPU rows,
and the CPU rows are left out when the budget runs short, so the GPU figures come back from
one 10-minute call. The goals of issue 46 it checks: the Darcy models at >= 5,000 samples/s
(batch >= 128), the Burgers models at >= 50,000, one sample per call <= 1 ms (Burgers) and
<= 3 ms (Darcy).
"""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path
from typing import Any

from benchmarks.lab import inference, inference_report

from .machine import Deadline

__all__ = ["GOALS", "REHEARSE", "goal_rows", "plan_for", "run"]

log = logging.getLogger("campaign.inference")

#: problem -> (least samples/s at batch >= 128, most ms per call at batch 1) on a GPU.
GOALS = {"darcy": (5000.0, 3.0), "darcy-inverse": (5000.0, 3.0), "burgers": (50000.0, 1.0)}
#: The rehearsal's plan: one model of each problem, tiny batches, the CPU only.
REHEARSE = {"models": ("burgers-fno", "darcy-fno", "darcy-inverse-galerkin"), "samples": 2,
            "batches": (1, 2)}


def plan_for(args: argparse.Namespace) -> Any:
    """The :class:`~benchmarks.lab.inference.Plan` of this call."""

    cores = os.cpu_count() or 1
    if args.rehearse:
        return inference.Plan(models=REHEARSE["models"], samples=REHEARSE["samples"],
                              cpu_threads=(1,), cpu_batches=REHEARSE["batches"],
                              gpu_batches=REHEARSE["batches"], gpu=False, repeats=1,
                              min_time=0.01, max_call_s=5.0, cpu_reserve_s=0.0)
    return inference.Plan(models=tuple(inference.zoo_models()), samples=16,
                          cpu_threads=(1, cores) if cores > 1 else (1,),
                          gpu=args.device.startswith("cuda"), repeats=3, min_time=0.1,
                          max_call_s=4.0, cpu_reserve_s=90.0)


def goal_rows(models: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per model with GPU rows: the best samples/s of ``solve`` at batch >= 128 and the ms of
    one sample per call, against :data:`GOALS`."""
    out = []
    for m in models:
        gpu = [r for r in m.get("speed", [])
               if r.get("where") == "GPU" and "solve_samples_per_s" in r]
        if not gpu or m["problem"] not in GOALS:
            continue
        rate_goal, ms_goal = GOALS[m["problem"]]
        big = [r["solve_samples_per_s"] for r in gpu if r["batch"] >= 128]
        one = [r["solve_ms_per_sample"] for r in gpu if r["batch"] == 1]
        rate = max(big) if big else None
        ms = one[0] if one else None
        out.append({"name": m["name"], "samples_per_s": rate, "rate_goal": rate_goal,
                    "rate_met": rate is not None and rate >= rate_goal, "ms_one": ms,
                    "ms_goal": ms_goal, "ms_met": ms is not None and ms <= ms_goal})
    return out


def run(args: argparse.Namespace, deadline: Deadline, out: Path) -> tuple[dict, list[str], int]:

    plan = plan_for(args)
    result = inference.measure(plan, log=log.info, deadline=deadline.left)
    goals = goal_rows(result["models"])
    title = "# GPU campaign: inference" + (" (rehearsal: not a measurement)"
                                           if args.rehearse else "")
    lines = [title, "", *inference_report.markdown(result["models"], result["peaks"])[1:]]
    if goals:
        lines += ["", "## Goals on the GPU (issue 46)", "",
                  "| model | solve samples/s, batch >= 128 | goal | ms for one sample | goal |",
                  "|---|---|---|---|---|"]
        lines += [f"| {g['name']} | {_f(g['samples_per_s'], '.0f')} "
                  f"({'met' if g['rate_met'] else 'missed'}) | >= {g['rate_goal']:.0f} | "
                  f"{_f(g['ms_one'], '.2f')} ({'met' if g['ms_met'] else 'missed'}) | "
                  f"<= {g['ms_goal']:.0f} |" for g in goals]
    return {**result, "goals": goals}, lines, 0


def _f(value: Any, spec: str) -> str:
    return "-" if value is None else format(value, spec)
