"""``neuralop-fem demo [--out DIR] [--quick]``: the whole pipeline on this machine.

1. verifies the bundled solvers on a few benchmark samples (Burgers spectral vs the exact
   Cole-Hopf solution; Darcy FD vs a 2x-refined FD solution and vs P1 finite elements);
2. generates a small Burgers dataset (benchmark GRF and viscosity, n = 1024);
3. trains a small Galerkin Transformer (the ``burgers-galerkin`` preset, narrowed) with the
   project's trainer, on the GPU when there is one;
4. compares the trained surrogate with the spectral solver on the test split and writes the
   report (netCDF, markdown, PNGs); times both again 5 times for the speedup's median and
   spread, and places the surrogate on the accuracy-cost front of the solver ladder (the
   verdict at equal accuracy);
5. prints a summary and where to look.

About 3-5 minutes on a 2-core laptop CPU; ``--quick`` (under a minute) shrinks every step
and is what the test suite runs.
"""

from __future__ import annotations

import argparse
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from solvers.burgers import BurgersSpectralSolver
from solvers.darcy import DarcyFDSolver, DarcyFEMSolver
from solvers.exact import burgers_exact
from solvers.grf import NeumannGRF, PeriodicGRF, threshold

from ..data import generate
from ..errors import ConfigError
from ..evaluation import compare_run
from ..files import write_json_atomic
from ..models import PRESETS
from ..number_options import int_range
from ..path_options import check_new_output_dir, naming, output_dir
from ..runs.train_config import TrainConfig
from ..training.distributed import resolve_device
from ..training.trainer import Trainer
from ._options import device, plain_text

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import xarray as xr
    from numpy.typing import NDArray

__all__ = ["DemoSettings", "register", "run", "run_demo"]

_log = logging.getLogger("neuralop_fem.demo")


@dataclass(frozen=True, kw_only=True)
class DemoSettings:
    """Sizes of each demo step (``full`` and ``quick`` below)."""

    verify_burgers_n: int
    verify_darcy_n: int
    n: int
    n_train: int
    n_val: int
    n_test: int
    d_model: int
    num_layers: int
    modes: int
    epochs: int
    batch_size: int
    timing_repeats: int = 5


FULL = DemoSettings(verify_burgers_n=1024, verify_darcy_n=85, n=1024, n_train=192, n_val=32,
                    n_test=32, d_model=48, num_layers=2, modes=16, epochs=16, batch_size=8)
QUICK = DemoSettings(verify_burgers_n=256, verify_darcy_n=29, n=256, n_train=24, n_val=4,
                     n_test=4, d_model=16, num_layers=1, modes=8, epochs=2, batch_size=8)


def _times(ds: xr.Dataset) -> str:
    """``3.1x (median of 5 timed repeats; min 2.8x, max 3.6x)``: the comparison's speed-up,
    the number its report prints."""
    a = ds.attrs
    return (f"{a['speedup']:.3g}x ({a['speedup_basis']}; min {a['speedup_min']:.3g}x, max "
            f"{a['speedup_max']:.3g}x)")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("demo", help="the main job: a small end-to-end run on this machine",
                              formatter_class=argparse.RawDescriptionHelpFormatter,
                              description="The whole pipeline on this machine:\n\n"
                              + plain_text(__doc__.split("\n\n")[1]) if __doc__ else None)
    p.add_argument("--out", type=output_dir, default=Path("neuralop_fem_demo"), metavar="DIR",
                   help="output directory (default ./neuralop_fem_demo)")
    p.add_argument("--quick", action="store_true", help="smoke run, under a minute")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the files of an earlier demo in DIR (without it a DIR that is "
                        "not empty is refused)")
    p.add_argument("--device", type=device, default="auto",
                   help="training device: auto (default), cpu, cuda, cuda:K")
    p.add_argument("--seed", type=int_range(0), default=0, help="dataset seed (default 0)")


def _say(text: str) -> None:
    print(text, flush=True)


def verify_solvers(settings: DemoSettings, *, seed: int) -> dict[str, float]:
    """Step 1: accuracy of the bundled solvers against exact / refined / other-method solutions."""
    import numpy as np

    rng = np.random.default_rng(seed)
    solver = BurgersSpectralSolver()
    u0 = PeriodicGRF(settings.verify_burgers_n).sample(3, rng=rng)
    u = solver.solve(u0)
    exact = burgers_exact(u0, viscosity=solver.viscosity, times=solver.final_time)
    burgers_err = float(np.max(np.linalg.norm(u - exact, axis=1) / np.linalg.norm(exact, axis=1)))

    n = settings.verify_darcy_n
    fine_n = 2 * n - 1
    a_fine = threshold(NeumannGRF(fine_n).sample(2, rng=rng))
    a = a_fine[:, ::2, ::2]
    fd = DarcyFDSolver()
    u_fd = fd.solve(a)
    u_ref = fd.solve(a_fine)[:, ::2, ::2]
    u_fem = DarcyFEMSolver().solve(a)

    def rel(x: NDArray[np.float64], y: NDArray[np.float64]) -> float:
        return float(np.mean(np.linalg.norm((x - y).reshape(len(x), -1), axis=1)
                             / np.linalg.norm(y.reshape(len(y), -1), axis=1)))

    return {"burgers_spectral_vs_exact": burgers_err,
            "darcy_fd_vs_refined": rel(u_fd, u_ref), "darcy_fem_vs_refined": rel(u_fem, u_ref),
            "darcy_fd_vs_fem": rel(u_fd, u_fem)}


def run_demo(out: Path, *, quick: bool = False, device: str = "auto", seed: int = 0,
             overwrite: bool = False) -> dict[str, Any]:
    """Run the five steps into ``out``; return the figures printed at the end.

    Raises
    ------
    ConfigError
        If ``out`` is a directory that is not empty and ``overwrite`` is false (an earlier
        demo's files are replaced only on request).
    """
    import numpy as np

    if not overwrite and out.is_dir() and any(out.iterdir()):
        msg = (f"`out` must be a new or empty directory (pass overwrite=True to replace an "
               f"earlier demo's files); got {str(out)!r}, which is not empty.")
        raise ConfigError(msg)

    s = QUICK if quick else FULL
    out.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    _say("[1/5] verifying the solvers ...")
    checks = verify_solvers(s, seed=seed)
    timings["verify"] = time.perf_counter() - t0
    _say(f"      Burgers spectral vs exact Cole-Hopf (n={s.verify_burgers_n}): max rel. L2 "
         f"{checks['burgers_spectral_vs_exact']:.2e}")
    _say(f"      Darcy FD vs 2x-refined FD (n={s.verify_darcy_n}): rel. L2 "
         f"{checks['darcy_fd_vs_refined']:.2e}; "
         f"P1 FEM vs refined FD: {checks['darcy_fem_vs_refined']:.2e}; FD vs FEM: "
         f"{checks['darcy_fd_vs_fem']:.2e}")

    t0 = time.perf_counter()
    n_total = s.n_train + s.n_val + s.n_test
    _say(f"[2/5] generating {n_total} Burgers samples at n={s.n} ...")
    data = out / "burgers.nc"
    if data.exists():
        data.unlink()
    generate("burgers", n_samples=n_total, resolution=s.n, seed=seed, out=data,
             workers=0 if quick else None, progress=False)
    timings["generate"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    _say(f"[3/5] training a Galerkin Transformer (d_model={s.d_model}, {s.num_layers} layers, "
         f"{s.epochs} epochs) ...")
    model_config = PRESETS["burgers-galerkin"].replace(
        d_model=s.d_model, d_ff=2 * s.d_model, num_layers=s.num_layers, modes=s.modes,
        freq_dim=s.d_model, decoder_ff=s.d_model)
    config = TrainConfig(task="burgers", epochs=s.epochs, batch_size=s.batch_size,
                         eval_batch_size=s.batch_size, n_train=s.n_train, n_val=s.n_val,
                         n_test=s.n_test, device=device, lr_max=1e-3)
    run_dir = out / "run"
    with Trainer(run_dir, data, model_config=model_config, config=config,
                 preset="burgers-galerkin", overwrite=True) as trainer:
        result = trainer.fit()
    timings["train"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    _say("[4/5] comparing the surrogate with the spectral solver on the test split ...")
    # one timing is noise on a shared machine: compare_run times both sides again and reports
    # the median speed-up; the report, its plots and the lines below all read that one number
    report = compare_run(run_dir, data=data, out=out / "report", indices="test", warm_start=False,
                         timing_repeats=s.timing_repeats, overwrite=overwrite)
    ds = report["dataset"]
    timings["compare"] = time.perf_counter() - t0
    figures = {
        **checks, "train_best_val_rel_l2": float(result.get("best_val_rel_l2", float("nan"))),
        "test_rel_l2_mean": float(ds.attrs["rel_l2_mean"]),
        "test_rel_h1_mean": float(ds.attrs["rel_h1_mean"]),
        "speedup": float(ds.attrs["speedup"]), "speedup_basis": ds.attrs["speedup_basis"],
        "speedup_min": float(ds.attrs["speedup_min"]),
        "speedup_max": float(ds.attrs["speedup_max"]),
        "speedup_repeats": [float(v) for v in np.atleast_1d(ds.attrs["speedup_repeats"])],
        "solver_s_per_sample": float(ds.attrs["reference_time_median"]),
        "surrogate_s_per_sample": float(ds.attrs["candidate_time_median"]),
        "verdict": str(ds.attrs.get("verdict", "")),
        "speedup_at_equal_accuracy": float(ds.attrs.get("fair_speedup", float("nan"))),
        "timings_s": timings, "quick": quick, "device": str(trainer.device),
    }
    write_json_atomic(out / "demo_summary.json", figures)
    _say("[5/5] summary")
    _say(f"      surrogate test error: rel. L2 {figures['test_rel_l2_mean']:.3e}, "
         f"rel. H1 {figures['test_rel_h1_mean']:.3e} ({ds.sizes['sample']} samples)")
    if figures["verdict"]:
        _say(f"      fair verdict: {figures['verdict']}")
    _say(f"      time per sample (medians): solver {figures['solver_s_per_sample']:.3e} s, "
         f"surrogate {figures['surrogate_s_per_sample']:.3e} s; solver / surrogate at unequal "
         f"accuracy (not the verdict) {_times(ds)}")
    _say(f"      steps took {', '.join(f'{k} {v:.0f} s' for k, v in timings.items())}")
    _say(f"      look at: {out / 'report' / 'summary.md'}, {out / 'report'}/*.png, "
         f"{run_dir / 'loss_curve.png'}; reload with neuralop_fem.Surrogate.load('{run_dir}')")
    return figures


def run(args: argparse.Namespace) -> int:
    """Execute ``neuralop-fem demo``; return the exit status."""
    check_new_output_dir(args.out, "--out", overwrite=args.overwrite)
    if args.device != "auto":
        resolve_device(args.device)
    with naming(args.out):
        run_demo(args.out, quick=args.quick, device=args.device, seed=args.seed,
                 overwrite=args.overwrite)
    return 0
