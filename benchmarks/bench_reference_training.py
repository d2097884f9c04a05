"""Training speed of our trainer against the paper's reference code, same data, same machine.

The paper's figures of training speed come from a 2021 RTX 3090; the only like-for-like
comparison is the reference code (github:scaomath/galerkin-transformer, at the commit given as
``--reference``'s ``git log -1``) timed beside ours in the same process, on the same device,
threads and data. Both train the Burgers operator on the same generated samples (our generator,
n = 8192, seed 0; for their loader written as the ``.mat`` file of the FNO benchmark with ``a``
and ``u``): their ``SimpleTransformer`` with the ``ex1_burgers`` settings of their
``config.yml`` (attention type set to each of ours), their ``BurgersDataset`` and loader, their
``train_batch_burgers`` step (Adam, one-cycle schedule, H1-regularised loss, clipping) and a
one-batch validation per epoch; ours: ``Trainer`` with the preset of the same attention, float32,
its own loader and a one-batch validation. One warm-up epoch each, then it/s = steps per epoch /
the median time of two more epochs.

The reference code is not part of this project: bring it with a checkout of that repository
(its ``libs`` folder and ``config.yml``) and install what it imports beyond ours
(``pip install torchinfo psutil``; IPython, which they ask only whether a notebook runs
them, is answered "no" where it is missing); it runs on torch 2.x unchanged. On the GPU machine:
carry the checkout (for example under the ignored ``.carry/``) and the two wheels
(``benchmarks/gpu/fetch_wheels.sh`` fetches them), then run this driver with ``--device cuda
--resolutions 512 8192``.

Writes ``results/reference_training.{json,md}`` (``--out``). Usage::

    python benchmarks/bench_reference_training.py --reference DIR [--device cpu|cuda]
        [--threads 1] [--resolutions 512 8192] [--steps 32]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import statistics
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

import numpy as np
import scipy.io
import torch
import xarray as xr
import yaml

from neuralop_fem import generate
from neuralop_fem.environment import environment_record
from neuralop_fem.models import PRESETS
from neuralop_fem.reproduce.results import footer, write_results
from neuralop_fem.training import Trainer, training_preset

RESULTS = Path(__file__).resolve().parent / "results"
#: Our preset -> the attention type of the reference code's ``SimpleTransformer``.
PRESET_ATTENTION = {"burgers-galerkin": "galerkin", "burgers-fourier": "fourier"}
#: Batch size of both trainings (the paper's and their script's default for Burgers).
BATCH = 8
FINE = 8192


def _reference_package(root: Path, work: Path) -> None:
    """Make the reference code's ``libs`` importable as ``galerkin_transformer``, as their
    ``setup.py`` installs it."""
    if not (root / "libs" / "model.py").is_file() or not (root / "config.yml").is_file():
        msg = (f"--reference must be a checkout of the reference code with libs/model.py and "
               f"config.yml; got {root}")
        raise SystemExit(msg)
    link = work / "pkg" / "galerkin_transformer"
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(root.resolve() / "libs", target_is_directory=True)
    sys.path.insert(0, str(link.parent))
    if importlib.util.find_spec("IPython") is None:
        # their utils ask IPython only whether they run in a notebook (styling): on a machine
        # without it (the GPU image) the answer is "no", as IPython itself gives in a script
        shell = types.ModuleType("IPython")
        shell.get_ipython = lambda: None  # type: ignore[attr-defined]
        sys.modules["IPython"] = shell


def _data(work: Path, samples: int) -> tuple[Path, Path]:
    """Our Burgers file at n = 8192 and the same samples as the FNO benchmark's ``.mat``."""
    nc = work / f"burgers_n{FINE}_N{samples}.nc"
    generate("burgers", n_samples=samples, resolution=FINE, seed=0, out=nc, workers=1,
             progress=False)
    with xr.open_dataset(nc) as ds:
        a = np.asarray(ds["u0"].values, dtype=np.float64)
        u = np.asarray(ds["u"].values, dtype=np.float64)
    mat = work / f"burgers_n{FINE}_N{samples}.mat"
    scipy.io.savemat(mat, {"a": a, "u": u})
    return nc, mat


def _epochs_rate(epoch: Any, steps: int) -> tuple[float, list[float]]:
    epoch()  # warm-up: allocations, first-call set-up
    times = []
    for _ in range(2):
        t0 = time.perf_counter()
        epoch()
        times.append(time.perf_counter() - t0)
    return steps / statistics.median(times), times


def reference_rate(root: Path, mat: Path, n: int, attention: str, steps: int,
                   device: torch.device) -> dict[str, Any]:
    """It/s of the reference code's Burgers training at ``n`` (their loop, minus saving)."""
    from galerkin_transformer.ft import BurgersDataset, WeightedL2Loss
    from galerkin_transformer.model import SimpleTransformer
    from galerkin_transformer.utils_ft import train_batch_burgers, validate_epoch_burgers
    from torch.optim.lr_scheduler import OneCycleLR
    from torch.utils.data import DataLoader

    config = yaml.safe_load((root / "config.yml").read_text())["ex1_burgers"]
    config["attention_type"] = attention
    config["attn_norm"] = True  # their script: not --layer-norm
    subsample = FINE // n
    quiet = contextlib.redirect_stdout(io.StringIO())  # their timers print
    with quiet:
        train = BurgersDataset(subsample=subsample, train_data=True, train_portion=BATCH * steps,
                               valid_portion=BATCH, data_path=str(mat))
        valid = BurgersDataset(subsample=subsample, train_data=False, valid_portion=BATCH,
                               data_path=str(mat))
    cuda = device.type == "cuda"
    train_loader = DataLoader(train, batch_size=BATCH, shuffle=True, drop_last=True,
                              pin_memory=cuda)
    valid_loader = DataLoader(valid, batch_size=BATCH, shuffle=False, pin_memory=cuda)
    torch.manual_seed(0)
    model = SimpleTransformer(**config).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = OneCycleLR(optimizer, max_lr=1e-3, div_factor=1e4, pct_start=0.2,
                           final_div_factor=1e4, steps_per_epoch=len(train_loader), epochs=3)
    h = subsample / FINE
    loss_func = WeightedL2Loss(regularizer=True, h=h, gamma=0.1)
    metric_func = WeightedL2Loss(regularizer=False, h=h)

    def epoch() -> None:
        model.train()
        for data in train_loader:
            train_batch_burgers(model, loss_func, data, optimizer, scheduler, device)
        validate_epoch_burgers(model, metric_func, valid_loader, device)
        if cuda:
            torch.cuda.synchronize(device)

    rate, times = _epochs_rate(epoch, len(train_loader))
    return {"it_per_s": rate, "epoch_times_s": times,
            "n_parameters": sum(p.numel() for p in model.parameters())}


def our_rate(nc: Path, n: int, preset: str, steps: int, device: torch.device,
             work: Path) -> dict[str, Any]:
    """It/s of our trainer (float32) on the same samples at ``n``."""
    cfg = training_preset(preset).replace(
        epochs=3, batch_size=BATCH, eval_batch_size=BATCH, n_train=BATCH * steps, n_val=BATCH,
        n_test=BATCH, resolution=n, amp="none", device=str(device), checkpoint_minutes=0)
    with Trainer(work / f"ours_{preset}_{n}", nc, model_config=PRESETS[preset], config=cfg,
                 preset=preset, overwrite=True) as trainer:
        trainer.fit()
        times = trainer.history["epoch_time_s"]
        n_parameters = sum(p.numel() for p in trainer.operator.parameters())
    # the same as the reference: the first epoch is the warm-up
    return {"it_per_s": steps / statistics.median(times[1:]), "epoch_times_s": times[1:],
            "n_parameters": n_parameters}


def markdown(rows: list[dict[str, Any]], env: dict[str, Any], args: argparse.Namespace) -> str:
    lines = [
        "# Training speed: ours against the paper's reference code",
        "",
        f"Same machine, same process, same generated Burgers samples ({BATCH * args.steps} "
        f"training, batch {BATCH}, {args.steps} steps per epoch, float32, one-batch validation "
        f"per epoch; it/s = steps / median of two epochs after a warm-up). Device: "
        f"{args.device}, {args.threads} thread(s). Command: `python "
        f"benchmarks/bench_reference_training.py --reference DIR --device {args.device} "
        f"--threads {args.threads} --resolutions {' '.join(map(str, args.resolutions))} "
        f"--steps {args.steps}`.",
        "",
        "| model | n | ours it/s | reference it/s | ours / reference | parameters (ours / ref.) |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['preset']} ({r['attention']}) | {r['resolution']} | {r['ours']['it_per_s']:.2f} "
            f"| {r['reference']['it_per_s']:.2f} | {r['ratio']:.2f}x | "
            f"{r['ours']['n_parameters']:,} / {r['reference']['n_parameters']:,} |")
    return "\n".join([*lines, "", *footer(env)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, required=True,
                        help="checkout of the reference code (libs/, config.yml)")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads (default 1)")
    parser.add_argument("--resolutions", type=int, nargs="+", default=[512])
    parser.add_argument("--steps", type=int, default=32, help="steps per epoch (default 32)")
    parser.add_argument("--out", type=Path, default=RESULTS,
                        help="folder of reference_training.{json,md} (default results/)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        _reference_package(args.reference, work)
        nc, mat = _data(work, BATCH * (args.steps + 2))  # ours: + validation and test
        for n in args.resolutions:
            for preset, attention in PRESET_ATTENTION.items():
                ref = reference_rate(args.reference, mat, n, attention, args.steps, device)
                ours = our_rate(nc, n, preset, args.steps, device, work)
                rows.append({"preset": preset, "attention": attention, "resolution": n,
                             "ours": ours, "reference": ref,
                             "ratio": ours["it_per_s"] / ref["it_per_s"]})
                print(f"{preset} n={n}: ours {ours['it_per_s']:.2f} it/s, reference "
                      f"{ref['it_per_s']:.2f} it/s ({rows[-1]['ratio']:.2f}x)", flush=True)
    env = environment_record()
    settings = {"device": args.device, "threads": args.threads, "steps": args.steps,
                "batch": BATCH, "resolutions": args.resolutions}
    write_results(args.out, "reference_training",
                  {"settings": settings, "rows": rows, "environment": env},
                  markdown(rows, env, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
