"""The fair verdict's part of a comparison report: the verdict and the ladder table, read
from a comparison dataset's ``fair_*`` attributes and ``ladder_*`` variables (forward and
inverse reports alike)."""

from __future__ import annotations

import numpy as np
import xarray as xr

from .fair import busy_note

__all__ = ["device_ladder_lines", "fmt", "ladder_lines"]


def fmt(v: float) -> str:
    """A number for a report: three significant digits, ``n/a`` when not finite."""
    return "n/a" if not np.isfinite(v) else f"{v:.3e}"


def ladder_lines(ds: xr.Dataset) -> list[str]:
    """The fair verdict (from the dataset's ``fair_*`` attributes) and the ladder table."""
    a = ds.attrs
    lines = ["", "## The fair verdict: surrogate on the solver's accuracy-cost front", "",
             f"Errors against {a.get('fair_truth', 'the stored solutions on the model grid')}; "
             f"the surrogate's own error there is {fmt(a['fair_error'])} (mean). Times per sample "
             f"{a.get('fair_where', '')}: each rung's answer brought to the comparison grid "
             "(spectral interpolation on periodic grids, bilinear on node grids), its cost "
             "included.", "",
             "| rung | on front | rel. L2 (mean) | p10-p90 | ms per sample, batch | "
             "ms, one per call |", "|---|---|---|---|---|---|"]
    err = ds["ladder_rel_l2"].values
    t = ds["ladder_time"].values
    t1 = ds["ladder_time_batch1"].values if "ladder_time_batch1" in ds else None
    for i, label in enumerate(ds["rung"].values):
        one = f"{1e3 * t1[i].mean():.3g}" if t1 is not None else "n/a"
        lines.append(f"| {label} | {'yes' if ds['on_front'].values[i] else ''} | "
                     f"{err[i].mean():.2e} | {np.percentile(err[i], 10):.1e}-"
                     f"{np.percentile(err[i], 90):.1e} | {1e3 * t[i].mean():.3g} | {one} |")
    tr = ds["truth_rel_l2"].values
    lines.append(f"| **surrogate** | | {tr.mean():.2e} | {np.percentile(tr, 10):.1e}-"
                 f"{np.percentile(tr, 90):.1e} | {1e3 * a['fair_surrogate_time']:.3g} | "
                 f"{1e3 * a.get('fair_batch1_surrogate_time', np.nan):.3g} |")
    if a.get("fair_skipped_rungs"):
        why = ("the climb had used its time budget of "
               f"{a.get('fair_ladder_budget_s', np.nan):.3g} s"
               if a.get("fair_stopped") == "budget" else
               "a rung both more accurate and slower than the surrogate already decides both "
               "placements")
        lines += ["", f"Not run ({why}): {a['fair_skipped_rungs']}."]
    cost = a.get("fair_equal_cost_rung") or ""
    lines += ["", ("At equal cost: " + (f"the best rung within the surrogate's time is {cost} "
                                         f"(rel. L2 {fmt(a['fair_equal_cost_error'])})."
                                         if cost else "every rung takes longer than the "
                                         "surrogate."))]
    if "verdict_break_even" in a:
        lines += ["", a["verdict_break_even"]]
    if "verdict_batch1" in a:
        lines += ["", a["verdict_batch1"]]
        if "verdict_batch1_break_even" in a:
            lines += ["", a["verdict_batch1_break_even"]]
    if "verdict_all_cores" in a:
        lines += ["", a["verdict_all_cores"]]
        if "verdict_all_cores_break_even" in a:
            lines += ["", a["verdict_all_cores_break_even"]]
    elif a.get("fair_all_cores_left_out"):
        lines += ["", a["fair_all_cores_left_out"]]
    note = busy_note(float(a.get("cpu_load_1min", np.nan)), int(a.get("cpu_count", 1)))
    if note:
        lines += ["", note]
    return lines + device_ladder_lines(ds)


def device_ladder_lines(ds: xr.Dataset) -> list[str]:
    """The like-for-like part (:mod:`.fair_device`): the twins' ladder on the surrogate's
    device (or the one asked for), its table and verdicts; nothing when it was not measured."""
    a = ds.attrs
    if "verdict_device" not in a:
        return []
    lines = ["", "### The solver's torch twins on the same device", "",
             f"The same rungs solved by the solver's torch twins ({a['fair_device']}), "
             f"{a.get('fair_device_where', '')}; errors against the same truth.", "",
             "| rung | rel. L2 (mean) | ms per sample, batch | ms, one per call |",
             "|---|---|---|---|"]
    err, t = ds["device_ladder_rel_l2"].values, ds["device_ladder_time"].values
    t1 = ds["device_ladder_time_batch1"].values if "device_ladder_time_batch1" in ds else None
    for i, label in enumerate(ds["device_rung"].values):
        one = f"{1e3 * t1[i].mean():.3g}" if t1 is not None else "n/a"
        lines.append(f"| {label} | {err[i].mean():.2e} | {1e3 * t[i].mean():.3g} | {one} |")
    lines += ["", a["verdict_device"]]
    if "verdict_device_batch1" in a:
        lines += ["", a["verdict_device_batch1"]]
    if a.get("fair_device_missing_rungs"):
        lines += ["", f"Rungs without a torch twin (not measured there): "
                      f"{a['fair_device_missing_rungs']}."]
    return lines
