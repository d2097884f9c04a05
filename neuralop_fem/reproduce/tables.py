"""The tables of ``reproduction.md``: rows that differ only in the seed, as one line.

:func:`aggregate` groups the rows of ``reproduction.json`` by everything but the seed and gives
the mean and spread over the seeds of the test error per resolution; :func:`markdown` writes
them beside the paper's numbers (each problem's reproduction entry,
:func:`~neuralop_fem.reproduce.rows.paper_value`), followed by the goals beyond the paper and
whether the rows meet them (:mod:`~neuralop_fem.reproduce.goals`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ..runs.train_config import RESUME_FREE_FIELDS, added_defaults, recorded_float32_parts
from .goals import goals_markdown, load_goals
from .rows import paper_value

__all__ = ["aggregate", "group_key", "markdown"]


def group_key(entry: dict[str, Any]) -> str:
    """Rows that differ only in the seed share this key.

    Rows on a regeneration of the same data (``data["same_values_as"]``: other checksum, the
    same values up to rounding) count as on that data.

    Training settings added after a row was trained (absent from its ``train_config``) count
    as what such a run did: their defaults, or the value recorded before a default changed
    (``amp``: ``"none"``, :func:`~neuralop_fem.training.config.added_defaults`). bf16 rows
    also differ in what their training kept in float32
    (:func:`~neuralop_fem.training.config.recorded_float32_parts`).
    """
    recorded = entry["train_config"]  # the resume-free fields: where it ran, not what it learned
    train = {k: v for k, v in {**added_defaults(recorded), **recorded}.items()
             if k not in ("seed", *RESUME_FREE_FIELDS)}
    data = entry["data"]
    data_id = (data.get("same_values_as") or {}).get("checksum") or data["checksum"]
    parts = recorded_float32_parts(train.get("amp"), entry.get("precision"))
    return json.dumps([entry["preset"], entry["mode"], data_id, entry["model_config"], train,
                       parts], sort_keys=True)


def aggregate(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One summary per group: the mean and spread over seeds of the test error per resolution."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for e in entries:
        groups.setdefault(group_key(e), []).append(e)
    out = []
    for members in groups.values():
        first = members[0]
        per_n = {}
        for n in first["errors"]:
            vals = np.array([m["errors"][n]["rel_l2"]["mean"] for m in members if n in m["errors"]])
            h1 = np.array([m["errors"][n]["rel_h1"]["mean"] for m in members if n in m["errors"]])
            per_n[n] = {"mean": float(vals.mean()), "std": float(vals.std(ddof=1)) if len(vals) > 1
                        else float("nan"), "min": float(vals.min()), "max": float(vals.max()),
                        "h1_mean": float(h1.mean()), "zero_shot": first["errors"][n]["zero_shot"]}
        out.append({"preset": first["preset"], "mode": first["mode"], "task": first["task"],
                    "label": first.get("label", ""), "data": first["data"],
                    "noise": first.get("noise"), "seeds": sorted(m["seed"] for m in members),
                    "errors": per_n, "n_parameters": first["n_parameters"],
                    "train_hours": float(np.mean([m["train_wall_time_s"] for m in members])) / 3600,
                    "device": first["device"], "keys": [m["key"] for m in members]})
    return sorted(out, key=lambda g: (g["task"], g["preset"], g["label"]))


def _fmt_group(g: dict[str, Any], n: str) -> str:
    e = g["errors"][n]
    spread = (f" ± {e['std']:.2e} ({e['min']:.3e}-{e['max']:.3e})" if len(g["seeds"]) > 1
              else " (one seed)")
    paper = paper_value(g["task"], g["preset"], n, g.get("noise"))
    data = Path(g["data"]["path"]).stem
    shot = "zero-shot" if e["zero_shot"] else "trained"
    recipe = g["label"] or g["mode"]
    if g.get("noise") is not None:
        recipe += f", noise {g['noise']:g}"
    return (f"| {g['preset']} | {recipe} | {data} | {n} ({shot}) | "
            f"{e['mean']:.3e}{spread} | {'-' if paper is None else f'{paper:.3e}'} | "
            f"{e['h1_mean']:.2e} | {len(g['seeds'])} | {g['train_hours']:.2f} h | {g['device']} |")


def markdown(results: dict[str, Any]) -> str:
    """``reproduction.md``: one line per (group, resolution), then the goals beyond the paper
    (:mod:`~neuralop_fem.reproduce.goals`) if the results name any; details in the JSON."""
    groups = aggregate(list(results["runs"].values()))
    lines = [
        "# Reproduction of Cao 2021 (Tables 2a/2b/3)", "",
        "Relative L2 test error (mean over the test samples) of the model selected on the",
        "validation split (the paper selected on the test set), as the mean over training seeds",
        "± the standard deviation (min-max). `trained`: evaluated at the training resolution;",
        "`zero-shot`: the same weights evaluated on a finer grid without retraining. Burgers",
        "data `nugt` = viscosity 0.1/(2 pi), the value the paper states (its data section);",
        "`nufno` = 0.1 (the FNO paper's, a much easier problem: not comparable to the paper).",
        "Every row of reproduction.json records the dataset seed, checksum and sketch, the code",
        "commit, the commands to rerun it, hardware and threads. `neuralop-fem reproduce",
        "check-data FILE` checks a regenerated dataset against the rows (bit for bit, or to",
        "rounding where another CPU rounds the last bits differently).", "",
        "| preset | recipe | data | n | ours rel. L2 (mean over seeds) | paper | rel. H1 | seeds |"
        " train time per seed | device |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for g in groups:
        for n in g["errors"]:
            lines.append(_fmt_group(g, n))
    lines += ["", "Train time: wall time of one training run (per-epoch validation included); CPU "
              "runs share a 2-core machine with other jobs unless the row says otherwise.", ""]
    lines += goals_markdown(load_goals(results), groups)
    return "\n".join(lines)
