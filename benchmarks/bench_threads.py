"""Training speed against CPU threads (`neuralop-fem train --threads N`).

For each case one short training per thread count, through the command line as a user runs
it, on a small file from ``neuralop-fem generate``; the figure is the median time of the
epochs after the first (the first pays for allocation and warm-up). The load average is
recorded beside each case: a busy machine slows the runs with more threads first.

Run (best on an otherwise idle machine)::

    python -m benchmarks.bench_threads [--threads 1 2] [--epochs 3]

Writes ``benchmarks/results/threads.json`` and ``threads.md``.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

from neuralop_fem.environment import environment_record
from neuralop_fem.reproduce.results import write_results

RESULTS = Path(__file__).parent / "results"
#: name, generate arguments, train arguments (presets at reduced sample counts)
CASES = (
    ("burgers-galerkin 512, batch 8", ["burgers", "--samples", "160", "--resolution", "2048"],
     ["--preset", "burgers-galerkin", "--n-train", "128", "--n-val", "16", "--n-test", "16"]),
    ("darcy-fno 85, batch 4", ["darcy", "--samples", "72", "--resolution", "85"],
     ["--preset", "darcy-fno", "--resolution", "85", "--n-train", "64", "--n-val", "4",
      "--n-test", "4"]),
)


def epoch_seconds(run_dir: Path) -> list[float]:
    """Wall seconds of each epoch, read from the run's metrics.csv."""
    with open(run_dir / "metrics.csv", newline="") as fh:
        return [float(row["epoch_time_s"]) for row in csv.DictReader(fh)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2], metavar="N")
    parser.add_argument("--epochs", type=int, default=3, metavar="E")
    args = parser.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS=str(max(args.threads)))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, gen, train in CASES:
            data = Path(tmp) / f"{gen[0]}.nc"
            subprocess.run(["neuralop-fem", "generate", *gen, "--seed", "0", "--workers", "0",
                            "--out", str(data)], check=True, env=env, capture_output=True)
            for k in args.threads:
                run = Path(tmp) / f"{gen[0]}-{k}"
                load = os.getloadavg()[0]
                subprocess.run(["neuralop-fem", "train", "--data", str(data), *train,
                                "--epochs", str(args.epochs), "--threads", str(k),
                                "--amp", "none", "--out", str(run)],
                               check=True, env=env, capture_output=True)
                seconds = epoch_seconds(run)[1:]
                rows.append({"case": name, "threads": k, "epoch_s": statistics.median(seconds),
                             "epochs_timed": len(seconds),
                             "load_before": round(load, 2),
                             "load_after": round(os.getloadavg()[0], 2)})
                print(rows[-1], flush=True)
    for row in rows:
        base = next(r["epoch_s"] for r in rows if r["case"] == row["case"])
        row["speedup"] = round(base / row["epoch_s"], 2)
    record = {"environment": environment_record(), "epochs": args.epochs, "rows": rows}
    lines = ["# Training speed against CPU threads", "",
             f"`python -m benchmarks.bench_threads --threads {' '.join(map(str, args.threads))}"
             f" --epochs {args.epochs}`; CPU {record['environment']['hardware']['cpu']}, "
             f"{os.cpu_count()} cores; median epoch after the first.", "",
             "| case | threads | epoch (s) | speed-up | load average before / after |",
             "|---|---|---|---|---|"]
    lines += [f"| {r['case']} | {r['threads']} | {r['epoch_s']:.2f} | {r['speedup']:.2f}x | "
              f"{r['load_before']} / {r['load_after']} |" for r in rows]
    write_results(RESULTS, "threads", record, "\n".join(lines))


if __name__ == "__main__":
    main()
