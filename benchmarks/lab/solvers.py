"""Speed and accuracy of the classical solvers: the Darcy linear solvers and discretisations,
the Burgers spectral solver against Cole-Hopf.
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import numpy as np

from neuralop_fem.metrics import relative_l2
from solvers.burgers import BurgersSpectralSolver
from solvers.darcy import DarcyFDSolver, DarcyFEMSolver
from solvers.exact import burgers_exact
from solvers.grf import NeumannGRF, PeriodicGRF, threshold
from solvers.kernels import SpectralStepper, assemble_fd, integrate_spectral, solve_linear

from .timing import best_time, timed, timed_result

__all__ = ["burgers_speed_accuracy", "darcy_accuracy", "darcy_speed", "fft_pair_time",
           "markdown_burgers", "markdown_darcy", "refine_field"]


def _coefficients(n: int, n_samples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    field = NeumannGRF(n).sample(n_samples, rng=np.random.default_rng(seed))
    return field, threshold(field)


def _progress(row: dict[str, Any], verbose: bool) -> None:
    if verbose:
        print(json.dumps(row), flush=True)  # noqa: T201 (a long run's progress)


def darcy_speed(sizes: list[int], methods: list[str], n_samples: int, repeats: int, *,
                verbose: bool = False) -> list[dict[str, Any]]:
    """Seconds per sample of the FD assembly and of each linear solver (tol 1e-10) on the
    benchmark 12/3 coefficient (seed ``n``) at each size ``n``, with the iterations, the final
    relative residuals and the relative L2 distance to the direct solution."""
    rows = []
    for n in sizes:
        _, a = _coefficients(n, n_samples, seed=n)
        ref = DarcyFDSolver(linear_solver="direct").solve(a)
        b = np.full((n - 2) ** 2, 1.0 / (n - 1) ** 2)
        t_asm = [t / n_samples for t in timed(lambda a=a: assemble_fd(a), repeats)]
        mats = assemble_fd(a)
        for method in methods:
            solve_t, iters, resid, errs = [], [], [], []
            for s, mat in enumerate(mats):
                times, (x, its, res) = timed_result(partial(
                    solve_linear, mat, b, method=method, tol=1e-10, maxiter=20000, grid_n=n),
                    repeats)
                solve_t.append(min(times))
                u = np.zeros((n, n))
                u[1:-1, 1:-1] = x.reshape(n - 2, n - 2)
                iters.append(its)
                resid.append(res)
                errs.append(float(np.linalg.norm(u - ref[s]) / np.linalg.norm(ref[s])))
            row = {"n": n, "linear_solver": method,
                   "assembly_s_per_sample": float(np.min(t_asm)),
                   "solve_s_per_sample": float(np.median(solve_t)),
                   "total_s_per_sample": float(np.min(t_asm) + np.median(solve_t)),
                   "iterations": [int(i) for i in iters],
                   "relative_residual_max": float(np.max(resid)),
                   "rel_l2_vs_direct_max": float(np.max(errs))}
            rows.append(row)
            _progress(row, verbose)
    return rows


def refine_field(field: np.ndarray, factor: int) -> np.ndarray:
    """Fields (k, n, n) on the nodes of [0, 1]^2 interpolated bicubically to the grid refined
    ``factor`` times (``factor (n - 1) + 1`` nodes); the coarse nodes keep their values."""
    from scipy.interpolate import RectBivariateSpline

    n = field.shape[-1]
    x = np.linspace(0, 1, n)
    xf = np.linspace(0, 1, factor * (n - 1) + 1)
    return np.stack([RectBivariateSpline(x, x, f, kx=3, ky=3)(xf, xf) for f in field])


def _rel(u: np.ndarray, ref: np.ndarray) -> float:
    return float(np.mean(relative_l2(u, ref)))


def darcy_accuracy(sizes: list[int], n_samples: int, *,
                   verbose: bool = False) -> list[dict[str, Any]]:
    """FD (harmonic / arithmetic faces) and FEM (P1 / Q1) at each size against the solutions
    on the 4x refined grid (same coefficient: the GRF refined bicubically, then thresholded),
    and the 2x refined solution; mean relative L2 at the coarse nodes."""
    solvers = {"FD harmonic": DarcyFDSolver(),
               "FD arithmetic": DarcyFDSolver(averaging="arithmetic"),
               "FEM P1": DarcyFEMSolver(element="P1"), "FEM Q1": DarcyFEMSolver(element="Q1")}
    rows = []
    for n in sizes:
        field, a = _coefficients(n, n_samples, seed=1000 + n)
        a4 = threshold(refine_field(field, 4))
        a2 = threshold(refine_field(field, 2))
        np.testing.assert_array_equal(a4[:, ::4, ::4], a)  # nested coefficients
        refs = {name: s.solve(a4)[:, ::4, ::4] for name, s in solvers.items()}
        ref = refs["FD harmonic"]
        for name, solver in solvers.items():
            u = solver.solve(a)
            row = {"n": n, "method": name, "rel_l2_vs_4x_fd_harmonic": _rel(u, ref),
                   "rel_l2_vs_4x_same_method": _rel(u, refs[name]),
                   "rel_l2_2x_vs_4x_fd_harmonic": _rel(solver.solve(a2)[:, ::2, ::2], ref)}
            rows.append(row)
            _progress(row, verbose)
        rows.append({"n": n, "method": "reference spread (4x FD harmonic vs 4x FEM Q1)",
                     "rel_l2_vs_4x_fd_harmonic": _rel(refs["FEM Q1"], ref)})
    return rows


def markdown_darcy(result: dict[str, Any]) -> str:
    """The results file of :func:`darcy_speed` and :func:`darcy_accuracy`."""
    hw = result["hardware"]
    lines = [
        "# Darcy solver benchmark", "",
        f"CPU: {hw['cpu_model']} ({hw['cpu_count']} cores, {hw['note']}); "
        f"OMP_NUM_THREADS={hw['OMP_NUM_THREADS']}, "
        f"OPENBLAS_NUM_THREADS={hw['OPENBLAS_NUM_THREADS']}; "
        f"numpy {hw.get('numpy')}, scipy {hw.get('scipy')}, pyamg {hw.get('pyamg')}, "
        f"scikit-fem {hw.get('skfem')}.",
        f"Settings: {json.dumps(result['settings'])}", "",
        "## Speed (DarcyFDSolver, harmonic faces, 12/3 GRF coefficient, f = 1, tol = 1e-10)", "",
        "| n | linear solver | assembly s | solve s | total s/sample | speed-up vs direct "
        "| iterations | max rel. residual | max rel. L2 vs direct |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    direct = {r["n"]: r["total_s_per_sample"] for r in result["speed"]
              if r["linear_solver"] == "direct"}
    lines += [f"| {r['n']} | {r['linear_solver']} | {r['assembly_s_per_sample']:.4f} | "
              f"{r['solve_s_per_sample']:.4f} | {r['total_s_per_sample']:.4f} | "
              f"{direct[r['n']] / r['total_s_per_sample']:.1f}x | {r['iterations']} | "
              f"{r['relative_residual_max']:.1e} | {r['rel_l2_vs_direct_max']:.1e} |"
              for r in result["speed"]]
    lines += ["", "## Accuracy (mean relative L2 over samples, at the coarse nodes)", "",
              "| n | method | vs 4x FD harmonic | vs 4x same method | 2x solution vs 4x FD "
              "harmonic |", "|---|---|---|---|---|"]
    lines += [f"| {r['n']} | {r['method']} | {r['rel_l2_vs_4x_fd_harmonic']:.2e} | "
              f"{r.get('rel_l2_vs_4x_same_method', float('nan')):.2e} | "
              f"{r.get('rel_l2_2x_vs_4x_fd_harmonic', float('nan')):.2e} |"
              for r in result["accuracy"]]
    lines += ["", "Reproduce: "
              "`OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m benchmarks.bench_darcy`", ""]
    return "\n".join(lines)


def fft_pair_time(n: int, batch: int, repeats: int) -> float:
    """Least seconds of one batched (``batch`` x ``n``) ``rfft`` + ``irfft`` pair."""
    u = np.random.default_rng(0).standard_normal((batch, n))
    return best_time(lambda: np.fft.irfft(np.fft.rfft(u, axis=-1), n=n, axis=-1), repeats,
                     inner=20)


def burgers_speed_accuracy(*, n: int, batch: int, repeats: int) -> dict[str, Any]:
    """``BurgersSpectralSolver`` on ``batch`` benchmark GRF samples at ``n`` for nu =
    0.1/(2 pi) and 0.1: seconds per sample (best and median of ``repeats``), time steps, FFT
    pairs, the FFT floor (pairs x the time of one pair, scaled by the mean FFT length used)
    and the relative L2 error against Cole-Hopf at t = 1."""
    u0 = PeriodicGRF(n).sample(batch, seeds=np.arange(batch))
    rows = []
    pair = fft_pair_time(n, batch, repeats)
    for nu in (0.1 / (2 * np.pi), 0.1):
        solver = BurgersSpectralSolver(viscosity=nu)
        times, (u, report) = timed_result(partial(solver.solve_with_report, u0), repeats)
        exact = burgers_exact(u0, viscosity=nu, times=solver.final_time)
        err = relative_l2(u, exact)
        # count FFTs with the same stepper the solver uses
        stepper = SpectralStepper(n, nu, n_contour=solver.n_contour, mode_tol=solver.mode_tol)
        integrate_spectral(stepper, u0, solver.time_grid(u0), np.array([solver.final_time]),
                           solver_name="bench")
        mean_len = stepper.fft_points / stepper.fft_pairs
        floor = pair * stepper.fft_pairs * (mean_len * np.log2(mean_len)) / (n * np.log2(n))
        rows.append({"viscosity": nu, "seconds_per_sample_best": min(times) / batch,
                     "seconds_per_sample_median": float(np.median(times)) / batch,
                     "time_steps": int(report.iterations[0]), "fft_pairs": stepper.fft_pairs,
                     "mean_fft_length": mean_len, "fft_pair_time_full_length_batch_s": pair,
                     "fft_floor_per_sample_s": floor / batch,
                     "rel_l2_error_max": float(err.max()), "rel_l2_error_mean": float(err.mean())})
    return {"benchmark": "burgers_solver",
            "settings": {"n": n, "batch": batch, "repeats": repeats, "final_time": 1.0,
                         "grf": PeriodicGRF(n).config, "solver_defaults": solver.config},
            "results": rows}


def markdown_burgers(res: dict[str, Any]) -> str:
    """The results file of :func:`burgers_speed_accuracy` (with its ``hardware`` block)."""
    hw, st = res["hardware"], res["settings"]
    lines = ["# Burgers spectral solver: speed and accuracy", "",
             f"n = {st['n']}, batch {st['batch']}, t = 1, CPU {hw['cpu_model']} "
             f"({hw['cpu_count']} cores, OMP_NUM_THREADS={hw['OMP_NUM_THREADS']}); "
             f"{hw['note']}.", "",
             "| viscosity | s/sample (best) | s/sample (median) | steps | FFT pairs | mean FFT "
             "length | FFT floor s/sample | rel L2 vs exact (max) |",
             "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['viscosity']:.5f} | {r['seconds_per_sample_best']:.3f} | "
              f"{r['seconds_per_sample_median']:.3f} | {r['time_steps']} | {r['fft_pairs']} | "
              f"{r['mean_fft_length']:.0f} | {r['fft_floor_per_sample_s']:.3f} | "
              f"{r['rel_l2_error_max']:.2e} |" for r in res["results"]]
    lines += ["", "Reproduce: `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m "
              "benchmarks.bench_burgers`", ""]
    return "\n".join(lines)
