"""Throughput of dataset generation and the overhead of the data layer.

For each problem at its benchmark resolution (Burgers 8192, Darcy 421) this measures

- samples/s of ``neuralop_fem.data.generate`` with 1 and 2 worker processes (wall time of
  the whole call: worker start-up, solves, chunk files, assembly of the netCDF file);
- the bare solver on the same samples in this process (GRF sampling + ``solve_with_report``
  per chunk, nothing written), and the overhead of ``generate(workers=0)`` over it;
- the file size per sample (float64, zlib).

Writes ``benchmarks/results/generate.json`` and ``generate.md``. ``--quick``: a smoke run at
small resolutions. Run with OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from neuralop_fem import __version__
from neuralop_fem.data.generation import DEFAULT_CHUNK_SIZE, config_class, generate
from neuralop_fem.data.generation.executors import solve_chunk
from neuralop_fem.data.generation.store import chunk_bounds
from neuralop_fem.environment import cpu_model
from neuralop_fem.reproduce.script import count, run_script

RESULTS = Path(__file__).parent / "results"


def _bare(problem: str, n: int, resolution: int, chunk: int) -> float:
    config = config_class(problem)()
    t0 = time.perf_counter()
    for a, b in chunk_bounds(0, n, chunk):
        solve_chunk(config, resolution, 0, a, b)
    return time.perf_counter() - t0


def _generate(problem: str, n: int, resolution: int, workers: int, tmp: Path,
              tag: str) -> tuple[float, int]:
    out = tmp / f"{problem}-{tag}.nc"
    t0 = time.perf_counter()
    generate(problem, n_samples=n, resolution=resolution, seed=0, out=out, workers=workers,
             progress=False)
    elapsed = time.perf_counter() - t0
    size = out.stat().st_size
    out.unlink()
    return elapsed, size


def measure(problem: str, n: int, resolution: int, repeats: int) -> dict:
    chunk = DEFAULT_CHUNK_SIZE[problem]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        bare = min(_bare(problem, n, resolution, chunk) for _ in range(repeats))
        inproc = [_generate(problem, n, resolution, 0, tmp, "w0") for _ in range(repeats)]
        w1 = [_generate(problem, n, resolution, 1, tmp, "w1") for _ in range(repeats)]
        w2 = [_generate(problem, n, resolution, 2, tmp, "w2") for _ in range(repeats)]
    t0 = min(t for t, _ in inproc)
    return {
        "problem": problem, "resolution": resolution, "n_samples": n, "chunk_size": chunk,
        "repeats": repeats, "statistic": "best of repeats",
        "bare_solver_s": bare, "bare_samples_per_s": n / bare,
        "generate_in_process_s": t0, "overhead_in_process": t0 / bare - 1.0,
        "generate_1_worker_s": min(t for t, _ in w1),
        "samples_per_s_1_worker": n / min(t for t, _ in w1),
        "generate_2_workers_s": min(t for t, _ in w2),
        "samples_per_s_2_workers": n / min(t for t, _ in w2),
        "file_bytes_per_sample_float64": inproc[0][1] / n,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run at small resolutions")
    parser.add_argument("--samples", type=count(), default=None, help="samples per measurement")
    parser.add_argument("--repeats", type=count(), default=None)
    args = parser.parse_args(argv)
    if args.quick:
        plan = [("burgers", 256, args.samples or 16), ("darcy", 33, args.samples or 8)]
        repeats = args.repeats or 1
    else:
        plan = [("burgers", 8192, args.samples or 32), ("darcy", 421, args.samples or 16)]
        repeats = args.repeats or 2
    rows = [measure(p, n, r, repeats) for p, r, n in plan]
    import numpy  # noqa: E401
    import scipy
    import xarray

    info = {
        "benchmark": "generate", "quick": args.quick,
        "cpu": cpu_model(), "cores": os.cpu_count(),
        "threads": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")},
        "note": "2-core box shared with other jobs while measuring; the workers' start-up "
                "(imports, ~2-5 s each) is inside the 1/2-worker times.",
        "versions": {"python": platform.python_version(), "neuralop_fem": __version__,
                     "numpy": numpy.__version__, "scipy": scipy.__version__,
                     "xarray": xarray.__version__},
        "command": " ".join([os.path.basename(sys.executable), *sys.argv]),
        "results": rows,
    }
    name = "generate_quick" if args.quick else "generate"
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(info, indent=2) + "\n")
    kind = "quick smoke run" if args.quick else "benchmark"
    lines = [f"# Dataset generation throughput ({kind})",
             "", f"CPU: {info['cpu']}, {info['cores']} cores; threads {info['threads']}; "
             f"{info['note']}", f"Command: `{info['command']}`", "",
             "| problem | n | samples | bare solver samples/s | generate overhead (in process) "
             "| 1 worker samples/s | 2 workers samples/s | file KiB/sample (float64) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['problem']} | {r['resolution']} | {r['n_samples']} "
            f"| {r['bare_samples_per_s']:.3g} "
            f"| {100 * r['overhead_in_process']:+.1f} % | {r['samples_per_s_1_worker']:.3g} "
            f"| {r['samples_per_s_2_workers']:.3g} "
            f"| {r['file_bytes_per_sample_float64'] / 1024:.1f} |")
    (RESULTS / f"{name}.md").write_text("\n".join(lines) + "\n")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
