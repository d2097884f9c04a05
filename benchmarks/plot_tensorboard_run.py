"""The scalars of a TensorBoard experiment log (``neuralop-fem train --log tensorboard``) in
one figure: what TensorBoard's scalar dashboard shows for the run, read from its event files.

Three panels: the learning rate per optimizer step (``train/lr_step``), the training loss per
step (``train/loss_step``, with the epoch mean ``train/loss`` at each epoch's last step) and
the validation relative L2 per epoch (``val/rel_l2``); see
:func:`benchmarks.lab.plots.tensorboard_figure`.

Run (docs/training.md, Experiment logs)::

    python -m benchmarks.plot_tensorboard_run runs/tb/tensorboard \\
        --out benchmarks/results/tensorboard_burgers_cosine.png [--title TEXT]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks.lab.plots import read_scalars, tensorboard_figure
from neuralop_fem.plotting import save
from neuralop_fem.reproduce.script_runner import run_script


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("log_dir", type=Path, help="RUN_DIR/tensorboard of a training run")
    p.add_argument("--title", default="TensorBoard log of a training run")
    p.add_argument("--out", type=Path, required=True, help="PNG file to write")
    args = p.parse_args(argv)
    fig = tensorboard_figure(read_scalars(args.log_dir), args.title)
    print(f"wrote {save(fig, args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_script(main))
