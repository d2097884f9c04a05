"""Write a comparison report: netCDF, markdown summary and PNG plots (matplotlib Agg).

:func:`write_report` takes the dataset returned by :func:`neuralop_fem.evaluation.compare`
(with ``keep_fields=True`` for the worst-sample panels) and writes into ``out_dir``::

    comparison.nc         the per-sample dataset (fields dropped)
    summary.md            table of errors (mean / median / p95), speed, warm-start gains
    error_histogram.png   relative L2 (and H1 / energy) error histograms
    worst_samples.png     the worst samples: input, reference, candidate, error
    accuracy_vs_cost.png  per-sample error against wall time of each side
    warm_start.png        (Darcy, when measured) iterations and time from zero vs warm
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from ..files import atomic_path, write_text_atomic
from .comparison import METRICS

__all__ = ["summary_markdown", "write_report"]

_LABELS = {"rel_l2": "relative L2", "rel_h1": "relative H1 seminorm", "max_abs": "max abs error",
           "rel_energy": "relative energy norm"}


def _fmt(v: float) -> str:
    return "n/a" if not np.isfinite(v) else f"{v:.3e}"


def summary_markdown(ds: xr.Dataset, *, title: str = "Surrogate vs solver",
                     notes: str = "") -> str:
    """The markdown summary of a comparison dataset."""
    a = ds.attrs
    lines = [f"# {title}", "",
             f"Problem: **{a.get('problem')}**, {a.get('n_samples')} samples. "
             f"Reference: `{a.get('reference')}`; candidate: `{a.get('candidate')}`.", "",
             "| metric | mean | median | p95 |", "|---|---|---|---|"]
    for m in METRICS:
        if np.isfinite(a.get(f"{m}_mean", np.nan)):
            lines.append(f"| {_LABELS[m]} | {_fmt(a[f'{m}_mean'])} | {_fmt(a[f'{m}_median'])} | "
                         f"{_fmt(a[f'{m}_p95'])} |")
    ref_t = float(ds["reference_time"].mean())
    cand_t = float(ds["candidate_time"].mean())
    lines += ["", "| speed | seconds per sample |", "|---|---|",
              f"| reference | {_fmt(ref_t)} |", f"| candidate | {_fmt(cand_t)} |",
              f"| speedup (reference / candidate) | {a.get('speedup', float('nan')):.3g}x |"]
    if "warm_iterations" in ds:
        zi, wi = ds["reference_iterations"].values, ds["warm_iterations"].values
        zt, wt = ds["reference_time"].values, ds["warm_time"].values
        lines += ["", "Warm start of the reference solver from the candidate's prediction:", "",
                  "| | from zero | warm start | saving |", "|---|---|---|---|",
                  f"| iterations (mean) | {zi.mean():.1f} | {wi.mean():.1f} | "
                  f"{1 - wi.sum() / max(zi.sum(), 1):.1%} |",
                  f"| solve time (s, mean) | {zt.mean():.3e} | {wt.mean():.3e} | "
                  f"{1 - wt.sum() / zt.sum():.1%} |",
                  f"| solve + inference time (s, mean) | {zt.mean():.3e} | "
                  f"{(wt + ds['candidate_time'].values).mean():.3e} | "
                  f"{1 - (wt + ds['candidate_time'].values).sum() / zt.sum():.1%} |"]
    worst = ds["rel_l2"].fillna(-1).argsort().values[::-1][:5]
    lines += ["", "Worst samples (relative L2): " + ", ".join(
        f"{int(ds['sample'].values[i])} ({_fmt(float(ds['rel_l2'].values[i]))})" for i in worst)]
    if notes:
        lines += ["", notes]
    return "\n".join(lines) + "\n"


def _savefig(fig: Any, path: Path, **kwargs: Any) -> None:
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=path.suffix.lstrip("."), **kwargs)


def _plots(ds: xr.Dataset, out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    metrics = [m for m in ("rel_l2", "rel_h1", "rel_energy") if np.isfinite(ds[m].values).any()]
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.5 * len(metrics), 3.6), squeeze=False)
    for ax, m in zip(axes[0], metrics, strict=True):
        v = ds[m].values[np.isfinite(ds[m].values)]
        ax.hist(v, bins=min(30, max(5, len(v) // 3)), color="tab:blue", alpha=0.8)
        ax.axvline(v.mean(), color="k", ls="--", label=f"mean {v.mean():.2e}")
        ax.set_xlabel(_LABELS[m])
        ax.set_ylabel("samples")
        ax.legend(fontsize=8)
    fig.suptitle(f"{ds.attrs.get('candidate')} vs {ds.attrs.get('reference')}")
    fig.tight_layout()
    written.append(out / "error_histogram.png")
    _savefig(fig, written[-1], dpi=110)
    plt.close(fig)

    if "candidate" in ds:
        worst = ds["rel_l2"].fillna(-1).argsort().values[::-1][:3]
        fig, axes = plt.subplots(len(worst), 4, figsize=(14, 3.2 * len(worst)), squeeze=False)
        titles = ("input", "reference", "candidate", "candidate - reference")
        for row, i in enumerate(worst):
            fields = [ds["input"].values[i], ds["reference"].values[i], ds["candidate"].values[i]]
            fields.append(fields[2] - fields[1])
            label = f"sample {int(ds['sample'].values[i])}, rel L2 {ds['rel_l2'].values[i]:.2e}"
            for col, (ax, f) in enumerate(zip(axes[row], fields, strict=True)):
                if f.ndim == 1:
                    x = np.arange(len(f)) / len(f)
                    ax.plot(x, f, lw=1)
                    if col == 2:
                        ax.plot(x, fields[1], lw=1, ls="--", color="gray", label="reference")
                        ax.legend(fontsize=7)
                    ax.set_xlabel("x")
                else:
                    vmax = np.abs(f).max() if col == 3 else None
                    im = ax.imshow(f.T, origin="lower", extent=(0, 1, 0, 1),
                                   cmap="RdBu_r" if col == 3 else "viridis",
                                   vmin=-vmax if vmax else None, vmax=vmax)
                    fig.colorbar(im, ax=ax, fraction=0.046)
                ax.set_title(f"{titles[col]}\n{label}" if col == 0 else titles[col], fontsize=9)
        fig.tight_layout()
        written.append(out / "worst_samples.png")
        _savefig(fig, written[-1], dpi=100)
        plt.close(fig)

    fig, ax = plt.subplots(figsize=(5.5, 4))
    ref_t = ds["reference_time"].values
    if np.isfinite(ref_t).any():
        ax.axvline(float(np.nanmedian(ref_t)), color="k", ls="--",
                   label=f"reference solver, median {np.nanmedian(ref_t):.2e} s")
    if "warm_time" in ds:
        warm = ds["warm_time"].values + ds["candidate_time"].values
        ax.axvline(float(np.median(warm)), color="tab:green", ls=":",
                   label=f"surrogate + warm-started solve, median {np.median(warm):.2e} s")
    ax.scatter(ds["candidate_time"], ds["rel_l2"], s=12, label="candidate", color="tab:orange")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("wall time per sample (s)")
    ax.set_ylabel("relative L2 error vs reference")
    ax.set_title(f"accuracy vs cost (speedup {ds.attrs.get('speedup', np.nan):.3g}x)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    written.append(out / "accuracy_vs_cost.png")
    _savefig(fig, written[-1], dpi=110)
    plt.close(fig)

    if "warm_iterations" in ds:
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
        idx = np.arange(ds.sizes["sample"])
        axes[0].bar(idx - 0.2, ds["reference_iterations"], width=0.4, label="from zero")
        axes[0].bar(idx + 0.2, ds["warm_iterations"], width=0.4, label="warm start")
        axes[0].set_xlabel("sample (position)")
        axes[0].set_ylabel("Krylov iterations")
        axes[0].legend(fontsize=8)
        saved = ds["reference_time"].values - ds["warm_time"].values - ds["candidate_time"].values
        axes[1].bar(idx, saved, color=np.where(saved > 0, "tab:green", "tab:red"))
        axes[1].axhline(0, color="k", lw=0.8)
        axes[1].set_xlabel("sample (position)")
        axes[1].set_ylabel("time saved incl. inference (s)")
        fig.suptitle("warm start of the reference solver from the candidate")
        fig.tight_layout()
        written.append(out / "warm_start.png")
        _savefig(fig, written[-1], dpi=110)
        plt.close(fig)
    return written


def write_report(ds: xr.Dataset, out_dir: str | os.PathLike[str], *, title: str = "Surrogate vs solver",
                 notes: str = "") -> dict[str, Any]:
    """Write ``comparison.nc``, ``summary.md`` and the PNG plots into ``out_dir``.

    Returns
    -------
    dict with the paths written (``"netcdf"``, ``"summary"``, ``"plots"``) and the summary text.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plots = _plots(ds, out)
    nc = out / "comparison.nc"
    slim = ds.drop_vars([v for v in ("input", "reference", "candidate") if v in ds])
    with atomic_path(nc) as tmp:
        slim.to_netcdf(tmp)
    text = summary_markdown(ds, title=title, notes=notes)
    write_text_atomic(out / "summary.md", text)
    return {"netcdf": nc, "summary": out / "summary.md", "plots": plots, "text": text}
