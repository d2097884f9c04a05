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
        both = np.concatenate([fields[1].ravel(), fields[2].ravel()])
        limits = (float(both.min()), float(both.max()))  # solver and surrogate on one scale
        for col, (ax, f) in enumerate(zip(axes[row], fields, strict=True)):
            _field_panel(fig, ax, f, col, fields[1], problem, limits)
            ax.set_title(titles[col] + (f"\n{sample}" if col == 0 else ""), fontsize=9)
    fig.suptitle(fit_title(f"worst samples: {cand} against {ref}", fig), fontsize=10)
    return save(fig, path, dpi=100)


def _field_panel(fig: Figure, ax: Axes, f: np.ndarray, col: int, reference: np.ndarray,
                 problem: str, limits: tuple[float, float]) -> None:
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
    if col == 3:  # the difference: symmetric about zero
        vmax = float(np.abs(f).max()) or 1.0
        vmin = -vmax
    elif col in (1, 2):  # both solutions on the same colour scale, side by side
        vmin, vmax = limits
    else:
        vmin, vmax = None, None
    image = ax.imshow(f.T, origin="lower", extent=(0, 1, 0, 1),
                      cmap="RdBu_r" if col == 3 else "viridis", vmin=vmin, vmax=vmax)
    label = ["coefficient a", "solution u", "solution u", "difference of u"][col]
    fig.colorbar(image, ax=ax, fraction=0.046, label=f"{label} {unit}")
    ax.set_xlabel("x")
    ax.set_ylabel("y")


def _spread(v: np.ndarray) -> tuple[float, float, float]:
    """(mean, mean - p10, p90 - mean) of finite values: a point and its 10-90 % spread."""
    v = v[np.isfinite(v)]
    m = float(v.mean())
    return m, max(m - float(np.percentile(v, 10)), 0.0), max(float(np.percentile(v, 90)) - m, 0.0)


def accuracy_vs_cost(ds: xr.Dataset, path: Path, plt: ModuleType) -> Path:
    """Error against time per sample: the solver ladder's front (rungs labelled) and the
    surrogate, each a mean with its 10-90 % spread over samples; without a ladder the
    candidate against the reference solver's time."""
    ref, cand = _names(ds)
    fig, ax = plt.subplots(figsize=(7.2, 5.0), constrained_layout=True)
    if "ladder_rel_l2" in ds:
        err, t = ds["ladder_rel_l2"].values, ds["ladder_time"].values
        pts = [(_spread(t[i]), _spread(err[i])) for i in range(len(err))]
        front = np.flatnonzero(ds["on_front"].values)
        for i, ((tm, tl, th), (em, el, eh)) in enumerate(pts):
            on = i in front
            ax.errorbar(tm, em, xerr=[[tl], [th]], yerr=[[el], [eh]], fmt="o" if on else "x",
                        color="k" if on else "gray", ms=5, capsize=2, lw=0.8)
            ax.annotate(str(ds["rung"].values[i]), (tm, em), textcoords="offset points",
                        xytext=(5, 4), fontsize=7, color="k" if on else "gray")
        ax.plot([pts[i][0][0] for i in front], [pts[i][1][0] for i in front], "k-", lw=1,
                label="solver ladder: front (o), dominated rungs (x)")
        (tm, tl, th) = _spread(np.full(1, ds.attrs["fair_surrogate_time"]))
        (em, el, eh) = _spread(ds["truth_rel_l2"].values)
        ax.errorbar(tm, em, yerr=[[el], [eh]], fmt="*", color="tab:orange", ms=12, capsize=3,
                    label=f"{cand} (surrogate)")
        ax.set_ylabel("relative L2 error against the dataset's solutions (dimensionless)")
        speed, status = ds.attrs.get("fair_speedup", np.nan), ds.attrs.get("fair_status", "")
        head = ("more accurate than every rung" if status == "more accurate than every rung"
                else f"{status.split(' the ')[0] + ' ' if status.startswith('at ') else ''}"
                     f"{speed:.2g}x "
                     "the solver's speed at equal accuracy")
        title = f"accuracy against cost: {cand} is {head}"
    else:
        (tm, tl, th) = _spread(ds["candidate_time"].values)
        (em, el, eh) = _spread(ds["rel_l2"].values)
        ax.errorbar(tm, em, xerr=[[tl], [th]], yerr=[[el], [eh]], fmt="*", color="tab:orange",
                    ms=12, capsize=3, label=f"{cand}: mean, 10-90 % over samples")
        ref_t = ds["reference_time"].values
        if np.isfinite(ref_t).any():
            ax.axvline(float(np.nanmean(ref_t)), color="k", ls="--",
                       label=f"{ref}: {np.nanmean(ref_t):.2e} s")
        ax.set_ylabel(f"relative L2 error against {ref} (dimensionless)")
        speedup = ds.attrs.get("speedup", np.nan)
        title = (f"accuracy against cost: {cand} vs {ref}"
                 + (f" (speed-up {speedup:.3g}x, same accuracy not checked)"
                    if np.isfinite(speedup) else ""))
    if "warm_time" in ds:
        warm = ds["warm_time"].values + ds["candidate_time"].values
        ax.axvline(float(np.mean(warm)), color="tab:green", ls=":",
                   label=f"{cand} + warm-started {ref}: {np.mean(warm):.2e} s")
    log_axis(ax, "x")
    shown = ds["ladder_rel_l2"].values if "ladder_rel_l2" in ds else ds["rel_l2"].values
    if (shown > 0).any():
        log_axis(ax, "y")
    ax.set_xlabel("wall time per sample (s)")
    ax.set_title(fit_title(title, fig), fontsize=10)
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
    axes[1].set_ylabel("time saved incl. inference (s)\n> 0 faster, < 0 slower than from zero")
    for ax in axes:
        ax.set_xlabel("sample index")
        ax.set_xticks(pos[:: max(1, len(pos) // 16)], labels[:: max(1, len(pos) // 16)])
    integer_axis(axes[0])
    fig.suptitle(fit_title(f"warm start of {ref} from the prediction of {cand}", fig), fontsize=10)
    return save(fig, path)
