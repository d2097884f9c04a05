"""Training speed of our trainer against the paper's reference code, same data, same machine.

The paper's figures of training speed come from a 2021 RTX 3090; the only like-for-like
comparison is the reference code (github:scaomath/galerkin-transformer) timed beside ours in the
same process, on the same device, threads and data. Both train the Burgers operator on the same
generated samples (our generator, n = 8192, seed 0; for their loader written as the ``.mat`` file
of the FNO benchmark with ``a`` and ``u``): their ``SimpleTransformer`` with the ``ex1_burgers``
settings of their ``config.yml`` (attention type set to each of ours), their ``BurgersDataset``
and loader, their ``train_batch_burgers`` step (Adam, one-cycle schedule, H1-regularised loss,
clipping) and a one-batch validation per epoch; ours: ``Trainer`` with the preset of the same
attention, float32, its own loader and a one-batch validation. One warm-up epoch each, then
it/s = steps per epoch / the median time of two more epochs.

The reference code is not part of this project: :func:`load_reference` imports a checkout of
it (its ``libs`` folder as the package ``galerkin_transformer``, as their ``setup.py`` installs
it). It needs ``torchinfo`` and ``psutil`` beyond our dependencies; IPython, which they ask only
whether a notebook runs them, is answered "no" where it is missing. Driver:
``benchmarks/bench_reference_training.py``.
"""


from __future__ import annotations

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
from torch.optim.lr_scheduler import OneCycleLR
from torch.utils.data import DataLoader

from neuralop_fem.data.generation.api import generate
from neuralop_fem.models import PRESETS
from neuralop_fem.reproduce.results import footer
from neuralop_fem.training import Trainer, training_preset

__all__ = ["BATCH", "FINE", "PRESET_ATTENTION", "load_reference", "markdown", "measure",
           "our_rate", "reference_rate", "write_mat"]

#: Our preset -> the attention type of the reference code's ``SimpleTransformer``.
PRESET_ATTENTION = {"burgers-galerkin": "galerkin", "burgers-fourier": "fourier"}
#: Batch size of both trainings (the paper's and their script's default for Burgers).
BATCH = 8
FINE = 8192


def load_reference(root: Path) -> None:
    """Import the reference code's ``libs`` (a checkout at ``root``, with ``config.yml``) as
    the package ``galerkin_transformer``, as their ``setup.py`` installs it."""
    init = root / "libs" / "__init__.py"
    if not (root / "libs" / "model.py").is_file() or not (root / "config.yml").is_file():
        msg = (f"--reference must be a checkout of the reference code with libs/model.py and "
               f"config.yml; got {root}")
        raise SystemExit(msg)
    if importlib.util.find_spec("IPython") is None:
        # their utils ask IPython only whether they run in a notebook (styling): on a machine
        # without it (the GPU image) the answer is "no", as IPython itself gives in a script
        shell = types.ModuleType("IPython")
        shell.get_ipython = lambda: None  # type: ignore[attr-defined]
        sys.modules["IPython"] = shell
    spec = importlib.util.spec_from_file_location(
        "galerkin_transformer", init, submodule_search_locations=[str(init.parent)])
    package = importlib.util.module_from_spec(spec)
    sys.modules["galerkin_transformer"] = package
    spec.loader.exec_module(package)


def write_mat(nc: Path, mat: Path) -> Path:
    """The samples of our Burgers file ``nc`` as the FNO benchmark's ``.mat`` (``a``: the
    initial conditions, ``u``: the solutions at the final time, float64)."""
    with xr.open_dataset(nc) as ds:
        a = np.asarray(ds["u0"].values, dtype=np.float64)
        u = np.asarray(ds["u"].values, dtype=np.float64)
    scipy.io.savemat(mat, {"a": a, "u": u})
    return mat


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
    """It/s of the reference code's Burgers training at ``n`` (their loop, minus saving);
    :func:`load_reference` first (their package is imported here, once it is loadable)."""
    from galerkin_transformer.ft import BurgersDataset, WeightedL2Loss
    from galerkin_transformer.model import SimpleTransformer
    from galerkin_transformer.utils_ft import train_batch_burgers, validate_epoch_burgers

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


def measure(reference: Path, device: torch.device, resolutions: list[int],
            steps: int) -> list[dict[str, Any]]:
    """Both rates for each preset of :data:`PRESET_ATTENTION` at each grid of ``resolutions``
    (the reference loaded with :func:`load_reference`), on ``steps`` batches per epoch of
    samples generated here (seed 0)."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        samples = BATCH * (steps + 2)  # ours: + validation and test
        nc = generate("burgers", n_samples=samples, resolution=FINE, seed=0,
                      out=work / "burgers.nc", workers=1, progress=False)
        mat = write_mat(nc, work / "burgers.mat")
        for n in resolutions:
            for preset, attention in PRESET_ATTENTION.items():
                ref = reference_rate(reference, mat, n, attention, steps, device)
                ours = our_rate(nc, n, preset, steps, device, work)
                rows.append({"preset": preset, "attention": attention, "resolution": n,
                             "ours": ours, "reference": ref,
                             "ratio": ours["it_per_s"] / ref["it_per_s"]})
                print(f"{preset} n={n}: ours {ours['it_per_s']:.2f} it/s, reference "
                      f"{ref['it_per_s']:.2f} it/s ({rows[-1]['ratio']:.2f}x)", flush=True)
    return rows


def markdown(rows: list[dict[str, Any]], env: dict[str, Any], settings: dict[str, Any]) -> str:
    """The results table: per preset and grid, both rates and their ratio."""
    steps, device, threads = settings["steps"], settings["device"], settings["threads"]
    grids = " ".join(map(str, settings["resolutions"]))
    lines = [
        "# Training speed: ours against the paper's reference code",
        "",
        f"Same machine, same process, same generated Burgers samples ({BATCH * steps} "
        f"training, batch {BATCH}, {steps} steps per epoch, float32, one-batch validation "
        f"per epoch; it/s = steps / median of two epochs after a warm-up). Device: "
        f"{device}, {threads} thread(s). Command: `python -m "
        f"benchmarks.bench_reference_training --reference DIR --device {device} "
        f"--threads {threads} --resolutions {grids} --steps {steps}`.",
        "",
        "| model | n | ours it/s | reference it/s | ours / reference | parameters (ours / ref.) |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['preset']} ({r['attention']}) | {r['resolution']} | "
            f"{r['ours']['it_per_s']:.2f} | {r['reference']['it_per_s']:.2f} | "
            f"{r['ratio']:.2f}x | "
            f"{r['ours']['n_parameters']:,} / {r['reference']['n_parameters']:,} |")
    return "\n".join([*lines, "", *footer(env)])
