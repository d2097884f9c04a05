"""The results file of the inference benchmark (``benchmarks/bench_inference.py``): its tables
(:func:`markdown`), re-runs of some models merged into an earlier file (:func:`merge`,
:func:`merge_notes`) and the torch.compile rows (:func:`compile_rows`)."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from typing import Any

from neuralop_fem.surrogate import Surrogate

from .inference import GOAL_BATCH, GOAL_OVERHEAD, compile_row, fresh_dataset, fresh_samples, threads

__all__ = ["compile_rows", "driver_arguments", "markdown", "merge", "merge_notes"]


def compile_rows(names: Sequence[str], *,
                 log: Callable[[str], None] = print) -> list[dict[str, Any]]:
    """:func:`~.inference.compile_row` of each zoo model ``names`` at batch 16 on one CPU
    thread (inputs: two fresh samples)."""
    rows = []
    for name in names:
        sur = Surrogate.pretrained(name, device="cpu")
        inputs = fresh_samples(sur, fresh_dataset(sur.card or {}, 2))[0]
        with threads(1):
            rows.append({**compile_row(sur, inputs), "name": name, "where": "CPU, 1 thread"})
        log(str(rows[-1]))
    return rows


def merge(old: dict[str, Any], result: dict[str, Any], command: str) -> list[str]:
    """Put ``result`` (a re-run of some models and compile rows) into ``old`` (an earlier
    results file) in place of the entries it measured again; ``old``'s matmul peaks kept.
    Returns the commands of both."""
    new = {m["name"]: m for m in result["models"]}
    result["models"] = [new.pop(m["name"], m) for m in old["models"]] + list(new.values())
    result["peaks"] = old["peaks"]
    again = {c["name"] for c in result["compile"]}
    result["compile"] = [c for c in old.get("compile", []) if c["name"] not in again] + \
        result["compile"]
    return [*old.get("commands", [old["command"]]), command]


def driver_arguments(command: str) -> list[str]:
    """The driver's arguments in a recorded command: what follows ``-m
    benchmarks.bench_inference`` (or ``benchmarks/bench_inference.py``, as earlier results
    name it).

    >>> driver_arguments("python -m benchmarks.bench_inference --samples 24 --merge")
    ['--samples', '24', '--merge']
    >>> driver_arguments("python benchmarks/bench_inference.py --gpu")
    ['--gpu']
    """
    words = shlex.split(command)
    ends = ("benchmarks.bench_inference", "bench_inference.py")
    start = next(i for i, word in enumerate(words) if word.endswith(ends))
    return words[start + 1:]


def merge_notes(commands: Sequence[str],
                parse: Callable[[list[str]], Any]) -> list[str]:
    """One line per ``--merge`` command of ``commands`` (``parse``: the driver's argument
    parser): the models and compile timings it measured again."""
    notes = []
    for command in commands:
        args = parse(driver_arguments(command))
        if args.merge:
            again = ", ".join(args.models) or "no model"
            extra = f"; torch.compile: {', '.join(args.compile)}" if args.compile else ""
            notes.append(f"`{command}` measured again: {again}{extra} (the matmul peaks are "
                         "the first command's).")
    return notes


def _met(overhead: float) -> str:
    return "yes" if overhead <= GOAL_OVERHEAD else "no"


def _f(value: Any, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def markdown(models: list[dict[str, Any]], peaks: dict[str, float], *,
             notes: Sequence[str] = (), compiled: Sequence[dict[str, Any]] = ()) -> list[str]:
    """The results file's tables: speed per model, where and batch; the goal check; the
    precision table."""
    lines = ["# Inference: Surrogate.solve against the bare forward pass", "",
             "Samples/s of `Surrogate.solve` (float64 host arrays in and out) and of the bare "
             "forward pass (a device tensor through the model), at each batch size; TFLOP/s of "
             "the forward pass from torch's FLOP counter; fraction of the dense matmul rate "
             "measured in the same run (" + ", ".join(
                 f"{k}: {v / 1e12:.3g} TFLOP/s" for k, v in peaks.items()) + ").", "",
             "| model | GFLOP/sample | where | batch | solve samples/s | forward samples/s | "
             "solve / forward (wall) | (CPU time) | forward TFLOP/s | of peak |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for m in models:
        if "skipped" in m:
            lines.append(f"| {m['name']} | - | - | - | skipped ({m['skipped']}) | | | | | |")
        for r in m["speed"]:
            head = f"| {m['name']} | {m['flops'] / 1e9:.3g} | {r['where']} | {r['batch']} |"
            if "skipped" in r:
                lines.append(f"{head} skipped ({r['skipped']}) | | | | | |")
                continue
            lines.append(f"{head} {r['solve_samples_per_s']:.4g} | "
                         f"{r['forward_samples_per_s']:.4g} | {r['overhead']:.3f} | "
                         f"{_f(r.get('overhead_cpu_time'), '.3f')} | "
                         f"{r['forward_tflops']:.3g} | {100 * r['fraction_of_peak']:.1f} % |")
    lines += ["", f"## Goal: solve <= {GOAL_OVERHEAD:.2f} x forward at batch {GOAL_BATCH} on "
              "one CPU thread", "",
              "Wall time and process CPU time (on one thread the CPU time is the call's work "
              "whatever else runs on the machine; the wall time adds the waits for a core).", "",
              "| model | solve / forward, wall | met | CPU time | met |", "|---|---|---|---|---|"]
    for m in models:
        row = next((r for r in m["speed"] if r["where"] == "CPU, 1 thread"
                    and r["batch"] == GOAL_BATCH and "overhead" in r), None)
        if row is not None:
            cpu = row.get("overhead_cpu_time")
            lines.append(f"| {m['name']} | {row['overhead']:.3f} | {_met(row['overhead'])} | "
                         f"{_f(cpu, '.3f')} | {'-' if cpu is None else _met(cpu)} |")
    lines += ["", "## Precision: accuracy cost and forward speed", "",
              "Mean relative L2 error against fresh reference solutions (the bundled solvers, "
              "the model card's data settings and seed, sample indices from 1124, strided to "
              "the model grid); deviation: mean relative L2 distance from the float32 "
              "prediction; cost: error minus the float32 error, and its share of it.", "",
              "| model | where | precision | samples | rel. L2 | deviation from float32 | "
              "cost (share) | forward samples/s (batch) | speed-up |",
              "|---|---|---|---|---|---|---|---|---|"]
    for m in models:
        for r in m.get("precision", []):
            lines.append(
                f"| {m['name']} | {r['where']} | {r['precision']} | {r['samples']} | "
                f"{r['rel_l2']:.4e} | {r['deviation_from_float32']:.2e} | "
                f"{r['cost']:+.2e} ({100 * r['cost_share']:+.1f} %) | "
                f"{_f(r['forward_samples_per_s'], '.4g')} ({r['batch']}) | "
                f"{r['speedup']:.2f} |")
    if compiled:
        lines += ["", "## torch.compile (default mode), bare forward pass", "",
                  "| model | where | batch | eager ms (CPU time) | compiled ms (CPU time) | "
                  "speed-up (CPU time) | first compiled call s | max deviation |",
                  "|---|---|---|---|---|---|---|---|"]
        lines += [f"| {c['name']} | {c.get('where', '-')} | {c['batch']} | "
                  f"{1e3 * c['eager_s']:.3g} ({1e3 * c['eager_cpu_s']:.3g}) | "
                  f"{1e3 * c['compiled_s']:.3g} ({1e3 * c['compiled_cpu_s']:.3g}) | "
                  f"{c['eager_s'] / c['compiled_s']:.2f} "
                  f"({c['eager_cpu_s'] / c['compiled_cpu_s']:.2f}) | {c['first_call_s']:.1f} | "
                  f"{c['max_deviation']:.1e} |" for c in compiled]
    if notes:
        lines += ["", "## Notes", "", *[f"- {n}" for n in notes]]
    return lines
