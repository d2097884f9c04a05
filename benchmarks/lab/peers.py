"""Our presets beside neuraloperator's example FNO on its small Darcy set (the same files, the
same metric), and which phase values reproduce that set's labels.

The files go through ``import_neuralop`` (boolean phases -> the default phase values; their
points ``x_i = i/n`` recorded, so our models pin only the first row and column). Our presets
train with ``neuralop-fem train`` on 950 of the 1000 training samples (49 validate), their FNO
on all 1000; both are scored by the mean relative L2 (= PDEBench's nRMSE) on the 50 + 50 test
samples. Our CPU seconds are the whole ``train`` command's (reading, normalisers, validation,
checkpoints, loss curve), theirs their training loop's.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path
from typing import Any

import numpy as np

from neuralop_fem.cli import main
from neuralop_fem.data.peers import import_neuralop
from neuralop_fem.evaluation import evaluate_run
from neuralop_fem.metrics import peer_metrics, relative_l2
from neuralop_fem.reproduce.results import footer
from neuralop_fem.runs import RunDir
from solvers.darcy import DarcyFDSolver

__all__ = ["FILES", "PHASE_RATIOS", "THEIRS", "fit_phases", "import_files", "markdown", "ours",
           "phase_markdown", "theirs", "verdict"]

#: neuraloperator's small Darcy files (``<name>.pt``): 1000 training samples at 16 x 16 and
#: 50 test samples at 16 and at 32.
FILES = ("darcy_train_16", "darcy_test_16", "darcy_test_32")
#: The high / low phase ratios :func:`fit_phases` tries.
PHASE_RATIOS = (5.0, 10.0, 20.0, 50.0, 1000.0)
_TESTS = ("darcy_test_16", "darcy_test_32")
#: The row name of their example FNO.
THEIRS = "neuraloperator FNO (their example)"


def import_files(data_dir: Path, work: Path) -> dict[str, Path]:
    """:data:`FILES` of ``data_dir`` imported into netCDF files in ``work``."""

    return {f: import_neuralop(data_dir / f"{f}.pt", work / f"{f}.nc") for f in FILES}


def ours(preset: str, files: dict[str, Path], work: Path, *,
         epochs: int | None = None) -> dict[str, Any]:
    """Train ``preset`` as it stands (its epochs, split, batch and learning rate; CPU) with
    the command line on the imported training file: the mean relative L2 and PDEBench metrics
    of its selected model on the two test files, the training's CPU seconds, and its epochs,
    best epoch and best validation error.

    The model sees each test file on the file's own grid (``transfer="direct"``: at 32 the
    32 x 32 data, as their FNO does); ``rel_l2_resample`` is the error of predicting on the
    16 x 16 training grid and interpolating instead (:func:`~neuralop_fem.evaluate_run`'s
    default for Darcy), which the relabelled ``i/n`` points do not suit. ``epochs``: another
    epoch count than the preset's (None).
    """

    run = work / preset
    extra = ["--epochs", str(epochs)] if epochs is not None else []
    t0 = time.process_time()
    status = main(["train", "--data", str(files["darcy_train_16"]), "--preset", preset,
                   "--out", str(run), "--device", "cpu", *extra])
    cpu = time.process_time() - t0
    if status != 0:
        return {"error": f"train exited with {status}"}
    record = RunDir(run).read()
    edges = record.normalizers.dirichlet_edges if record.normalizers else None
    out: dict[str, Any] = {
        "epochs": record.epochs_completed, "best_epoch": record.best_epoch,
        "best_val_rel_l2": record.best_val_rel_l2, "train_cpu_s": cpu,
        "parameters": record.n_parameters, "precision": dict(record.precision or {}),
        "dirichlet_edges": list(edges) if edges is not None else None,
        "train_config": dict(record.train_config or {}),
        "model_config": dict(record.model_config or {}),
        "validation_curve": _curve(run / "metrics.csv"),
    }
    for name in _TESTS:
        n = int(name[-2:])
        res = evaluate_run(run, files[name], resolution=n, indices="all", device="cpu",
                           transfer="direct")
        out[name] = {"rel_l2": res["summary"]["rel_l2"]["mean"],
                     "pdebench": res["summary"]["pdebench"]}
        if n != 16:
            res = evaluate_run(run, files[name], resolution=n, indices="all", device="cpu",
                               transfer="resample")
            out[name]["rel_l2_resample"] = res["summary"]["rel_l2"]["mean"]
    return out


def _curve(path: Path) -> list[float]:
    """The validation relative L2 of each epoch of a run's ``metrics.csv``."""
    with path.open(newline="") as fh:
        return [float(row["val_rel_l2"]) for row in csv.DictReader(fh)]


def theirs(data_dir: Path, epochs: int, seed: int) -> dict[str, Any]:
    """Their example FNO and training settings (n_modes 8, 24 channels, AdamW lr 1e-2, cosine
    schedule, batch 64, H1 loss on the normalised output) on their files; needs the
    ``neuralop`` package (ImportError without it)."""
    import neuralop
    import torch
    from neuralop.data.transforms.normalizers import UnitGaussianNormalizer
    from neuralop.losses import H1Loss
    from neuralop.models import FNO


    def load(name: str) -> tuple[torch.Tensor, torch.Tensor]:
        d = torch.load(data_dir / f"{name}.pt", weights_only=True)
        return d["x"].float()[:, None], d["y"].float()[:, None]

    torch.manual_seed(seed)
    x, y = load("darcy_train_16")
    norm = UnitGaussianNormalizer(dim=[0, 2, 3])
    norm.fit(y)
    model = FNO(n_modes=(8, 8), in_channels=1, out_channels=1, hidden_channels=24,
                projection_channel_ratio=2)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=30)
    loss = H1Loss(d=2)
    t0 = time.process_time()
    for _ in range(epochs):
        model.train()
        for idx in torch.randperm(len(x)).split(64):
            opt.zero_grad()
            loss(model(x[idx]), norm.transform(y[idx])).backward()
            opt.step()
        sched.step()
    out: dict[str, Any] = {"epochs": epochs, "train_cpu_s": time.process_time() - t0,
                           "parameters": sum(p.numel() for p in model.parameters()),
                           "neuraloperator": str(getattr(neuralop, "__version__", "unknown"))}
    model.eval()
    for name in _TESTS:
        xt, yt = load(name)
        with torch.no_grad():
            pred = norm.inverse_transform(model(xt))[:, 0].double().numpy()
        ref = yt[:, 0].double().numpy()
        out[name] = {"rel_l2": float(np.mean(relative_l2(pred, ref))),
                     "pdebench": peer_metrics(pred, ref)}
    return out


def markdown(rows: dict[str, Any], record: dict[str, Any], *, peer: str = THEIRS) -> str:
    """The results file of :func:`ours` and :func:`theirs` rows by model name, with the
    verdict of :func:`verdict` against row ``peer``."""

    lines = ["# neuraloperator's small Darcy set (16 x 16 train, tests at 16 and 32)", "",
             "Mean relative L2 (= PDEBench nRMSE) on their test files, each model fed the "
             "file's own grid (test 32 via 16: predicted on the 16 x 16 training grid and "
             "interpolated, for our models); CPU seconds of training (one thread).", "",
             "| model | epochs (best) | parameters | test 16 | test 32 | test 32 via 16 | "
             "train CPU s |", "|---|---|---|---|---|---|---|"]
    for name, row in rows.items():
        if "error" in row:
            lines.append(f"| {name} | - | - | {row['error']} | | | |")
            continue
        if "neuraloperator" in row:
            name = f"{name}, neuraloperator {row['neuraloperator']}"
        best = f" ({row['best_epoch']})" if "best_epoch" in row else ""
        via = row["darcy_test_32"].get("rel_l2_resample")
        lines.append(f"| {name} | {row['epochs']}{best} | {row.get('parameters', 0):,} | "
                     f"{row['darcy_test_16']['rel_l2']:.4f} | "
                     f"{row['darcy_test_32']['rel_l2']:.4f} | "
                     f"{'-' if via is None else f'{via:.4f}'} | {row['train_cpu_s']:.0f} |")
    return "\n".join([*lines, "", *verdict(rows, peer), "", *footer(record)])


def verdict(rows: dict[str, Any], peer: str = THEIRS) -> list[str]:
    """Lines saying, for each of our rows, whether it beats row ``peer`` at 16, at 32 and in
    CPU training time (a miss named as such); one line when ``peer`` did not run."""
    them = rows.get(peer)
    if them is None or "error" in them:
        return [f"{peer} did not run in this benchmark: no verdict."]
    out = []
    for name, row in rows.items():
        if name == peer or "error" in row:
            continue
        parts = []
        for key, label in (("darcy_test_16", "at 16"), ("darcy_test_32", "at 32")):
            a, b = row[key]["rel_l2"], them[key]["rel_l2"]
            via = row[key].get("rel_l2_resample")
            note = ("" if via is None else f"; through the 16 x 16 grid {via:.4f}, "
                    f"{'below' if via < b else 'above'} theirs")
            parts.append(f"{'beats' if a < b else 'MISSES'} theirs {label} "
                         f"({a:.4f} vs {b:.4f}{note})")
        a, b = row["train_cpu_s"], them["train_cpu_s"]
        parts.append(f"{'in less' if a <= b else 'in MORE'} CPU training time "
                     f"({a:.0f} vs {b:.0f} s)")
        out.append(f"* {name}: " + ", ".join(parts) + ".")
    return out


def fit_phases(x: np.ndarray, y: np.ndarray, high: float, low: float) -> dict[str, float]:
    """Boolean coefficients ``x`` (k, 16, 16) mapped True -> ``high``, False -> ``low``, solved
    with ``DarcyFDSolver`` (f = 1) on the 17-node grid holding their points (last row and
    column copied), one scale fitted per sample against the labels ``y``: the median relative
    L2 misfit and the median scale."""

    a = np.pad(np.where(x, high, low), ((0, 0), (0, 1), (0, 1)), mode="edge")
    u = DarcyFDSolver(forcing=1.0).solve(a)[:, :-1, :-1]
    scale = (u * y).sum(axis=(1, 2)) / (u * u).sum(axis=(1, 2))
    misfit = (np.linalg.norm((scale[:, None, None] * u - y).reshape(len(y), -1), axis=1)
              / np.linalg.norm(y.reshape(len(y), -1), axis=1))
    return {"median_misfit": float(np.median(misfit)), "median_scale": float(np.median(scale))}


def phase_markdown(rows: list[dict[str, Any]], samples: int, record: dict[str, Any]) -> str:
    """The results file of :func:`fit_phases` rows (``ratio``, ``true_is_high``)."""

    lines = [f"# Phase ratio of neuraloperator's small Darcy set ({samples} samples)", "",
             "| ratio | True is | median misfit | median scale |", "|---|---|---|---|"]
    lines += [f"| {r['ratio']:g} | {'high' if r['true_is_high'] else 'low'} | "
              f"{r['median_misfit']:.3f} | {r['median_scale']:.3g} |" for r in rows]
    return "\n".join([*lines, "", *footer(record)])
