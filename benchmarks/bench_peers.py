"""Our presets on neuraloperator's small Darcy set, beside their example FNO, same data and CPU.

The data are neuraloperator's ``darcy_train_16.pt`` (1000 samples, 16 x 16), ``darcy_test_16.pt``
and ``darcy_test_32.pt`` (50 each; their repository, ``neuralop/data/datasets/data``). They go
through ``import_neuralop`` (boolean phases -> the default phase values); our presets train on
the first 950 training samples with ``neuralop-fem train`` (49 validation samples pick the best
epoch) and are evaluated on the two test files with ``evaluate_run`` (at 32 through the
training grid, as ``evaluate`` does for Darcy). Where the ``neuralop`` package imports, their
example's FNO (``examples/models/plot_FNO_darcy.py``: n_modes 8, 24 channels, projection ratio
2, AdamW lr 1e-2 weight decay 1e-4, cosine schedule T_max 30, batch 64, H1 training loss on the
normalised output, 15 epochs) is trained on all 1000 samples by this script and evaluated on
the same files with the same metric (mean relative L2 = PDEBench's nRMSE).

Writes ``results/peers.{json,md}``. Usage::

    python benchmarks/bench_peers.py --data-dir DIR [--epochs 15] [--galerkin-epochs 5]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from neuralop_fem.environment import environment_record as record
from neuralop_fem.reproduce.results import footer, write_results
from neuralop_fem.reproduce.script import run_script

RESULTS = Path(__file__).resolve().parent / "results"

FILES = ("darcy_train_16", "darcy_test_16", "darcy_test_32")


def _import(data_dir: Path, work: Path) -> dict[str, Path]:
    from neuralop_fem.data.peers import import_neuralop

    return {f: import_neuralop(data_dir / f"{f}.pt", work / f"{f}.nc") for f in FILES}


def ours(preset: str, files: dict[str, Path], work: Path, epochs: int) -> dict[str, Any]:
    """Train ``preset`` with the command line on the imported file; test on their files."""
    from neuralop_fem.cli import main
    from neuralop_fem.evaluation import evaluate_run

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
    for name in ("darcy_test_16", "darcy_test_32"):
        res = evaluate_run(run, files[name], resolution=int(name[-2:]), indices="all",
                           device="cpu")
        out[name] = {"rel_l2": res["summary"]["rel_l2"]["mean"],
                     "pdebench": res["summary"]["pdebench"]}
    return out


def theirs(data_dir: Path, epochs: int, seed: int) -> dict[str, Any]:
    """Their example FNO and training settings, on their files (needs ``neuralop``)."""
    import torch
    from neuralop.data.transforms.normalizers import UnitGaussianNormalizer
    from neuralop.losses import H1Loss
    from neuralop.models import FNO

    from neuralop_fem.metrics import peer_metrics, relative_l2

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
            value = loss(model(x[idx]), norm.transform(y[idx]))
            value.backward()
            opt.step()
        sched.step()
    out: dict[str, Any] = {"epochs": epochs, "train_cpu_s": time.process_time() - t0,
                           "parameters": sum(p.numel() for p in model.parameters())}
    model.eval()
    for name in ("darcy_test_16", "darcy_test_32"):
        xt, yt = load(name)
        with torch.no_grad():
            pred = norm.inverse_transform(model(xt))[:, 0].double().numpy()
        ref = yt[:, 0].double().numpy()
        out[name] = {"rel_l2": float(np.mean(relative_l2(pred, ref))),
                     "pdebench": peer_metrics(pred, ref)}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True,
                        help="folder with darcy_train_16.pt, darcy_test_16.pt, darcy_test_32.pt")
    parser.add_argument("--epochs", type=int, default=15, help="epochs (their example's: 15)")
    parser.add_argument("--galerkin-epochs", type=int, default=5,
                        help="epochs of darcy-galerkin (about 3x the cost per epoch)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        files = _import(args.data_dir, work)
        try:
            rows["neuraloperator FNO (their example)"] = theirs(args.data_dir, args.epochs,
                                                                args.seed)
        except ImportError as exc:
            rows["neuraloperator FNO (their example)"] = {"error": f"not run: {exc}"}
        rows["darcy-fno"] = ours("darcy-fno", files, work, args.epochs)
        rows["darcy-galerkin"] = ours("darcy-galerkin", files, work, args.galerkin_epochs)
    rec = record()
    lines = ["# neuraloperator's small Darcy set (16 x 16 train, tests at 16 and 32)", "",
             "Mean relative L2 (= PDEBench nRMSE) on their test files; CPU seconds of training.",
             "", "| model | epochs | test 16 | test 32 | train CPU s |", "|---|---|---|---|---|"]
    for name, row in rows.items():
        if "error" in row:
            lines.append(f"| {name} | - | {row['error']} | | |")
            continue
        lines.append(f"| {name} | {row['epochs']} | {row['darcy_test_16']['rel_l2']:.4f} | "
                     f"{row['darcy_test_32']['rel_l2']:.4f} | {row['train_cpu_s']:.0f} |")
    lines += ["", *footer(rec)]
    write_results(RESULTS, "peers", {"rows": rows, "record": rec}, "\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(run_script(main))
