"""Samples per second of the torch twins against the numpy solvers on all cores.

For each case (problem, resolution) :func:`measure` times

- the numpy solver as the generator runs it: ``cores`` worker processes with one thread each,
  chunks of the problem's default chunk size (``generate``'s defaults);
- the torch twin (:mod:`neuralop_fem.torch_solvers`) at each batch size: on a GPU from this
  process, on the CPU in ``cores`` worker processes with one thread each (what
  ``generate --device cpu`` does), each solving batches of that size;

on the same inputs (a pool of distinct samples drawn from the generator's GRF, repeated), the
wall time of the solves only (input copies and host-device transfers included; drawing the
inputs, process start-up and a warm-up solve excluded), and the largest relative L2 difference
of the twin's answers from the numpy solver's. A batch that does not fit the device is reported
as out of memory and the larger ones are skipped; a case that the time budget leaves no room
for is reported as skipped.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from neuralop_fem.data.generation.config import config_class
from neuralop_fem.data.generation.executors import worker_pool
from neuralop_fem.environment import command_line, cpu_model, gpu_name, package_versions
from neuralop_fem.problems import get_kit
from neuralop_fem.torch_solvers.errors import DeviceMemoryError
from solvers.grf import sample_seeds

__all__ = ["CPU_PLAN", "GPU_PLAN", "REHEARSE_PLAN", "Case", "goal_line", "markdown", "measure",
           "run", "summary", "worker_pool"]

#: Distinct samples drawn per case; larger counts repeat them (the work per sample is the same).
POOL = 16


@dataclass(frozen=True)
class Case:
    """One resolution of one problem: samples of the numpy run and the twin's batch sizes."""

    problem: str
    n: int
    numpy_samples: int
    batches: tuple[int, ...]
    min_samples: int = 1


#: This CPU (2 cores, shared): short runs, fewer batch sizes at the large grids.
CPU_PLAN = (
    Case("burgers", 128, 64, (1, 16, 64, 256), 16),
    Case("burgers", 1024, 32, (1, 16, 64, 256), 8),
    Case("burgers", 8192, 8, (1, 4, 16), 4),
    Case("darcy", 43, 64, (1, 16, 64, 256), 16),
    Case("darcy", 141, 16, (1, 8, 32), 8),
    Case("darcy", 421, 4, (1, 2, 4), 2),
)
_GPU_BATCHES = (1, 4, 16, 64, 256, 1024)
#: A GPU machine (16 cores): every batch size from 1 to 1024.
GPU_PLAN = (
    Case("burgers", 128, 256, _GPU_BATCHES, 64),
    Case("burgers", 1024, 128, _GPU_BATCHES, 64),
    Case("burgers", 8192, 64, _GPU_BATCHES, 32),
    Case("darcy", 43, 256, _GPU_BATCHES, 64),
    Case("darcy", 141, 64, _GPU_BATCHES, 32),
    Case("darcy", 421, 64, _GPU_BATCHES, 16),
)
#: The campaign's rehearsal on the CPU: seconds.
REHEARSE_PLAN = (Case("burgers", 64, 4, (1, 4), 2), Case("darcy", 17, 4, (1, 4), 2))


def draw(problem: str, n: int, count: int, *, seed: int = 0) -> NDArray[np.float64]:
    """``count`` inputs of the generator's distribution at resolution ``n``: ``POOL`` distinct
    samples of dataset ``seed`` repeated."""

    distinct = min(count, POOL)
    seeds = np.asarray(sample_seeds(seed, np.arange(distinct)), dtype=np.uint64)
    pool = config_class(problem)().draw_inputs(n, seeds)
    return pool[np.arange(count) % distinct]


def _solve(problem: str, device: str | None, batch: int | None,
           inputs: NDArray[np.float64]) -> tuple[NDArray[np.float64], float]:
    """The generator's solver (its torch twin with ``device``) on ``inputs`` (a worker task):
    the answers and the CPU seconds of this process spent on them."""
    solver = config_class(problem)().make_solver(
        device=device, batch_size=None if device is None else batch)
    t0 = time.process_time()
    out = np.asarray(solver.solve(inputs))
    return out, time.process_time() - t0


def _in_pool(problem: str, device: str | None, inputs: NDArray[np.float64], chunk: int,
             workers: int, pool: ProcessPoolExecutor
             ) -> tuple[float, NDArray[np.float64], float]:
    """Wall seconds, answers and the workers' CPU seconds of ``inputs`` solved in chunks of
    ``chunk`` by ``pool``."""
    warm = [pool.submit(_solve, problem, device, 1, inputs[:1]) for _ in range(workers)]
    for future in warm:
        future.result()
    t0 = time.perf_counter()
    futures = [pool.submit(_solve, problem, device, chunk, inputs[i:i + chunk])
               for i in range(0, len(inputs), chunk)]
    results = [f.result() for f in futures]
    wall = time.perf_counter() - t0
    return wall, np.concatenate([r[0] for r in results]), sum(r[1] for r in results)


def _in_process(problem: str, device: str, inputs: NDArray[np.float64],
                batch: int) -> tuple[float, NDArray[np.float64]]:
    """Wall seconds and answers of ``inputs`` solved by the twin on ``device`` in batches of
    ``batch`` from this process (after a warm-up batch: plans, coefficients, allocator)."""
    solver = config_class(problem)().make_solver(device=device, batch_size=batch)
    solver.solve(inputs[:batch])
    t0 = time.perf_counter()
    out = np.asarray(solver.solve(inputs))
    return time.perf_counter() - t0, out


def _rel_diff(a: NDArray[np.float64], b: NDArray[np.float64]) -> float:
    axes = tuple(range(1, a.ndim))
    return float((np.sqrt(((a - b) ** 2).sum(axes)) / np.sqrt((b**2).sum(axes))).max())


def measure(case: Case, *, device: str, pool: ProcessPoolExecutor, workers: int,
            remaining: Callable[[], float] = lambda: float("inf"),
            log: Callable[[str], None] = lambda line: None) -> list[dict[str, Any]]:
    """The rows of one case: the numpy solver on the ``workers`` processes of ``pool``
    (:func:`worker_pool`), then the twin on ``device`` at each batch size (on ``"cpu"`` in the
    pool's processes). A measurement starts only while ``remaining()`` seconds exceed twice
    the estimated time of its solves."""
    chunk = get_kit(case.problem).chunk_size
    base = {"problem": case.problem, "n": case.n}
    rows: list[dict[str, Any]] = []
    inputs = draw(case.problem, case.n, case.numpy_samples)
    seconds, reference, cpu = _in_pool(case.problem, None, inputs, chunk, workers, pool)
    numpy_rate = len(inputs) / seconds
    numpy_cpu_rate = workers * len(inputs) / cpu
    rows.append({**base, "solver": "numpy", "device": "cpu", "workers": workers,
                 "batch": chunk, "samples": len(inputs), "seconds": round(seconds, 4),
                 "samples_per_s": numpy_rate, "cpu_samples_per_s": numpy_cpu_rate,
                 "status": "ok"})
    log(f"{case.problem} {case.n}: numpy {numpy_rate:.3g} samples/s on {workers} processes")
    out_of_memory = False
    per_sample = seconds / len(inputs)  # the estimate of the next run; then the twin's last
    for batch in case.batches:
        row = {**base, "solver": "torch", "device": device,
               "workers": workers if device == "cpu" else 0, "batch": batch}
        count = max(case.min_samples, batch * (row["workers"] or 1))
        if out_of_memory:
            rows.append({**row, "status": "skipped (a smaller batch ran out of memory)"})
            continue
        if remaining() < 2 * count * per_sample + 10:
            rows.append({**row, "status": "skipped (time budget)"})
            continue
        data = inputs[np.arange(count) % len(inputs)]
        try:
            if device == "cpu":
                took, got, cpu = _in_pool(case.problem, device, data, batch, workers, pool)
                row["cpu_samples_per_s"] = workers * count / cpu
                row["cpu_vs_numpy"] = row["cpu_samples_per_s"] / numpy_cpu_rate
            else:
                took, got = _in_process(case.problem, device, data, batch)
        except DeviceMemoryError:
            out_of_memory = True
            rows.append({**row, "status": "out of memory"})
            log(f"{case.problem} {case.n}: batch {batch} out of memory on {device}")
            continue
        overlap = min(len(reference), len(got))
        rate = count / took
        per_sample = took / count
        rows.append({**row, "samples": count, "seconds": round(took, 4),
                     "samples_per_s": rate, "vs_numpy": rate / numpy_rate,
                     "max_rel_diff": _rel_diff(got[:overlap], reference[:overlap]),
                     "status": "ok"})
        log(f"{case.problem} {case.n}: torch batch {batch}: {rate:.3g} samples/s "
            f"({rate / numpy_rate:.2f}x numpy)")
    return rows


def summary(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per case: the numpy rate, the twin's best rate and its batch, and their ratio."""
    out = []
    for key in dict.fromkeys((r["problem"], r["n"]) for r in rows):
        case = [r for r in rows if (r["problem"], r["n"]) == key]
        numpy_row = next(r for r in case if r["solver"] == "numpy")
        twins = [r for r in case if r["solver"] == "torch" and r["status"] == "ok"]
        if not twins:
            continue
        best = max(twins, key=lambda r: r["samples_per_s"])
        row = {"problem": key[0], "n": key[1], "numpy_samples_per_s":
               numpy_row["samples_per_s"], "numpy_workers": numpy_row["workers"],
               "torch_samples_per_s": best["samples_per_s"], "torch_batch": best["batch"],
               "torch_device": best["device"], "ratio": best["vs_numpy"],
               "max_rel_diff": max(r["max_rel_diff"] for r in twins)}
        if "cpu_vs_numpy" in best:  # per CPU second: what idle cores would give
            best_cpu = max(twins, key=lambda r: r["cpu_vs_numpy"])
            row.update(cpu_ratio=best_cpu["cpu_vs_numpy"], cpu_batch=best_cpu["batch"])
        out.append(row)
    return out


def markdown(info: dict[str, Any]) -> str:
    """The results page: the summary per case, then every row."""
    device = info["device"]
    lines = [f"# Torch twins against the numpy solvers ({device})", "",
             f"{info['machine']}; numpy on {info['workers']} worker processes (one thread "
             f"each, the generator's chunks), the twins on {device}"
             + (f" in {info['workers']} worker processes" if device == "cpu" else
                " from one process") + ". Solve time only (inputs drawn and a warm-up solve "
             "before the clock starts). On a CPU also the samples per CPU second of the worker "
             "processes times their number: the rate of idle cores, less sensitive than the "
             "wall time to other jobs on a shared machine. Load average "
             f"{info['load_average'][0]} at the start, {info['load_average'][1]} at the end, "
             f"on {info['cores']} cores.", "",
             "| problem | n | numpy samples/s | twin samples/s (batch) | twin / numpy "
             "| twin / numpy per CPU second (batch) | max rel. diff |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for s in info["summary"]:
        per_cpu = f"{s['cpu_ratio']:.2f} ({s['cpu_batch']})" if "cpu_ratio" in s else "-"
        lines.append(f"| {s['problem']} | {s['n']} | {s['numpy_samples_per_s']:.3g} | "
                     f"{s['torch_samples_per_s']:.3g} ({s['torch_batch']}) | {s['ratio']:.2f} | "
                     f"{per_cpu} | {s['max_rel_diff']:.1e} |")
    lines += ["", info["goal"], "", "## Every measurement", "",
              "| problem | n | solver | device | processes | batch | samples | s | samples/s "
              "| samples per CPU second x processes | status |",
              "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in info["rows"]:
        rate = f"{r['samples_per_s']:.3g}" if "samples_per_s" in r else "-"
        cpu = f"{r['cpu_samples_per_s']:.3g}" if "cpu_samples_per_s" in r else "-"
        lines.append(f"| {r['problem']} | {r['n']} | {r['solver']} | {r['device']} | "
                     f"{r['workers']} | {r['batch']} | {r.get('samples', '-')} | "
                     f"{r.get('seconds', '-')} | {rate} | {cpu} | {r['status']} |")
    lines += ["", f"Command: `{info['command']}`", ""]
    return "\n".join(lines)


def goal_line(device: str, rows: Sequence[dict[str, Any]]) -> str:
    """What the issue asks of these figures, and whether they meet it."""
    if device == "cpu":
        worst = min(rows, key=lambda s: s["ratio"])
        worst_cpu = min(rows, key=lambda s: s["cpu_ratio"])
        met = "met" if worst["ratio"] >= 0.5 else "not met"
        met_cpu = "met" if worst_cpu["cpu_ratio"] >= 0.5 else "not met"
        return (f"Goal: the twin on all cores within 2x of the numpy generator's throughput "
                f"(ratio >= 0.5) at every size: in wall time {met} (lowest {worst['ratio']:.2f}, "
                f"{worst['problem']} {worst['n']}); per CPU second {met_cpu} (lowest "
                f"{worst_cpu['cpu_ratio']:.2f}, {worst_cpu['problem']} {worst_cpu['n']}).")
    parts = []
    for problem, n in (("darcy", 421), ("burgers", 8192)):
        row = next((s for s in rows if (s["problem"], s["n"]) == (problem, n)), None)
        if row is not None:
            met = "met" if row["ratio"] >= 20 else "not met"
            parts.append(f"{problem} {n}: {row['ratio']:.1f}x ({met})")
    return ("Goal: at least 20x the numpy generator on all cores of this machine at Darcy 421 "
            "and Burgers 8192: " + "; ".join(parts) + ".")


def run(device: str, *, rehearse: bool = False, workers: int | None = None,
        remaining: Callable[[], float] = lambda: float("inf"),
        log: Callable[[str], None] = print) -> dict[str, Any]:
    """Measure the plan of ``device`` (:data:`REHEARSE_PLAN` with ``rehearse``) and return
    the results record (``summary``, ``goal``, ``rows``, the machine and versions)."""
    plan = REHEARSE_PLAN if rehearse else (CPU_PLAN if device == "cpu" else GPU_PLAN)
    workers = workers or os.cpu_count() or 1
    load_before = os.getloadavg()[0]
    rows = []
    with worker_pool(workers) as pool:
        for case in plan:
            rows += measure(case, device=device, pool=pool, workers=workers,
                            remaining=remaining, log=log)
    table = summary(rows)
    machine = cpu_model() + (f", {gpu_name()}" if device != "cpu" else "")
    return {"benchmark": "gpu_solvers", "device": device, "machine": machine,
            "cores": os.cpu_count(), "workers": workers, "rehearse": rehearse,
            "load_average": [round(load_before, 1), round(os.getloadavg()[0], 1)],
            "versions": package_versions(), "command": command_line(), "summary": table,
            "goal": goal_line(device, table) if table else "", "rows": rows}
