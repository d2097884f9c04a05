"""Our presets beside neuraloperator's example FNO on its small Darcy set (the same files, the
same metric), and which phase values reproduce that set's labels."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["FILES", "PHASE_RATIOS", "fit_phases", "import_files", "markdown", "ours",
           "phase_markdown", "theirs"]

#: neuraloperator's small Darcy files (``<name>.pt``): 1000 training samples at 16 x 16 and
#: 50 test samples at 16 and at 32.
FILES = ("darcy_train_16", "darcy_test_16", "darcy_test_32")
#: The high / low phase ratios :func:`fit_phases` tries.
PHASE_RATIOS = (5.0, 10.0, 20.0, 50.0, 1000.0)
_TESTS = ("darcy_test_16", "darcy_test_32")


def import_files(data_dir: Path, work: Path) -> dict[str, Path]:
    """:data:`FILES` of ``data_dir`` imported into netCDF files in ``work``."""
    from ..data.peers import import_neuralop

    return {f: import_neuralop(data_dir / f"{f}.pt", work / f"{f}.nc") for f in FILES}


def ours(preset: str, files: dict[str, Path], work: Path, epochs: int) -> dict[str, Any]:
    """Train ``preset`` with the command line on the imported training file (950 training, 49
    validation samples, 8 modes, CPU); its mean relative L2 and PDEBench metrics on the two
    test files, and the training's CPU seconds."""
    from ..cli import main
    from ..evaluation import evaluate_run

    run = work / preset
    t0 = time.process_time()
    status = main(["train", "--data", str(files["darcy_train_16"]), "--preset", preset,
                   "--out", str(run), "--resolution", "16", "--epochs", str(epochs),
                   "--n-train", "950", "--n-val", "49", "--n-test", "1", "--set", "modes=8",
                   "--device", "cpu"])
    cpu = time.process_time() - t0
    if status != 0:
        return {"error": f"train exited with {status}"}
    out: dict[str, Any] = {"epochs": epochs, "train_cpu_s": cpu}
    for name in _TESTS:
        res = evaluate_run(run, files[name], resolution=int(name[-2:]), indices="all",
                           device="cpu")
        out[name] = {"rel_l2": res["summary"]["rel_l2"]["mean"],
                     "pdebench": res["summary"]["pdebench"]}
    return out


def theirs(data_dir: Path, epochs: int, seed: int) -> dict[str, Any]:
    """Their example FNO and training settings (n_modes 8, 24 channels, AdamW lr 1e-2, cosine
    schedule, batch 64, H1 loss on the normalised output) on their files; needs the
    ``neuralop`` package (ImportError without it)."""
    import torch
    from neuralop.data.transforms.normalizers import UnitGaussianNormalizer
    from neuralop.losses import H1Loss
    from neuralop.models import FNO

    from ..metrics import peer_metrics, relative_l2

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
                           "parameters": sum(p.numel() for p in model.parameters())}
    model.eval()
    for name in _TESTS:
        xt, yt = load(name)
        with torch.no_grad():
            pred = norm.inverse_transform(model(xt))[:, 0].double().numpy()
        ref = yt[:, 0].double().numpy()
        out[name] = {"rel_l2": float(np.mean(relative_l2(pred, ref))),
                     "pdebench": peer_metrics(pred, ref)}
    return out


def markdown(rows: dict[str, Any], record: dict[str, Any]) -> str:
    """The results file of :func:`ours` and :func:`theirs` rows by model name."""
    from ..reproduce.results import footer

    lines = ["# neuraloperator's small Darcy set (16 x 16 train, tests at 16 and 32)", "",
             "Mean relative L2 (= PDEBench nRMSE) on their test files; CPU seconds of training.",
             "", "| model | epochs | test 16 | test 32 | train CPU s |", "|---|---|---|---|---|"]
    for name, row in rows.items():
        if "error" in row:
            lines.append(f"| {name} | - | {row['error']} | | |")
            continue
        lines.append(f"| {name} | {row['epochs']} | {row['darcy_test_16']['rel_l2']:.4f} | "
                     f"{row['darcy_test_32']['rel_l2']:.4f} | {row['train_cpu_s']:.0f} |")
    return "\n".join([*lines, "", *footer(record)])


def fit_phases(x: np.ndarray, y: np.ndarray, high: float, low: float) -> dict[str, float]:
    """Boolean coefficients ``x`` (k, 16, 16) mapped True -> ``high``, False -> ``low``, solved
    with ``DarcyFDSolver`` (f = 1) on the 17-node grid holding their points (last row and
    column copied), one scale fitted per sample against the labels ``y``: the median relative
    L2 misfit and the median scale."""
    from solvers.darcy import DarcyFDSolver

    a = np.pad(np.where(x, high, low), ((0, 0), (0, 1), (0, 1)), mode="edge")
    u = DarcyFDSolver(forcing=1.0).solve(a)[:, :-1, :-1]
    scale = (u * y).sum(axis=(1, 2)) / (u * u).sum(axis=(1, 2))
    misfit = (np.linalg.norm((scale[:, None, None] * u - y).reshape(len(y), -1), axis=1)
              / np.linalg.norm(y.reshape(len(y), -1), axis=1))
    return {"median_misfit": float(np.median(misfit)), "median_scale": float(np.median(scale))}


def phase_markdown(rows: list[dict[str, Any]], samples: int, record: dict[str, Any]) -> str:
    """The results file of :func:`fit_phases` rows (``ratio``, ``true_is_high``)."""
    from ..reproduce.results import footer

    lines = [f"# Phase ratio of neuraloperator's small Darcy set ({samples} samples)", "",
             "| ratio | True is | median misfit | median scale |", "|---|---|---|---|"]
    lines += [f"| {r['ratio']:g} | {'high' if r['true_is_high'] else 'low'} | "
              f"{r['median_misfit']:.3f} | {r['median_scale']:.3g} |" for r in rows]
    return "\n".join([*lines, "", *footer(record)])
