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

from solvers.problems import PROBLEMS, get_problem

from ..files import atomic_path, write_text_atomic
from ..metrics import worse_than_zero_note
from . import plots
from .comparison import METRICS
from .fair_report import fmt as _fmt
from .fair_report import ladder_lines
from .inverse_report import inverse_plots, inverse_summary_markdown

__all__ = ["ladder_lines", "summary_markdown", "usability", "write_report"]

_LABELS = {"rel_l2": "relative L2", "rel_h1": "relative H1 seminorm", "max_abs": "max abs error",
           "rel_energy": "relative energy norm"}


def usability(mean_rel_l2: float) -> str:
    """One plain sentence judging a mean relative L2 error (forward problems)."""
    if not np.isfinite(mean_rel_l2):
        return "Verdict on accuracy: no finite error was measured."
    if mean_rel_l2 >= 0.5:
        return (f"Verdict on accuracy: unusable as a solver (mean relative L2 {mean_rel_l2:.2g}: "
                "the error is comparable to the solution itself).")
    if mean_rel_l2 >= 0.1:
        return (f"Verdict on accuracy: poor (mean relative L2 {mean_rel_l2:.2g}); qualitative "
                "trends at best.")
    if mean_rel_l2 >= 0.01:
        return (f"Verdict on accuracy: {100 * mean_rel_l2:.2g} % mean relative L2 error; compare "
                "with the solver ladder below before using it in place of the solver.")
    return (f"Verdict on accuracy: {100 * mean_rel_l2:.2g} % mean relative L2 error; see the "
            "solver ladder below for what a cheaper solver setting reaches.")


def summary_markdown(ds: xr.Dataset, *, title: str = "Surrogate vs solver",
                     notes: str = "") -> str:
    """The markdown summary of a comparison dataset.

    Every number it prints is read from ``ds`` (its attributes and variables), the same
    source as the plot titles and the command line's messages.
    """
    a = ds.attrs
    lines = [f"# {title}", ""]
    if "verdict_device" in a and str(a.get("fair_device")).startswith("cuda"):
        # like for like first: the solver's twin on the surrogate's GPU (on a CPU the numpy
        # solver on one thread is the like-for-like figure; the twin's is in its section)
        lines += [a["verdict_device"], ""]
    if "verdict" in a:
        lines += [a["verdict"], ""]
    lines += [usability(float(a.get("rel_l2_mean", np.nan))), ""]
    if a.get("seen_warning"):  # samples the run trained on: said before any number
        lines += [f"**Warning:** {a['seen_warning']}", ""]
    lines += [f"Problem: **{a.get('problem')}**, {a.get('n_samples')} samples. "
              f"Reference: `{a.get('reference')}`; candidate: `{a.get('candidate')}`.", "",
              "| metric (against the reference solver) | mean | median | p95 |",
              "|---|---|---|---|"]
    for m in METRICS:
        if np.isfinite(a.get(f"{m}_mean", np.nan)):
            lines.append(f"| {_LABELS[m]} | {_fmt(a[f'{m}_mean'])} | {_fmt(a[f'{m}_median'])} | "
                         f"{_fmt(a[f'{m}_p95'])} |")
    ref_t = float(a.get("reference_time_median", ds["reference_time"].mean()))
    cand_t = float(a.get("candidate_time_median", ds["candidate_time"].mean()))
    basis = a.get("speedup_basis", "one timing of all samples")
    # Against the reference at its own accuracy: not the fair verdict (equal accuracy), which
    # opens the summary; labelled so that the two figures are not read as one.
    lines += ["", f"| speed against the reference solver ({basis}) | seconds per sample |",
              "|---|---|", f"| reference | {_fmt(ref_t)} |", f"| candidate | {_fmt(cand_t)} |",
              f"| reference / candidate, at unequal accuracy (not the verdict) | "
              f"{a.get('speedup', float('nan')):.3g}x |"]
    if "warm_iterations" in ds:
        zi, wi = ds["reference_iterations"].values, ds["warm_iterations"].values
        zt, wt = ds["reference_time"].values, ds["warm_time"].values
        lines += ["", "Warm start of the reference solver from the candidate's prediction "
                  "(a negative saving means slower than starting from zero):", "",
                  "| | from zero | warm start | saving |", "|---|---|---|---|",
                  f"| iterations (mean) | {zi.mean():.1f} | {wi.mean():.1f} | "
                  f"{1 - wi.sum() / max(zi.sum(), 1):.1%} |",
                  f"| solve time (s, mean) | {zt.mean():.3e} | {wt.mean():.3e} | "
                  f"{1 - wt.sum() / zt.sum():.1%} |",
                  f"| solve + inference time (s, mean) | {zt.mean():.3e} | "
                  f"{(wt + ds['candidate_time'].values).mean():.3e} | "
                  f"{1 - (wt + ds['candidate_time'].values).sum() / zt.sum():.1%} |"]
    if "ladder_rel_l2" in ds:
        lines += ladder_lines(ds)
    worst = ds["rel_l2"].fillna(-1).argsort().values[::-1][:5]
    lines += ["", "Worst samples (relative L2): " + ", ".join(
        f"{int(ds['sample'].values[i])} ({_fmt(float(ds['rel_l2'].values[i]))})" for i in worst)]
    note = worse_than_zero_note(float(a.get("rel_l2_mean", np.nan)), who="the candidate")
    if note:
        lines += ["", note]
    if notes:
        lines += ["", notes]
    return "\n".join(lines) + "\n"


def _plots(ds: xr.Dataset, out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = [plots.error_histograms(ds, out / "error_histogram.png", plt)]
    if "candidate" in ds:
        written.append(plots.worst_samples(ds, out / "worst_samples.png", plt))
    written.append(plots.accuracy_vs_cost(ds, out / "accuracy_vs_cost.png", plt))
    if "warm_iterations" in ds:
        written.append(plots.warm_start_bars(ds, out / "warm_start.png", plt))
    return written


def write_report(ds: xr.Dataset, out_dir: str | os.PathLike[str], *,
                 title: str = "Surrogate vs solver", notes: str = "") -> dict[str, Any]:
    """Write ``comparison.nc``, ``summary.md`` and the PNG plots into ``out_dir``.

    Returns
    -------
    dict with the paths written (``"netcdf"``, ``"summary"``, ``"plots"``) and the summary text.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    inverse = ds.attrs.get("problem") in PROBLEMS and get_problem(ds.attrs["problem"]).inverse
    if inverse:

        plots = inverse_plots(ds, out)
        text = inverse_summary_markdown(ds, title=title, notes=notes)
    else:
        plots = _plots(ds, out)
        text = summary_markdown(ds, title=title, notes=notes)
    nc = out / "comparison.nc"
    fields = ("input", "reference", "candidate", "truth", "observation", "coefficient")
    slim = ds.drop_vars([v for v in fields if v in ds])
    with atomic_path(nc) as tmp:
        slim.to_netcdf(tmp)
    write_text_atomic(out / "summary.md", text)
    return {"netcdf": nc, "summary": out / "summary.md", "plots": plots, "text": text}
