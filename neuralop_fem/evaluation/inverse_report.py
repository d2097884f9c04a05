"""The report of an inverse-problem comparison: markdown summary and plots (matplotlib Agg).

:func:`~neuralop_fem.evaluation.report.write_report` calls these for a dataset from
:func:`~neuralop_fem.evaluation.inverse_comparison.compare_inverse`:

    summary.md              errors, misfit, PDE solves and time of each approach; the verdict
    inverse_coefficients.png  truth / surrogate / classical / warm-started coefficient for the
                            worst and the median sample (by the surrogate's error)
    misfit_vs_solves.png    final data misfit against PDE solves, one point per sample
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import numpy as np
import xarray as xr

from ..metrics import worse_than_zero_note
from ..plotting import fit_title, log_axis, save
from .fair_report import ladder_lines

__all__ = ["inverse_plots", "inverse_summary_markdown"]

_LABEL = {"surrogate": "surrogate alone", "classical": "classical inversion",
          "warm_started": "inversion warm-started from the surrogate"}
_ROWS = (("rel_l2", "coefficient rel. L2 (observation grid)", "{:.3e}"),
         ("rel_l2_coarse", "coefficient rel. L2 (coarse grid)", "{:.3e}"),
         ("misclassified", "misclassified phase fraction", "{:.2%}"),
         ("misfit", "data misfit ||F(a) - u|| / ||u||", "{:.2e}"),
         ("equivalent_solves", "PDE solves (observation-grid equivalents)", "{:.1f}"),
         ("iterations", "L-BFGS-B iterations on the observation grid", "{:.1f}"),
         ("pde_solves", "PDE solves (all grids)", "{:.1f}"),
         ("time", "wall time per sample (s, incl. inference)", "{:.3g}"))


def _mean(ds: xr.Dataset, metric: str, approach: str) -> float:
    v = ds[metric].sel(approach=approach).values
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else float("nan")


def _verdict(ds: xr.Dataset) -> list[str]:
    """Plain statements: which answer is better on which metric, and what each costs."""
    approaches = list(ds["approach"].values)
    out = []
    s_c = _mean(ds, "rel_l2_coarse", "surrogate")
    c_c = _mean(ds, "rel_l2_coarse", "classical")
    if np.isfinite(s_c) and np.isfinite(c_c):
        better = "better" if s_c < c_c else "worse"
        out.append(f"- On the coarse grid the surrogate alone is {better} than the classical "
                   f"inversion ({s_c:.3e} vs {c_c:.3e}), at {_mean(ds, 'time', 'surrogate'):.3g} s "
                   f"instead of {_mean(ds, 'time', 'classical'):.3g} s per sample.")
    s_m, c_m = _mean(ds, "misfit", "surrogate"), _mean(ds, "misfit", "classical")
    noise = float(np.mean(ds["noise_level"].values))
    fit = (f"reproduces the observations to a relative misfit of {s_m:.2e}" if np.isfinite(s_m)
           else "is <= 0 at some nodes, so its data misfit is undefined")
    out.append(f"- Consistency with the data: the surrogate's coefficient {fit}; the inversion "
               f"reaches {c_m:.2e} (noise level {noise:.2e}).")
    s_f, c_f = _mean(ds, "rel_l2", "surrogate"), _mean(ds, "rel_l2", "classical")
    out.append(f"- Fine-grid detail: observation-grid error {s_f:.3e} (surrogate, interpolated "
               f"from its coarse grid) vs {c_f:.3e} (inversion).")
    if "warm_started" in approaches:
        out.append(_warm_verdict(ds, c_f))
    for a in ("classical", "warm_started"):
        failed = int(ds.attrs.get(f"{a}_failed", 0))
        if failed:
            out.append(f"- The {_LABEL[a]} failed on {failed} sample(s) (stop reason `failed`; "
                       "NaN there, left out of the means).")
    return out


def _warm_verdict(ds: xr.Dataset, c_f: float) -> str:
    """The warm start's saving, only over samples where both runs met the same stopping rule."""
    w_f = _mean(ds, "rel_l2", "warm_started")
    phases = ds.attrs.get("warm_phases", "none")
    start = "" if phases == "none" else f" (from the surrogate snapped to {phases})"
    n = int(ds.sizes["sample"])
    same = int(ds.attrs.get("comparable_samples", n))
    caps = [f"the {_LABEL[a]} in {int(ds.attrs.get(f'{a}_at_cap', 0))} of {n} samples"
            for a in ("classical", "warm_started") if int(ds.attrs.get(f"{a}_at_cap", 0))]
    cap_text = (f" Stopped at the iteration cap (maxiter) instead of the stopping rule: "
                f"{'; '.join(caps)}; raise it (`--maxiter`, or "
                f"DarcyInverseSolver(maxiter=...)) to compare those." if caps else "")
    if same == 0:
        return (f"- Warm start{start}: no saving in PDE solves is reported: on no sample did "
                f"both inversions end by the same stopping rule (discrepancy principle or "
                f"misfit_tol), so their solve counts measure different things.{cap_text} "
                f"Errors: {w_f:.3e} (warm-started) vs {c_f:.3e} (classical).")
    where = "" if same == n else f" on the {same} of {n} samples where both met the stopping rule"
    solves = _factor(float(ds.attrs.get("solve_ratio", float("nan"))), "fewer", "more")
    time = _factor(float(ds.attrs.get("time_ratio", float("nan"))), "less", "more")
    return (f"- Warm start{start}{where}: {solves} PDE solves and {time} wall time (inference "
            f"included) than the default start; its error {w_f:.3e} vs {c_f:.3e}."
            f"{_fewer_solves_more_time(ds)}{cap_text}")


def _fewer_solves_more_time(ds: xr.Dataset) -> str:
    """Why fewer PDE solves can take longer: where the two starts spend their iterations."""
    ratio, t_ratio = (float(ds.attrs.get(k, float("nan"))) for k in ("solve_ratio", "time_ratio"))
    i_c, i_w = (float(ds.attrs.get(f"{a}_comparable_iterations", float("nan")))
                for a in ("classical", "warm_started"))
    if not (ratio > 1 > t_ratio and i_w > i_c):
        return ""
    return (f" Fewer solves but more time: the warm start makes all its L-BFGS-B iterations on "
            f"the observation grid ({i_w:.1f} on average against {i_c:.1f} there for the default "
            "start, which does most of its work on coarser grids), and each iteration there also "
            "pays for L-BFGS-B's own update of every unknown, which the solve count leaves out.")


def _factor(ratio: float, fewer: str, more: str) -> str:
    """``2.00x fewer`` for a ratio >= 1, ``1.23x more`` below (a warm start that costs more)."""
    if np.isfinite(ratio) and 0 < ratio < 1:
        return f"{1 / ratio:.2f}x {more}"
    return f"{ratio:.2f}x {fewer}"


def inverse_summary_markdown(ds: xr.Dataset, *, title: str, notes: str = "") -> str:
    """The markdown summary of an inverse comparison (means over the samples)."""
    approaches = list(ds["approach"].values)
    head = "| | " + " | ".join(_LABEL.get(a, a) for a in approaches) + " |"
    lines = [f"# {title}", ""]
    if "verdict" in ds.attrs:
        lines += [ds.attrs["verdict"], ""]
    lines += [f"Inverse Darcy problem, {ds.attrs.get('n_samples')} samples. Reference: "
             f"`{ds.attrs.get('reference')}`; candidate: `{ds.attrs.get('candidate')}`. "
             "Means over the samples.", "", head, "|---" * (len(approaches) + 1) + "|"]
    for metric, label, fmt in _ROWS:
        cells = [fmt.format(v) if np.isfinite(v := _mean(ds, metric, a)) else "n/a"
                 for a in approaches]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    if "stop_reason" in ds:
        for a in approaches:
            reasons = [r for r in ds["stop_reason"].sel(approach=a).values if r]
            if reasons:
                kinds, counts = np.unique(reasons, return_counts=True)
                lines.append("")
                lines.append(f"Stop reasons ({_LABEL.get(a, a)}): " + ", ".join(
                    f"{k} {c}" for k, c in zip(kinds, counts, strict=True)))
    lines += ["", "What the numbers say:", "", *_verdict(ds)]
    if "verdict" in ds.attrs:
        lines += ladder_lines(ds)
    note = worse_than_zero_note(_mean(ds, "rel_l2_coarse", "surrogate"), who="the surrogate")
    if note:
        lines += ["", note]
    if notes:
        lines += ["", notes]
    return "\n".join(lines) + "\n"


def _coefficient_panels(ds: xr.Dataset, out: Path, plt: ModuleType) -> Path:
    err = ds["rel_l2"].sel(approach="surrogate").values
    order = np.argsort(err)
    worst, median = int(order[-1]), int(order[(len(order) - 1) // 2])
    picks = [("worst", worst)] + ([("median", median)] if median != worst else [])
    approaches = list(ds["approach"].values)
    cols = ["truth", *approaches]
    fig, axes = plt.subplots(len(picks), len(cols), figsize=(3.3 * len(cols), 3.1 * len(picks)),
                             squeeze=False, constrained_layout=True)
    truth = ds["truth"].values
    vmin, vmax = float(truth.min()), float(truth.max())
    image = None
    for row, (kind, i) in enumerate(picks):
        for col, name in enumerate(cols):
            ax = axes[row, col]
            field = truth[i] if name == "truth" else ds["coefficient"].sel(approach=name).values[i]
            image = ax.imshow(field.T, origin="lower", extent=(0, 1, 0, 1), cmap="viridis",
                              vmin=vmin, vmax=vmax)
            ax.set_xlabel("x")
            ax.set_ylabel("y")
            label = "true coefficient" if name == "truth" else _LABEL.get(name, name)
            sub = ("" if name == "truth"
                   else f"\nrel. L2 {ds['rel_l2'].sel(approach=name).values[i]:.2e}")
            ax.set_title(f"{label}{sub}", fontsize=9)
        axes[row, 0].set_ylabel(f"{kind} sample {int(ds['sample'].values[i])}\ny")
    fig.colorbar(image, ax=axes, shrink=0.8, label="coefficient a (dimensionless)")
    fig.suptitle(fit_title(f"{ds.attrs.get('candidate')} and {ds.attrs.get('reference')}: "
                           "coefficients (samples chosen by the surrogate's error)", fig),
                 fontsize=10)
    return save(fig, out / "inverse_coefficients.png", dpi=100)


def _misfit_panel(ds: xr.Dataset, out: Path, plt: ModuleType) -> Path:
    fig, ax = plt.subplots(figsize=(6.4, 4.4), constrained_layout=True)
    markers = {"surrogate": "o", "classical": "s", "warm_started": "^"}
    for a in ds["approach"].values:
        ax.scatter(ds["equivalent_solves"].sel(approach=a), ds["misfit"].sel(approach=a),
                   marker=markers.get(str(a), "x"), s=22, label=_LABEL.get(str(a), str(a)))
    noise = float(np.median(ds["noise_level"].values))
    if noise > 0:
        ax.axhline(noise, color="k", ls="--", lw=0.8, label=f"noise level (median {noise:.1e})")
    log_axis(ax, "y")
    ax.set_xlabel("PDE solves per sample (observation-grid equivalents)")
    ax.set_ylabel("final relative data misfit ||F(a) - u|| / ||u||")
    ax.set_title(fit_title(f"data misfit against work: {ds.attrs.get('candidate')} vs "
                           f"{ds.attrs.get('reference')}", fig), fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="best", framealpha=0.9)
    return save(fig, out / "misfit_vs_solves.png")


def inverse_plots(ds: xr.Dataset, out: Path) -> list[Path]:
    """Write the inverse comparison's PNGs into ``out``; return their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = [_misfit_panel(ds, out, plt)]
    if "coefficient" in ds:
        written.insert(0, _coefficient_panels(ds, out, plt))
    return written
