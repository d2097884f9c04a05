"""Stage ``verdicts``: every zoo model's fair verdict on the GPU, like for like, in one call.

For each forward zoo model the first test samples of its card's dataset are regenerated from
their seeds (:func:`~neuralop_fem.data.generation.generate_samples`, the same samples as the
file's to round-off) and ``compare zoo:NAME --device cuda`` runs on them: the surrogate on the
GPU against (a) the solver's torch twins on the same GPU (the like-for-like verdict,
:mod:`~neuralop_fem.evaluation.fair_device`), (b) the numpy solvers on all cores and (c) on one
thread. The stage writes each model's verdict lines (``verdicts.{json,md}``); a model the
budget leaves no time for is listed as skipped, and ``--select NAME,NAME`` runs only those
(a second call for the rest). With ``--rehearse``: one model on two samples, twins on the CPU.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path
from typing import Any

from neuralop_fem.data.generation import config_class, generate_samples
from neuralop_fem.data.io import save_dataset
from neuralop_fem.evaluation import compare_run
from neuralop_fem.zoo import read_card

from .machine import Deadline

__all__ = ["MODELS", "SAMPLES", "run"]

log = logging.getLogger("campaign.verdicts")

#: The forward zoo models (the inverse one has no torch twin: its CPU verdict is the card's).
MODELS = ("burgers-fno", "burgers-fourier", "burgers-galerkin", "darcy-fno", "darcy-galerkin")
#: Test samples per model (the cards' verdicts: the first 16 of the test split).
SAMPLES = 16
#: Seconds a model's comparison is allowed at most before the next is skipped (the slowest,
#: Darcy at 421 with its FD ladder, took about 2 minutes on one CPU core).
PER_MODEL_S = 150.0
#: The verdict lines kept per model, in the order a report prints them.
LINES = ("verdict_device", "verdict_device_batch1", "verdict", "verdict_batch1",
         "verdict_all_cores", "fair_all_cores_left_out", "verdict_break_even")


def _samples(name: str, n: int, work: Path) -> Path:
    """The first ``n`` test samples of the zoo model's dataset, regenerated, as a file."""
    card = read_card(name)
    settings = dict(card["data"]["settings"])
    fixed = {k: settings.pop(k) for k in ("problem", "resolution", "dataset_seed", "dtype")}
    config = config_class(fixed["problem"]).from_stored(settings)
    ds = generate_samples(fixed["problem"], card["test"]["indices"][:n],
                          resolution=fixed["resolution"], seed=fixed["dataset_seed"],
                          config=config, dtype=fixed["dtype"])
    path = work / "verdicts" / f"{name}_test{n}.nc"
    path.parent.mkdir(parents=True, exist_ok=True)
    save_dataset(ds, path, dtype=fixed["dtype"], overwrite=True)
    return path


def _verdict(name: str, args: argparse.Namespace, n: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    data = _samples(name, n, args.work)
    twins = "cpu" if args.rehearse else None  # None: the surrogate's GPU
    report = compare_run(f"zoo:{name}", data=data, out=args.work / "verdicts" / name,
                         indices="all", device=args.device, solver_device=twins,
                         overwrite=True, workers=1 if args.rehearse else None,
                         ladder_budget=1.0 if args.rehearse else 2.0)
    attrs = report["dataset"].attrs
    row: dict[str, Any] = {"model": name, "status": "ok", "samples": n,
                           "seconds": round(time.perf_counter() - t0, 1)}
    row.update({k: str(attrs[k]) for k in LINES if attrs.get(k)})
    for key in ("fair_device_speedup", "fair_speedup", "fair_all_cores_speedup"):
        if key in attrs:
            row[key] = float(attrs[key])
    return row


def run(args: argparse.Namespace, deadline: Deadline, out: Path) -> tuple[dict, list[str], int]:
    names = MODELS[:1] if args.rehearse else MODELS
    if args.select:
        names = tuple(n.strip() for n in args.select.split(","))
    n = 2 if args.rehearse else SAMPLES
    rows = []
    for name in names:
        if deadline.left() < (30.0 if args.rehearse else PER_MODEL_S):
            rows.append({"model": name, "status": "skipped (time budget)"})
            continue
        log.info("%s: %d regenerated test samples, compare on %s", name, n, args.device)
        rows.append(_verdict(name, args, n))
    title = f"# GPU campaign: verdicts{' (rehearsal: not a measurement)' if args.rehearse else ''}"
    lines = [title, "", f"The first {n} test samples of each zoo model's dataset, regenerated; "
             f"`compare zoo:NAME --device {args.device}`. Each line names its hardware.", ""]
    for row in rows:
        lines += [f"## {row['model']}", ""]
        for text in [row[k] for k in LINES if k in row] or [row["status"]]:
            lines += [text, ""]
    finished = all(r["status"] == "ok" for r in rows)
    return {"device": args.device, "rows": rows, "finished": finished}, lines, 0
