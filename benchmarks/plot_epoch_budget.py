"""Test error against the epoch budget of the Burgers rows of ``results/reproduction.json``.

Every recorded run on one dataset whose settings are the paper's preset except for the
seed, the number of epochs, the peak learning rate and the H1 weight joins a series: one
series per model and (peak lr, H1 weight) pair. The figure draws each seed's test relative L2
(small dots) and the mean over the seeds (line) against the epochs, on a log axis, with a
goal line and the paper's number for each model (dashed, the model's colour); the same
numbers are printed as a markdown table. Runs with any other change (a width, a dropout, a
batch size, a target normaliser, a warm-up) are left out: they are levers of their own.

Run::

    python benchmarks/plot_epoch_budget.py --data-name burgers_nugt_n8192_N1224 \\
        --out benchmarks/results/burgers_nugt_epoch_budget.png [--resolution 512] [--goal 1e-3]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import run_script  # noqa: E402
from _reproduction_record import model_suffix, paper_value  # noqa: E402

from neuralop_fem.errors import ConfigError, InputError  # noqa: E402
from neuralop_fem.plotting import fit_title, legend_beside, log_axis, save  # noqa: E402
from neuralop_fem.training import training_preset  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "reproduction.json"
#: Training settings a series may vary (the rest must be the paper preset's).
VARIED = ("seed", "epochs", "lr_max", "gamma")
#: Settings of where and how a run was computed, not of what it learned.
ENVIRONMENT = ("device", "amp", "deterministic", "eval_batch_size", "num_workers")
MODEL_ORDER = ("galerkin", "fourier", "fno")


@dataclass(frozen=True)
class Point:
    """One recorded run: a model, its recipe, its epochs, its seed and its test error."""

    model: str
    lr_max: float
    gamma: float
    epochs: int
    seed: int
    error: float


@cache
def _base_config(preset: str) -> Mapping[str, Any] | None:
    try:
        return training_preset(f"burgers-{model_suffix(preset)}").to_dict()
    except ConfigError:  # a preset this code does not know: not part of a series
        return None


def point_of(run: Mapping[str, Any], data_name: str, resolution: str) -> Point | None:
    """The run as a :class:`Point`, or None when it is not on ``data_name``, not a Burgers
    run of the paper mode, changes the model, or changes a training setting outside
    :data:`VARIED`."""
    data = run.get("data") or {}
    config = run.get("train_config")
    if (run.get("task") != "burgers" or run.get("mode") != "paper" or run.get("model_changes")
            or not isinstance(config, Mapping)
            or Path(str(data.get("path", ""))).name.removesuffix(".nc") != data_name):
        return None
    base = _base_config(str(run.get("preset", "")))
    if base is None:
        return None
    for field, value in base.items():
        if field not in VARIED and field not in ENVIRONMENT and config.get(field, value) != value:
            return None
    error = ((run.get("errors") or {}).get(resolution) or {}).get("rel_l2", {}).get("mean")
    if error is None:
        return None
    return Point(model_suffix(str(run["preset"])), float(config["lr_max"]),
                 float(config["gamma"]), int(config["epochs"]), int(config["seed"]),
                 float(error))


def collect(runs: Mapping[str, Mapping[str, Any]], data_name: str, resolution: str
            ) -> list[Point]:
    """The :class:`Point` of every run (``runs``: key -> record) that belongs to a series.

    Raises
    ------
    InputError
        For a record that is not a mapping or holds a non-numeric setting or error; the
        message names the record's key.
    """
    points = []
    for key, run in runs.items():
        try:
            point = point_of(run, data_name, resolution)
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            msg = (f"run {key!r}: expected a reproduction record with numeric settings and "
                   f"errors; got {type(exc).__name__}: {exc}")
            raise InputError(msg) from exc
        if point is not None:
            points.append(point)
    return points


def series(points: Iterable[Point]) -> dict[tuple[str, float, float], dict[int, list[Point]]]:
    """Points grouped by (model, peak lr, H1 weight), then by epochs (ascending)."""
    out: dict[tuple[str, float, float], dict[int, list[Point]]] = {}
    for p in sorted(points, key=lambda q: (_rank(q.model), -q.lr_max, q.gamma, q.epochs, q.seed)):
        out.setdefault((p.model, p.lr_max, p.gamma), {}).setdefault(p.epochs, []).append(p)
    return out


def mean_error(points: Iterable[Point]) -> float:
    """The mean test error over ``points`` (the seeds of one model, recipe and budget)."""
    return float(np.mean([p.error for p in points]))


def _rank(model: str) -> tuple[int, str]:
    return (MODEL_ORDER.index(model) if model in MODEL_ORDER else len(MODEL_ORDER), model)


def table(groups: Mapping[tuple[str, float, float], Mapping[int, list[Point]]]) -> str:
    """A markdown table: one row per model, recipe and epoch budget."""
    lines = ["| model | peak lr | H1 weight | epochs | seeds | mean test rel. L2 | per seed |",
             "|---|---|---|---|---|---|---|"]
    for (model, lr, gamma), by_epochs in groups.items():
        for epochs, pts in by_epochs.items():
            seeds = ", ".join(f"{p.error:.3e} (seed {p.seed})" for p in pts)
            lines.append(f"| {model} | {lr:g} | {gamma:g} | {epochs} | {len(pts)} | "
                         f"{mean_error(pts):.3e} | {seeds} |")
    return "\n".join(lines)


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0:
        msg = f"must be a positive number; got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def main(argv: list[str] | None = None) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--results", type=Path, default=RESULTS, help="a reproduction.json")
    p.add_argument("--data-name", required=True,
                   help="the dataset's file name without .nc, e.g. burgers_nugt_n8192_N1224")
    p.add_argument("--resolution", default="512", help="evaluation grid (default 512)")
    p.add_argument("--goal", type=_positive, default=1e-3, help="goal line (default 1e-3)")
    p.add_argument("--out", type=Path, required=True, help="PNG file to write")
    args = p.parse_args(argv)
    try:
        runs = json.loads(args.results.read_text())["runs"]
    except (ValueError, KeyError, TypeError):  # not JSON, no "runs", not an object
        runs = None
    if not isinstance(runs, Mapping):
        msg = f"--results {args.results}: expected a reproduction.json with a 'runs' mapping"
        raise InputError(msg)
    try:
        groups = series(collect(runs, args.data_name, args.resolution))
    except InputError as exc:
        msg = f"--results {args.results}: {exc}"
        raise InputError(msg) from exc
    if not groups:
        msg = (f"--data-name {args.data_name!r} / --resolution {args.resolution}: no recorded "
               f"Burgers run of {args.results} matches")
        raise InputError(msg)
    print(table(groups))

    fig, ax = plt.subplots(figsize=(8.0, 4.6))
    colours = {m: f"C{i}" for i, m in enumerate(dict.fromkeys(k[0] for k in groups))}
    markers = {}
    for (model, lr, gamma), by_epochs in groups.items():
        marker = markers.setdefault((lr, gamma), "os^Dv<>"[len(markers) % 7])
        epochs = np.array(list(by_epochs))
        means = np.array([mean_error(pts) for pts in by_epochs.values()])
        ax.plot(epochs, means, marker=marker, color=colours[model], lw=1.2,
                label=f"{model}, peak lr {lr:g}, H1 weight {gamma:g}")
        for e, pts in by_epochs.items():
            ax.plot([e] * len(pts), [q.error for q in pts], ".", color=colours[model], alpha=0.5)
    for model, colour in colours.items():
        value = paper_value("burgers", f"burgers-{model}", args.resolution, None)
        if value is not None:
            ax.axhline(value, color=colour, ls="--", lw=0.8, label=f"paper, {model}")
    ax.axhline(args.goal, color="k", lw=0.8, label=f"goal {args.goal:g}")
    log_axis(ax, "y")
    ax.set_xticks(sorted({e for by_epochs in groups.values() for e in by_epochs}))
    ax.set_xlabel("epochs")
    ax.set_ylabel(f"test relative L2 at n = {args.resolution} (-)")
    title = (f"{args.data_name}: test error against the epoch budget "
             "(line: mean over seeds; dots: each seed)")
    ax.set_title(fit_title(title, fig, share=0.6))
    legend_beside(ax)
    fig.tight_layout()
    print(f"wrote {save(fig, args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
