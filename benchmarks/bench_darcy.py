"""Speed and accuracy of the Darcy solvers on the benchmark 12/3 coefficient.

Speed: seconds per sample (assembly and linear solve separately) of ``DarcyFDSolver`` with
every linear solver at n = 141, 211, 421, iterations, final relative residual and the
relative L2 distance to scipy's direct solution ("accuracy reached").

Accuracy: FD (harmonic / arithmetic faces) and FEM (P1 / Q1) at modest n against a 4x refined
reference (and the 2x refined solution), for the same coefficient: the GRF sampled at the
coarse nodes is interpolated bicubically to the fine grid and thresholded there, so the
coarse coefficient is the fine one sampled at the coarse nodes.

Run (single-threaded BLAS as the results are reported)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_darcy.py
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_darcy.py --quick

Writes ``benchmarks/results/darcy_solver.json`` and ``.md``.
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
import pyamg
import scipy
import skfem
from scipy.interpolate import RectBivariateSpline

from neuralop_fem.environment import cpu_model
from neuralop_fem.reproduce.script import run_script
from solvers.darcy import DarcyFDSolver, DarcyFEMSolver
from solvers.grf import NeumannGRF, threshold
from solvers.kernels import assemble_fd, solve_linear

RESULTS = Path(__file__).parent / "results"


def _hardware() -> dict[str, object]:
    return {
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
        "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "pyamg": pyamg.__version__,
        "scikit-fem": skfem.__version__,
        "note": "2-core box shared with other engineers' jobs; best of `repeats` per sample",
    }


def _coefficients(n: int, n_samples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    field = NeumannGRF(n).sample(n_samples, rng=np.random.default_rng(seed))
    return field, threshold(field)


def bench_speed(sizes: list[int], methods: list[str], n_samples: int, repeats: int) -> list[dict]:
    rows = []
    for n in sizes:
        _, a = _coefficients(n, n_samples, seed=n)
        ref = DarcyFDSolver(linear_solver="direct").solve(a)
        b = np.full((n - 2) ** 2, 1.0 / (n - 1) ** 2)
        t_asm = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            mats = assemble_fd(a)
            t_asm.append((time.perf_counter() - t0) / n_samples)
        for method in methods:
            solve_t, iters, resid, errs = [], [], [], []
            for s, mat in enumerate(mats):
                best = np.inf
                for _ in range(repeats):
                    t0 = time.perf_counter()
                    x, its, res = solve_linear(
                        mat, b, method=method, tol=1e-10, maxiter=20000, grid_n=n
                    )
                    best = min(best, time.perf_counter() - t0)
                u = np.zeros((n, n))
                u[1:-1, 1:-1] = x.reshape(n - 2, n - 2)
                solve_t.append(best)
                iters.append(its)
                resid.append(res)
                errs.append(float(np.linalg.norm(u - ref[s]) / np.linalg.norm(ref[s])))
            row = {
                "n": n,
                "linear_solver": method,
                "assembly_s_per_sample": float(np.min(t_asm)),
                "solve_s_per_sample": float(np.median(solve_t)),
                "total_s_per_sample": float(np.min(t_asm) + np.median(solve_t)),
                "iterations": [int(i) for i in iters],
                "relative_residual_max": float(np.max(resid)),
                "rel_l2_vs_direct_max": float(np.max(errs)),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)  # noqa: T201 (script progress)
    return rows


def _refine(field: np.ndarray, factor: int) -> np.ndarray:
    n = field.shape[-1]
    x = np.linspace(0, 1, n)
    xf = np.linspace(0, 1, factor * (n - 1) + 1)
    return np.stack([RectBivariateSpline(x, x, f, kx=3, ky=3)(xf, xf) for f in field])


def _rel(u: np.ndarray, ref: np.ndarray) -> float:
    return float(np.mean(np.linalg.norm(u - ref, axis=(1, 2)) / np.linalg.norm(ref, axis=(1, 2))))


def bench_accuracy(sizes: list[int], n_samples: int) -> list[dict]:
    solvers = {
        "FD harmonic": DarcyFDSolver(),
        "FD arithmetic": DarcyFDSolver(averaging="arithmetic"),
        "FEM P1": DarcyFEMSolver(element="P1"),
        "FEM Q1": DarcyFEMSolver(element="Q1"),
    }
    rows = []
    for n in sizes:
        field, a = _coefficients(n, n_samples, seed=1000 + n)
        a4 = threshold(_refine(field, 4))
        a2 = threshold(_refine(field, 2))
        np.testing.assert_array_equal(a4[:, ::4, ::4], a)  # nested coefficients
        refs = {name: s.solve(a4)[:, ::4, ::4] for name, s in solvers.items()}
        ref = refs["FD harmonic"]
        for name, solver in solvers.items():
            u = solver.solve(a)
            u2 = solver.solve(a2)[:, ::2, ::2]
            row = {
                "n": n,
                "method": name,
                "rel_l2_vs_4x_fd_harmonic": _rel(u, ref),
                "rel_l2_vs_4x_same_method": _rel(u, refs[name]),
                "rel_l2_2x_vs_4x_fd_harmonic": _rel(u2, ref),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)  # noqa: T201
        rows.append({
            "n": n,
            "method": "reference spread (4x FD harmonic vs 4x FEM Q1)",
            "rel_l2_vs_4x_fd_harmonic": _rel(refs["FEM Q1"], ref),
        })
    return rows


def _markdown(result: dict) -> str:
    hw = result["hardware"]
    lines = [
        "# Darcy solver benchmark",
        "",
        f"CPU: {hw['cpu_model']} ({hw['cpu_count']} cores, {hw['note']}); "
        f"OMP_NUM_THREADS={hw['OMP_NUM_THREADS']}, "
        f"OPENBLAS_NUM_THREADS={hw['OPENBLAS_NUM_THREADS']}; "
        f"numpy {hw['numpy']}, scipy {hw['scipy']}, pyamg {hw['pyamg']}, "
        f"scikit-fem {hw['scikit-fem']}.",
        f"Settings: {json.dumps(result['settings'])}",
        "",
        "## Speed (DarcyFDSolver, harmonic faces, 12/3 GRF coefficient, f = 1, tol = 1e-10)",
        "",
        "| n | linear solver | assembly s | solve s | total s/sample | speed-up vs direct "
        "| iterations | max rel. residual | max rel. L2 vs direct |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    direct = {r["n"]: r["total_s_per_sample"] for r in result["speed"]
              if r["linear_solver"] == "direct"}
    for r in result["speed"]:
        lines.append(
            f"| {r['n']} | {r['linear_solver']} | {r['assembly_s_per_sample']:.4f} | "
            f"{r['solve_s_per_sample']:.4f} | {r['total_s_per_sample']:.4f} | "
            f"{direct[r['n']] / r['total_s_per_sample']:.1f}x | {r['iterations']} | "
            f"{r['relative_residual_max']:.1e} | {r['rel_l2_vs_direct_max']:.1e} |"
        )
    lines += [
        "",
        "## Accuracy (mean relative L2 over samples, at the coarse nodes)",
        "",
        "| n | method | vs 4x FD harmonic | vs 4x same method | 2x solution vs 4x FD harmonic |",
        "|---|---|---|---|---|",
    ]
    for r in result["accuracy"]:
        lines.append(
            f"| {r['n']} | {r['method']} | {r['rel_l2_vs_4x_fd_harmonic']:.2e} | "
            f"{r.get('rel_l2_vs_4x_same_method', float('nan')):.2e} | "
            f"{r.get('rel_l2_2x_vs_4x_fd_harmonic', float('nan')):.2e} |"
        )
    lines += ["", "Reproduce: "
              "`OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_darcy.py`", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: small grids, one sample")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.quick:
        settings = {"sizes": [33, 65], "methods": ["direct", "cg", "amg-sa", "amg-rs", "gmg"],
                    "samples": 1,
                    "repeats": 1, "accuracy_sizes": [17], "accuracy_samples": 1}
    else:
        settings = {"sizes": [141, 211, 421],
                    "methods": ["direct", "cg", "amg-sa", "amg-rs", "gmg"],
                    "samples": 3, "repeats": 3, "accuracy_sizes": [43, 85], "accuracy_samples": 4}
    result = {
        "hardware": _hardware(),
        "settings": settings,
        "speed": bench_speed(settings["sizes"], settings["methods"], settings["samples"],
                             settings["repeats"]),
        "accuracy": bench_accuracy(settings["accuracy_sizes"], settings["accuracy_samples"]),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    name = "darcy_solver.quick" if args.quick else "darcy_solver"
    (args.out / f"{name}.json").write_text(json.dumps(result, indent=2))
    (args.out / f"{name}.md").write_text(_markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
