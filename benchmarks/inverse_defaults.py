"""The defaults of ``DarcyInverseSolver`` on the inverse-Darcy benchmark (Cao 2021, ex3).

Data: ``n_train + n_test`` two-phase coefficients (12 where a Neumann GRF
``N(0, (-Delta + 9 I)^-2)`` is positive, 3 elsewhere) at n = 421, solved with ``DarcyFDSolver``
(f = 1), strided to n = 141 (stride 3) and 85 (stride 5). The training solutions only give
the pointwise std ``sigma`` of the paper's noise ``epsilon (sigma + 1e-5) N(0, 1)``, converted
per test sample by ``paper_noise_to_relative`` (the level passed to the solver). Truth on the
observation grid: the strided coefficient (two-valued); coarse truth: the paper's target, the
421 coefficient average-pooled by the stride and then by 4 (141 -> 36, 85 -> 22).

Starts: ``const`` (the default multilevel start from the best constant) and ``surrogate``
(a stand-in for a surrogate's prediction: the coarse target times ``1 + 0.03 N(0, 1)``,
interpolated bilinearly in ``log a`` to the observation grid).

Run (single-threaded BLAS as reported)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/inverse_defaults.py
    OMP_NUM_THREADS=1 python benchmarks/inverse_defaults.py --test 2 --train 16  # quick

Writes ``benchmarks/results/inverse_defaults.json`` and ``.md``.
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

from neuralop_fem.reproduce.script import count, run_script
from solvers import DarcyFDSolver, DarcyInverseSolver, NeumannGRF, threshold
from solvers.darcy_inverse import (
    add_noise,
    coefficient_errors,
    paper_noise_to_relative,
    pool_coefficient,
)
from solvers.kernels import prolong_nodes

RESULTS = Path(__file__).parent / "results"
GRIDS = {85: 5, 141: 3}  # n -> stride from 421
POOL = 4  # 141 -> 36, 85 -> 22


def benchmark_data(n_train: int, n_test: int, seed: int) -> dict[str, np.ndarray]:
    """Coefficients and solutions at 421, strided to each grid; pooled test targets."""
    a = threshold(NeumannGRF(421).sample(n_train + n_test, rng=np.random.default_rng(seed)))
    u = DarcyFDSolver().solve(a)
    data = {}
    for n, s in GRIDS.items():
        data[f"u{n}"], data[f"a{n}"] = u[:, ::s, ::s], a[:, ::s, ::s]
        data[f"target{n}"] = pool_coefficient(pool_coefficient(a[n_train:], factor=s), factor=POOL)
    return data


def surrogate_standin(target: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Coarse target with 3 % pointwise error, bilinear in log a up to the observation grid."""
    m = np.log(target * (1.0 + 0.03 * rng.standard_normal(target.shape)))
    for _ in range(2):  # 22 -> 43 -> 85, 36 -> 71 -> 141
        m = np.stack([prolong_nodes(x) for x in m])
    return np.exp(m)


def run_case(data: dict[str, np.ndarray], n: int, epsilon: float, start: str,
             n_train: int) -> dict[str, object]:
    u, a = data[f"u{n}"], data[f"a{n}"]
    train, clean, truth = u[:n_train], u[n_train:], a[n_train:]
    levels = paper_noise_to_relative(epsilon, train, observed=clean)
    rng = np.random.default_rng(7)
    u_obs = add_noise(clean, epsilon, rng=rng, std_field=train.std(axis=0) + 1e-5)
    guess = None if start == "const" else surrogate_standin(data[f"target{n}"], rng)
    solver = DarcyInverseSolver()
    a_est, report = solver.solve_with_report(u_obs, noise_level=levels, initial_guess=guess)
    errors = coefficient_errors(a_est, truth, pool=POOL, a_true_coarse=data[f"target{n}"])
    row: dict[str, object] = {
        "n": n, "epsilon": epsilon, "start": start,
        "relative_noise_level": float(np.mean(levels)),
        "error_fine": float(errors["fine"].mean()),
        "error_coarse": float(errors["coarse"].mean()),
        "misclassified": float(errors["misclassified"].mean()),
        "pde_solves": float(report.pde_solves.mean()),
        "equivalent_solves": float(report.equivalent_solves.mean()),
        "iterations": float(report.iterations.mean()),
        "seconds": float(report.solve_time.mean()),
        "stop_reasons": report.stop_reason.tolist(),
    }
    if guess is not None:
        start_errors = coefficient_errors(guess, truth, pool=POOL, a_true_coarse=data[f"target{n}"])
        row["start_error_fine"] = float(start_errors["fine"].mean())
        row["start_error_coarse"] = float(start_errors["coarse"].mean())
    return row


def markdown(rows: list[dict[str, object]], meta: dict[str, object]) -> str:
    lines = [
        "# DarcyInverseSolver defaults on the inverse-Darcy benchmark",
        "",
        f"{meta['n_test']} test samples (seed {meta['seed']}), sigma from {meta['n_train']} "
        "training solutions; means over samples. Errors: relative L2 of the coefficient on the "
        "observation grid (truth: strided 421 coefficient) and after pooling by 4 (truth: the "
        "paper's pooled target); misclassified: fraction of nodes on the wrong side of 7.5. "
        "Solves: forward + adjoint on all grids; equivalent: weighted by grid size.",
        "",
        "| n | epsilon | rel. level | start (its error fine / coarse) | error fine | error coarse "
        "| misclassified | solves | equivalent | iterations | s / sample | stop |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        stops = ", ".join(f"{k} {v}" for k, v in sorted(
            {s: r["stop_reasons"].count(s) for s in set(r["stop_reasons"])}.items()))
        start = r["start"]
        if "start_error_fine" in r:
            start += f" ({r['start_error_fine']:.3f} / {r['start_error_coarse']:.3f})"
        lines.append(
            f"| {r['n']} | {r['epsilon']} | {r['relative_noise_level']:.4f} | {start} | "
            f"{r['error_fine']:.3f} | {r['error_coarse']:.3f} | {r['misclassified']:.3f} | "
            f"{r['pde_solves']:.0f} | {r['equivalent_solves']:.0f} | {r['iterations']:.0f} | "
            f"{r['seconds']:.2f} | {stops} |")
    lines += ["", f"Hardware and versions: `{json.dumps(meta['hardware'])}`", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=count(), default=48)
    parser.add_argument("--test", type=count(), default=8)
    parser.add_argument("--seed", type=count(0), default=2024)
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    data = benchmark_data(args.train, args.test, args.seed)
    rows = []
    for n in GRIDS:
        for epsilon in (0.0, 0.01, 0.1):
            for start in ("const", "surrogate"):
                rows.append(run_case(data, n, epsilon, start, args.train))
                print(json.dumps(rows[-1]), flush=True)
    meta = {
        "n_train": args.train, "n_test": args.test, "seed": args.seed,
        "solver": DarcyInverseSolver().method, "total_seconds": time.perf_counter() - t0,
        "hardware": {"cpu_count": os.cpu_count(), "python": platform.python_version(),
                     "numpy": np.__version__, "scipy": scipy.__version__,
                     "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
                     "note": "2-core box shared with two training jobs"},
    }
    RESULTS.mkdir(exist_ok=True)
    payload = json.dumps({"meta": meta, "rows": rows}, indent=1)
    (RESULTS / "inverse_defaults.json").write_text(payload)
    (RESULTS / "inverse_defaults.md").write_text(markdown(rows, meta))
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
