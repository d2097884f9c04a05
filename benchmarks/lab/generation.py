"""Throughput of dataset generation and the overhead of the data layer over the bare solver."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from neuralop_fem.data.generation import DEFAULT_CHUNK_SIZE, config_class, generate
from neuralop_fem.data.generation.executors import solve_chunk
from neuralop_fem.data.generation.store import chunk_bounds

__all__ = ["bare_solver_seconds", "generate_seconds", "markdown", "measure"]


def bare_solver_seconds(problem: str, n: int, resolution: int, chunk: int) -> float:
    """Seconds of the solver alone on ``n`` samples of ``problem`` at ``resolution`` in this
    process (GRF sampling + ``solve_with_report`` per chunk of ``chunk``, nothing written)."""

    config = config_class(problem)()
    t0 = time.perf_counter()
    for a, b in chunk_bounds(0, n, chunk):
        solve_chunk(config, resolution, 0, a, b)
    return time.perf_counter() - t0


def generate_seconds(problem: str, n: int, resolution: int, workers: int,
                     out: Path) -> tuple[float, int]:
    """Wall seconds of ``generate`` (seed 0, ``workers`` processes; 0: in this process) into
    the file ``out``, and the file's size in bytes (the file is removed)."""

    t0 = time.perf_counter()
    generate(problem, n_samples=n, resolution=resolution, seed=0, out=out, workers=workers,
             progress=False)
    elapsed = time.perf_counter() - t0
    size = out.stat().st_size
    out.unlink()
    return elapsed, size


def measure(problem: str, n: int, resolution: int, repeats: int) -> dict[str, Any]:
    """The bare solver, ``generate`` in process, with 1 and with 2 workers on ``n`` samples
    (best of ``repeats``): seconds, samples per second, overhead and file bytes per sample."""

    chunk = DEFAULT_CHUNK_SIZE[problem]
    with tempfile.TemporaryDirectory() as d:
        bare = min(bare_solver_seconds(problem, n, resolution, chunk) for _ in range(repeats))
        runs = {w: [generate_seconds(problem, n, resolution, w, Path(d) / f"{problem}-w{w}.nc")
                    for _ in range(repeats)] for w in (0, 1, 2)}
    best = {w: min(t for t, _ in r) for w, r in runs.items()}
    return {
        "problem": problem, "resolution": resolution, "n_samples": n, "chunk_size": chunk,
        "repeats": repeats, "statistic": "best of repeats",
        "bare_solver_s": bare, "bare_samples_per_s": n / bare,
        "generate_in_process_s": best[0], "overhead_in_process": best[0] / bare - 1.0,
        "generate_1_worker_s": best[1], "samples_per_s_1_worker": n / best[1],
        "generate_2_workers_s": best[2], "samples_per_s_2_workers": n / best[2],
        "file_bytes_per_sample_float64": runs[0][0][1] / n,
    }


def markdown(info: dict[str, Any]) -> str:
    """The results file of :func:`measure` rows (``info``: quick, cpu, cores, threads, note,
    command, results)."""
    kind = "quick smoke run" if info["quick"] else "benchmark"
    lines = [f"# Dataset generation throughput ({kind})",
             "", f"CPU: {info['cpu']}, {info['cores']} cores; threads {info['threads']}; "
             f"{info['note']}", f"Command: `{info['command']}`", "",
             "| problem | n | samples | bare solver samples/s | generate overhead (in process) "
             "| 1 worker samples/s | 2 workers samples/s | file KiB/sample (float64) |",
             "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['problem']} | {r['resolution']} | {r['n_samples']} "
              f"| {r['bare_samples_per_s']:.3g} "
              f"| {100 * r['overhead_in_process']:+.1f} % | {r['samples_per_s_1_worker']:.3g} "
              f"| {r['samples_per_s_2_workers']:.3g} "
              f"| {r['file_bytes_per_sample_float64'] / 1024:.1f} |" for r in info["results"]]
    return "\n".join(lines) + "\n"
