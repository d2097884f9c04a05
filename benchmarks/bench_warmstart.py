"""Warm-starting the Darcy solvers from surrogate predictions: iterations and time saved.

For benchmark coefficients (12/3 two-phase GRF, f = 1) at resolutions 85/141/211 and
tolerances 1e-4..1e-10, measures per sample the Krylov iterations and wall time of

* ``zero``       the solver from a zero initial guess (the baseline),
* ``warm``       ``initial_guess = prediction``,
* ``projected``  ``initial_guess = alpha * prediction`` (Galerkin projection onto span{p}),
* ``deflated``   deflated PCG with the prediction as deflation vector,

with the linear solvers ``gmg`` (CG + geometric multigrid, the default) and ``cg`` (Jacobi).

Predictions. Training a Darcy surrogate to the paper's ~1e-2 takes GPU hours, so the
predictions here are the discrete solution plus a controlled error, at relative L2 levels
1e-1, 1e-2, 1e-3:

* ``smooth``: a smooth random field (Neumann GRF, tau = 3, times sin(pi x) sin(pi y));
* ``coarse``: the FD solution on the half-resolution grid, bilinearly interpolated, whose
  error sits at the coefficient's interfaces like a neural operator's (its level is what it
  is, ~1e-2 at these resolutions).

With ``--run RUN_DIR`` a trained Darcy surrogate's own predictions are measured too.
Inference time: the measured CPU forward pass of the ``darcy-galerkin`` preset (random
weights; the cost does not depend on them) at each resolution, added to every variant
but ``zero`` in ``total_time``.

Writes ``benchmarks/results/warmstart.json`` and ``.md`` (``--quick``: ``warmstart_quick.*``).

Run: ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_warmstart.py [--quick]``
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from neuralop_fem.environment import cpu_model
from neuralop_fem.reproduce.script import count, run_script
from neuralop_fem.surrogate import resample_nodes
from neuralop_fem.surrogate.warmstart import VARIANTS, measure_warm_start
from solvers.darcy import DarcyFDSolver
from solvers.grf import NeumannGRF, threshold

RESULTS = Path(__file__).parent / "results"


def _hardware() -> dict[str, object]:
    import scipy
    import torch

    return {"cpu": cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "scipy": scipy.__version__, "torch": torch.__version__,
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
            "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
            "note": "2-core box shared with other engineers' jobs; times are best of repeats"}


def _inference_time(n: int, repeats: int) -> float:
    import torch

    from neuralop_fem.models import build_model

    torch.set_num_threads(1)
    model = build_model("darcy-galerkin").eval()
    x = torch.ones(1, n, n, 1)
    best = np.inf
    with torch.no_grad():
        for _ in range(repeats + 1):
            t0 = time.perf_counter()
            model(x)
            best = min(best, time.perf_counter() - t0)
    return float(best)


def _smooth_error(u: np.ndarray, level: float, rng: np.random.Generator) -> np.ndarray:
    n = u.shape[-1]
    x = np.linspace(0, 1, n)
    bump = np.sin(np.pi * x)[:, None] * np.sin(np.pi * x)[None, :]
    g = NeumannGRF(n).sample(len(u), rng=rng) * bump
    scale = level * np.linalg.norm(u.reshape(len(u), -1), axis=1) / np.linalg.norm(
        g.reshape(len(u), -1), axis=1)
    return u + scale[:, None, None] * g


def _coarse(a: np.ndarray) -> np.ndarray:
    n = a.shape[-1]
    coarse = DarcyFDSolver().solve(a[:, ::2, ::2])
    return resample_nodes(coarse, n, order=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run (n=85, 2 samples)")
    parser.add_argument("--samples", type=count(), default=3)
    parser.add_argument("--run", type=Path, default=None, help="a trained Darcy run directory")
    parser.add_argument("--resolution", type=count(3), action="append", default=None,
                        help="grid size (repeatable; default 85, 141, 211)")
    parser.add_argument("--predictions", choices=("all", "surrogate"), default="all",
                        help="'surrogate': only the trained run's predictions (needs --run)")
    args = parser.parse_args(argv)
    if args.predictions == "surrogate" and args.run is None:
        parser.error("--predictions surrogate needs --run")
    resolutions = (85,) if args.quick else tuple(args.resolution or (85, 141, 211))
    tolerances = (1e-4, 1e-10) if args.quick else (1e-4, 1e-6, 1e-8, 1e-10)
    n_samples = 2 if args.quick else args.samples
    repeats = 1 if args.quick else 2
    rng = np.random.default_rng(2024)
    rows = []
    t_start = time.perf_counter()
    for n in resolutions:
        a = threshold(NeumannGRF(n).sample(n_samples, rng=rng))
        u = DarcyFDSolver().solve(a)
        t_inf = _inference_time(n, repeats)
        preds = {}
        if args.predictions == "all":
            preds = {f"smooth {lvl:g}": _smooth_error(u, lvl, rng) for lvl in (1e-1, 1e-2, 1e-3)}
            preds["coarse"] = _coarse(a)
        if args.run is not None:
            from neuralop_fem.surrogate import Surrogate

            sur = Surrogate.load(args.run, device="cpu")
            preds["surrogate"] = sur.solve(a, resample=True)
        for kind, pred in preds.items():
            err = np.linalg.norm((pred - u).reshape(n_samples, -1), axis=1) / np.linalg.norm(
                u.reshape(n_samples, -1), axis=1)
            for linear_solver in ("gmg", "cg"):
                solver = dataclasses.replace(DarcyFDSolver(), linear_solver=linear_solver)
                ds = measure_warm_start(solver, a, pred, tolerances=tolerances, variants=VARIANTS,
                                        prediction_time=t_inf, repeats=repeats)
                for tol in tolerances:
                    for v in VARIANTS:
                        sel = ds.sel(tol=tol, variant=v)
                        rows.append({
                            "n": n, "prediction": kind, "prediction_rel_l2": float(err.mean()),
                            "linear_solver": linear_solver, "tol": tol, "variant": v,
                            "iterations": float(sel["iterations"].mean()),
                            "solve_time": float(sel["solve_time"].mean()),
                            "total_time": float(sel["total_time"].mean()),
                            "inference_time": t_inf,
                        })
                print(f"n={n} {kind:12s} ({err.mean():.1e}) {linear_solver}: done", flush=True)
    result = {"hardware": _hardware(), "settings": {
        "resolutions": resolutions, "tolerances": tolerances, "samples": n_samples,
        "repeats": repeats, "coefficient": "threshold(NeumannGRF(n), 12, 3), f = 1, FD harmonic",
        "variants": VARIANTS}, "rows": rows, "wall_time_s": time.perf_counter() - t_start}
    name = "warmstart_quick" if args.quick else "warmstart"
    if args.run is not None:
        name += "_surrogate"
        result["settings"]["run"] = str(args.run)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=1))
    (RESULTS / f"{name}.md").write_text(_markdown(result))
    print(_markdown(result))
    return 0


def _markdown(result: dict) -> str:
    rows = result["rows"]
    hw = result["hardware"]
    lines = ["# Warm-starting the Darcy solver from predictions", "",
             f"CPU {hw['cpu']} ({hw['cores']} cores), OMP/OPENBLAS threads "
             f"{hw['OMP_NUM_THREADS']}/{hw['OPENBLAS_NUM_THREADS']}; {hw['note']}. "
             f"Samples per cell: {result['settings']['samples']}. Time = mean seconds per sample; "
             "'total' adds the darcy-galerkin forward pass (CPU, batch 1) to every non-zero start.",
             "", "Per variant: mean iterations, solve time / zero-start solve time, total time "
             "(solve + inference) / zero-start time. Ratios < 1 pay.", ""]
    keys = sorted({(r["n"], r["linear_solver"], r["prediction"]) for r in rows},
                  key=lambda k: (k[0], k[1] != "gmg", k[2]))
    tols = result["settings"]["tolerances"]
    lines.append("| n | solver | prediction (rel L2) | tol | zero: its, s | warm: its, solve/zero, "
                 "total/zero | projected | deflated |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for n, ls, kind in keys:
        for tol in tols:
            cell = {r["variant"]: r for r in rows if (r["n"], r["linear_solver"], r["prediction"],
                                                       r["tol"]) == (n, ls, kind, tol)}
            z = cell["zero"]
            parts = [f"{cell[v]['iterations']:.1f}, {cell[v]['solve_time'] / z['solve_time']:.2f}, "
                     f"{cell[v]['total_time'] / z['total_time']:.2f}"
                     for v in ("warm", "projected", "deflated")]
            lines.append(f"| {n} | {ls} | {kind} ({z['prediction_rel_l2']:.1e}) | {tol:g} | "
                         f"{z['iterations']:.1f}, {z['total_time']:.3g} s | "
                         + " | ".join(parts) + " |")
    inf = sorted({(r["n"], r["inference_time"]) for r in rows})
    lines += ["", "Surrogate inference (darcy-galerkin forward, CPU, 1 thread): "
              + ", ".join(f"n={n}: {t:.3g} s" for n, t in inf), "",
              "Reproduce: "
              "`OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_warmstart.py`"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(run_script(main))
