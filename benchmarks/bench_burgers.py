"""Speed and accuracy of BurgersSpectralSolver on benchmark GRF data against Cole-Hopf.

Reports, for nu = 0.1/(2 pi) and 0.1: seconds per sample (batch, best of repeats), time
steps, FFT pairs and the FFT floor (time of one batched full-length rfft+irfft pair times the
number of pairs, scaled by the mean FFT length actually used), and the relative L2 error
against :func:`solvers.exact.burgers_exact`. Writes benchmarks/results/burgers_solver.json/.md.

Run: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_burgers.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import scipy

from neuralop_fem.environment import cpu_model
from neuralop_fem.reproduce.script import run_script
from solvers.burgers import BurgersSpectralSolver
from solvers.exact import burgers_exact
from solvers.grf import PeriodicGRF
from solvers.kernels import SpectralStepper, integrate_spectral

RESULTS = Path(__file__).parent / "results"


def _fft_pair_time(n: int, batch: int, repeats: int) -> float:
    u = np.random.default_rng(0).standard_normal((batch, n))
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(20):
            np.fft.irfft(np.fft.rfft(u, axis=-1), n=n, axis=-1)
        best = min(best, (time.perf_counter() - t0) / 20)
    return best


def run(*, n: int, batch: int, repeats: int) -> dict:
    u0 = PeriodicGRF(n).sample(batch, seeds=np.arange(batch))
    rows = []
    pair = _fft_pair_time(n, batch, repeats)
    for nu in (0.1 / (2 * np.pi), 0.1):
        solver = BurgersSpectralSolver(viscosity=nu)
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            u, report = solver.solve_with_report(u0)
            times.append(time.perf_counter() - t0)
        exact = burgers_exact(u0, viscosity=nu, times=solver.final_time)
        err = np.linalg.norm(u - exact, axis=-1) / np.linalg.norm(exact, axis=-1)
        # count FFTs with the same stepper the solver uses
        stepper = SpectralStepper(
            n, nu, n_contour=solver.n_contour, mode_tol=solver.mode_tol
        )
        grid = solver.time_grid(u0)
        integrate_spectral(stepper, u0, grid, np.array([solver.final_time]),
                           solver_name="bench")
        mean_len = stepper.fft_points / stepper.fft_pairs
        floor = pair * stepper.fft_pairs * (mean_len * np.log2(mean_len)) / (n * np.log2(n))
        rows.append({
            "viscosity": nu,
            "seconds_per_sample_best": min(times) / batch,
            "seconds_per_sample_median": float(np.median(times)) / batch,
            "time_steps": int(report.iterations[0]),
            "fft_pairs": stepper.fft_pairs,
            "mean_fft_length": mean_len,
            "fft_pair_time_full_length_batch_s": pair,
            "fft_floor_per_sample_s": floor / batch,
            "rel_l2_error_max": float(err.max()),
            "rel_l2_error_mean": float(err.mean()),
        })
    return {
        "benchmark": "burgers_solver",
        "settings": {"n": n, "batch": batch, "repeats": repeats, "final_time": 1.0,
                     "grf": PeriodicGRF(n).config, "solver_defaults": solver.config},
        "hardware": {
            "cpu": cpu_model(), "cores": os.cpu_count(),
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
            "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
            "note": ("2-core box shared with three other engineers' jobs; "
                     "timings are best of repeats"),
        },
        "versions": {"python": platform.python_version(), "numpy": np.__version__,
                     "scipy": scipy.__version__},
        "results": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: n=512, batch 2")
    args = parser.parse_args(argv)
    if args.quick:
        res = run(n=512, batch=2, repeats=1)
        name = "burgers_solver.quick"
    else:
        res = run(n=8192, batch=8, repeats=3)
        name = "burgers_solver"
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(res, indent=2))
    lines = [
        "# Burgers spectral solver: speed and accuracy",
        "",
        f"n = {res['settings']['n']}, batch {res['settings']['batch']}, t = 1, "
        f"CPU {res['hardware']['cpu']} ({res['hardware']['cores']} cores, "
        f"OMP_NUM_THREADS={res['hardware']['OMP_NUM_THREADS']}); {res['hardware']['note']}.",
        "",
        "| viscosity | s/sample (best) | s/sample (median) | steps | FFT pairs | mean FFT length "
        "| FFT floor s/sample | rel L2 vs exact (max) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in res["results"]:
        lines.append(
            f"| {r['viscosity']:.5f} | {r['seconds_per_sample_best']:.3f} | "
            f"{r['seconds_per_sample_median']:.3f} | {r['time_steps']} | {r['fft_pairs']} | "
            f"{r['mean_fft_length']:.0f} | {r['fft_floor_per_sample_s']:.3f} | "
            f"{r['rel_l2_error_max']:.2e} |"
        )
    lines += ["", "Reproduce: `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python "
              "benchmarks/bench_burgers.py`", ""]
    (RESULTS / f"{name}.md").write_text("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
