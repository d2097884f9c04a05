"""The figures of a forward comparison report (conventions: :mod:`neuralop_fem.plotting`)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np
import xarray as xr

from solvers.problems import PROBLEMS, get_problem

from ..plotting import fit_title, integer_axis, log_axis, save

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["accuracy_vs_cost", "error_histograms", "warm_start_bars", "worst_samples"]

_LABELS = {"rel_l2": "relative L2 error", "rel_h1": "relative H1-seminorm error",
           "rel_energy": "relative energy-norm error"}
_FIELD = {"u0": "initial condition u0(x)", "u": "solution u", "a": "coefficient a"}


def _names(ds: xr.Dataset) -> tuple[str, str]:
    return str(ds.attrs.get("reference", "reference")), str(ds.attrs.get("candidate", "candidate"))


def error_histograms(ds: xr.Dataset, path: Path, plt: ModuleType) -> Path:
    """One histogram per error metric (samples per bin), the mean marked."""
    ref, cand = _names(ds)
    metrics = [m for m in ("rel_l2", "rel_h1", "rel_energy") if np.isfinite(ds[m].values).any()]
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.6 * len(metrics), 3.8), squeeze=False,
                             constrained_layout=True)
    for ax, m in zip(axes[0], metrics, strict=True):
        v = ds[m].values[np.isfinite(ds[m].values)]
        spread = np.ptp(v) > 1e-9 * max(abs(float(v.mean())), 1e-300)
        ax.hist(v, bins=min(30, max(5, len(v) // 3)) if spread else 1, color="tab:blue",
                alpha=0.8)
        ax.axvline(v.mean(), color="k", ls="--", label=f"mean {v.mean():.2e}")
        ax.set_xlabel(f"{_LABELS[m]} (dimensionless)")
        ax.set_ylabel("samples (count)")
        integer_axis(ax)
        ax.legend(fontsize=8, loc="best")
    fig.suptitle(fit_title(f"errors of {cand} against {ref} ({ds.attrs.get('n_samples')} "
                           "samples)", fig), fontsize=10)
    return save(fig, path)


def _field_label(problem: str, name: str) -> str:
    spec = get_problem(problem) if problem in PROBLEMS else None
    var = {"input": spec.input_name if spec else "input",
           "reference": spec.output_name if spec else "solution",
           "candidate": spec.output_name if spec else "solution"}.get(name, name)
    return _FIELD.get(var, var)


def worst_samples(ds: xr.Dataset, path: Path, plt: ModuleType) -> Path:
    """Input, both solutions and their difference for the three worst samples."""
    ref, cand = _names(ds)
    problem = str(ds.attrs.get("problem"))
    worst = ds["rel_l2"].fillna(-1).argsort().values[::-1][:3]
    fig, axes = plt.subplots(len(worst), 4, figsize=(15, 3.3 * len(worst)), squeeze=False,
                             constrained_layout=True)
    titles = (_field_label(problem, "input"), f"{ref}", f"{cand}",
              "difference (candidate - reference)")
    for row, i in enumerate(worst):
        fields = [ds[k].values[i] for k in ("input", "reference", "candidate")]
        fields.append(fields[2] - fields[1])
        sample = f"sample {int(ds['sample'].values[i])}, rel. L2 {ds['rel_l2'].values[i]:.2e}"
        for col, (ax, f) in enumerate(zip(axes[row], fields, strict=True)):
            _field_panel(fig, ax, f, col, fields[1], problem)
            ax.set_title(titles[col] + (f"\n{sample}" if col == 0 else ""), fontsize=9)
    fig.suptitle(fit_title(f"worst samples: {cand} against {ref}", fig), fontsize=10)
    return save(fig, path, dpi=100)


def _field_panel(fig: Figure, ax: Axes, f: np.ndarray, col: int, reference: np.ndarray,
                 problem: str) -> None:
    unit = "(dimensionless)"
    if f.ndim == 1:
        x = np.arange(len(f)) / len(f)
        ax.plot(x, f, lw=1, label="this field" if col == 2 else None)
        if col == 2:
            ax.plot(x, reference, lw=1, ls="--", color="gray", label="reference solver")
            ax.legend(fontsize=7, loc="best")
        ax.set_xlabel("x (dimensionless)")
        ax.set_ylabel(["u0(x)", "u(x, T)", "u(x, T)", "difference of u(x, T)"][col] + f" {unit}")
        return
    vmax = float(np.abs(f).max()) or 1.0
    image = ax.imshow(f.T, origin="lower", extent=(0, 1, 0, 1),
                      cmap="RdBu_r" if col == 3 else "viridis",
                      vmin=-vmax if col == 3 else None, vmax=vmax if col == 3 else None)
    label = ["coefficient a", "solution u", "solution u", "difference of u"][col]
    fig.colorbar(image, ax=ax, fraction=0.046, label=f"{label} {unit}")
    ax.set_xlabel("x")
    ax.set_ylabel("y")


def accuracy_vs_cost(ds: xr.Dataset, path: Path, plt: ModuleType) -> Path:
    """Each sample's error against the candidate's wall time; the solver's time marked."""
    ref, cand = _names(ds)
    fig, ax = plt.subplots(figsize=(6.4, 4.4), constrained_layout=True)
    ax.scatter(ds["candidate_time"], ds["rel_l2"], s=14, color="tab:orange",
               label=f"{cand}, one point per sample")
    ref_t = ds["reference_time"].values
    if np.isfinite(ref_t).any():
        ax.axvline(float(np.nanmedian(ref_t)), color="k", ls="--",
                   label=f"{ref}: median {np.nanmedian(ref_t):.2e} s")
    if "warm_time" in ds:
        warm = ds["warm_time"].values + ds["candidate_time"].values
        ax.axvline(float(np.median(warm)), color="tab:green", ls=":",
                   label=f"{cand} + warm-started {ref}: median {np.median(warm):.2e} s")
    log_axis(ax, "x")
    if (ds["rel_l2"].values > 0).any():
        log_axis(ax, "y")
    ax.set_xlabel("wall time per sample (s)")
    ax.set_ylabel(f"relative L2 error against {ref} (dimensionless)")
    speedup = ds.attrs.get("speedup", np.nan)
    ax.set_title(fit_title(f"accuracy against cost\n{cand} vs {ref}"
                           + (f" (speed-up {speedup:.3g}x)" if np.isfinite(speedup) else ""), fig),
                 fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="best", framealpha=0.9)
    return save(fig, path)


def warm_start_bars(ds: xr.Dataset, path: Path, plt: ModuleType) -> Path:
    """Krylov iterations from zero and from the prediction; the time saved, per sample."""
    ref, cand = _names(ds)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    pos = np.arange(ds.sizes["sample"])
    labels = [str(int(s)) for s in ds["sample"].values]
    axes[0].bar(pos - 0.2, ds["reference_iterations"], width=0.4, label="start from zero")
    axes[0].bar(pos + 0.2, ds["warm_iterations"], width=0.4, label=f"start from {cand}")
    axes[0].set_ylabel("Krylov iterations (count)")
    top = float(max(ds["reference_iterations"].max(), ds["warm_iterations"].max()))
    axes[0].set_ylim(0, 1.3 * max(top, 1.0))  # headroom: the legend sits above the bars
    axes[0].legend(fontsize=8, loc="upper center", ncol=2)
    saved = ds["reference_time"].values - ds["warm_time"].values - ds["candidate_time"].values
    axes[1].bar(pos, saved, color=np.where(saved > 0, "tab:green", "tab:red"))
    axes[1].axhline(0, color="k", lw=0.8)
    axes[1].set_ylabel("time saved incl. inference (s)")
    for ax in axes:
        ax.set_xlabel("sample index")
        ax.set_xticks(pos[:: max(1, len(pos) // 16)], labels[:: max(1, len(pos) // 16)])
    integer_axis(axes[0])
    fig.suptitle(fit_title(f"warm start of {ref} from the prediction of {cand}", fig), fontsize=10)
    return save(fig, path)
