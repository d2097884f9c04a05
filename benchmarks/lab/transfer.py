"""Darcy resolution transfer: narrow versions of the Darcy presets trained on one grid and
evaluated on others, fed the new grid (``direct``) or through the training grid
(``resample``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from neuralop_fem.evaluation import evaluate_run
from neuralop_fem.models import PRESETS
from neuralop_fem.reproduce.results import footer
from neuralop_fem.runs import RunDir
from neuralop_fem.training import TrainConfig, Trainer

__all__ = ["NARROW", "evaluate_on_grids", "markdown", "train_narrow"]

#: Narrow versions of the presets (same layer types and depth pattern, fewer channels).
NARROW: dict[str, dict[str, int]] = {
    "darcy-galerkin": {"d_model": 32, "num_layers": 2, "d_ff": 64, "num_heads": 2,
                       "freq_dim": 16, "modes": 6, "decoder_ff": 32},
    "darcy-fourier": {"d_model": 32, "num_layers": 2, "d_ff": 64, "num_heads": 2,
                      "freq_dim": 16, "modes": 6, "decoder_ff": 32},
    "darcy-fno": {"width": 16, "modes": 8},
}


def train_narrow(name: str, data: Path, run: Path, *, train_grid: int, epochs: int,
                 n_train: int, n_eval: int, seed: int) -> None:
    """Train the narrow ``name`` model (:data:`NARROW`) at ``train_grid`` on ``data`` into
    ``run`` (batch 8, H1 weight 0.5, peak lr 1e-3, 5e-4 for darcy-fourier; ``n_eval``
    validation and test samples) unless ``run`` holds a finished run."""

    if RunDir(run).recorded_status() == "finished":
        return
    model = PRESETS[name].replace(**NARROW[name])
    cfg = TrainConfig(task="darcy", resolution=train_grid, epochs=epochs, batch_size=8,
                      gamma=0.5, n_train=n_train, n_val=n_eval, n_test=n_eval,
                      lr_max=5e-4 if name == "darcy-fourier" else 1e-3, seed=seed)
    with Trainer(run, data, model_config=model, config=cfg, preset=name) as trainer:
        trainer.fit()


def evaluate_on_grids(run: Path, data: Path, grids: list[int],
                      train_grid: int) -> dict[str, Any]:
    """Mean test relative L2 of ``run`` at each grid, ``"{n}/direct"`` and ``"{n}/resample"``
    (one evaluation at the training grid, where both feed the same data), and
    ``n_parameters``."""

    row: dict[str, Any] = {}
    for n in grids:
        for mode in ("direct",) if n == train_grid else ("direct", "resample"):
            r = evaluate_run(run, data, resolution=n, transfer=mode)
            row[f"{n}/{mode}"] = float(r["summary"]["rel_l2"]["mean"])
        row.setdefault(f"{n}/resample", row[f"{n}/direct"])
    row["n_parameters"] = int(RunDir(run).read().n_parameters or 0)
    return row


def markdown(result: dict[str, Any]) -> str:
    """The results file of :func:`evaluate_on_grids` per model (``result``: ``models``, the
    settings and the environment ``record``)."""

    grids = result["grids"]
    lines = [
        "# Darcy resolution transfer", "",
        f"Narrow versions of the Darcy presets trained at n = {result['train_grid']} on "
        f"{result['n_train']} samples of `{result['data']}` ({result['epochs']} epochs), "
        f"evaluated on their {result['n_eval']} test samples at each grid. Mean test relative "
        "L2; `direct`: the model fed the new grid; `resample`: predicted on the training grid "
        "and interpolated (the default for Darcy, `transfer=\"auto\"`).", "",
        "| model | parameters | " + " | ".join(f"n = {g} direct / resample" for g in grids) + " |",
        "|---|---|" + "---|" * len(grids),
    ]
    for name, row in result["models"].items():
        cells = [f"{row[f'{g}/direct']:.2e} / {row[f'{g}/resample']:.2e}" for g in grids]
        lines.append(f"| {name} | {row['n_parameters']:,} | " + " | ".join(cells) + " |")
    lines += ["", *footer(result["record"])]
    return "\n".join(lines)
