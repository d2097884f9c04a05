"""The scalars of a TensorBoard experiment log (``neuralop-fem train --log tensorboard``) in
one figure: what TensorBoard's scalar dashboard shows for the run, read from its event files.

Three panels: the learning rate per optimizer step (``train/lr_step``), the training loss per
step (``train/loss_step``, with the epoch mean ``train/loss`` at each epoch's last step) and
the validation relative L2 per epoch (``val/rel_l2``).

Run (docs/training.md, Experiment logs)::

    python benchmarks/plot_tensorboard_run.py runs/tb/tensorboard \\
        --out benchmarks/results/tensorboard_burgers_cosine.png [--title TEXT]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from neuralop_fem.errors import InputError
from neuralop_fem.plotting import fit_title, log_axis, save
from neuralop_fem.reproduce.script import run_script

TAGS = ("train/lr_step", "train/loss_step", "train/loss", "val/rel_l2")


def read_scalars(log_dir: Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``{tag: (steps, values)}`` of :data:`TAGS` from the event files in ``log_dir``."""
    try:
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    except ImportError:
        msg = "reading event files needs tensorboard: pip install 'neuralop-fem[tensorboard]'"
        raise InputError(msg) from None
    if not log_dir.is_dir() or not any(log_dir.glob("events.out.tfevents.*")):
        msg = f"{log_dir}: expected a directory of TensorBoard event files (RUN_DIR/tensorboard)"
        raise InputError(msg)
    acc = EventAccumulator(str(log_dir), size_guidance={"scalars": 0})  # 0: keep every point
    acc.Reload()
    found = set(acc.Tags()["scalars"])
    missing = [t for t in TAGS if t not in found]
    if missing:
        msg = f"{log_dir}: the log holds no {missing}; found {sorted(found)}"
        raise InputError(msg)
    out = {}
    for tag in TAGS:
        events = acc.Scalars(tag)
        out[tag] = (np.array([e.step for e in events]), np.array([e.value for e in events]))
    return out


def main(argv: list[str] | None = None) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("log_dir", type=Path, help="RUN_DIR/tensorboard of a training run")
    p.add_argument("--title", default="TensorBoard log of a training run")
    p.add_argument("--out", type=Path, required=True, help="PNG file to write")
    args = p.parse_args(argv)
    s = read_scalars(args.log_dir)
    fig, axes = plt.subplots(1, 3, figsize=(11.5, 3.4))
    steps, lr = s["train/lr_step"]
    axes[0].plot(steps, lr, color="C2", lw=1.2)
    axes[0].set_xlabel("optimizer step")
    axes[0].set_ylabel("learning rate")
    axes[0].set_title("train/lr_step", fontsize=9)
    steps, loss = s["train/loss_step"]
    axes[1].plot(steps, loss, color="C0", lw=0.6, alpha=0.5, label="per step")
    epochs, epoch_loss = s["train/loss"]
    # the epoch mean at the epoch's last step: the per-step axis is shared
    per_epoch = steps.max() / max(epochs.max(), 1)
    axes[1].plot(epochs * per_epoch, epoch_loss, "o-", color="C0", ms=3, lw=1.2,
                 label="epoch mean")
    log_axis(axes[1], "y")
    axes[1].set_xlabel("optimizer step")
    axes[1].set_ylabel("training loss")
    axes[1].set_title("train/loss_step, train/loss", fontsize=9)
    axes[1].legend(fontsize=8, frameon=False)
    epochs, val = s["val/rel_l2"]
    axes[2].plot(epochs, val, "o-", color="C3", ms=3, lw=1.2)
    log_axis(axes[2], "y")
    axes[2].set_xlabel("epoch")
    axes[2].set_ylabel("validation relative L2")
    axes[2].set_title("val/rel_l2", fontsize=9)
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.suptitle(fit_title(args.title, fig), fontsize=10)
    fig.tight_layout()
    print(f"wrote {save(fig, args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_script(main))
