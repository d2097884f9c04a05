"""Stage ``darcy``: darcy-galerkin and darcy-inverse-galerkin (noise 0.01) at the paper's scale.

100 epochs of 1024 samples each (141 x 141, batch 4; Cao 2021, Table 6: 22 and 15 minutes on an RTX
3090), one run after the other, resumed across calls: each call trains until its deadline
(an epoch is started only when it ends, by the epoch times measured so far, before the
deadline), then packs the unfinished run (``last.pt``, ``best.pt``) and what finished into
``state.tar.NN``. The next call, on a fresh machine, regenerates the data from its seed
(1224 samples at 421, dataset seed 0: the data of the reproduction rows) and continues from
``--from``. A finished run's weights come back once, as ``RUN.best.pt`` beside the state in
the output of the call that finished it, and are not carried further: the state then holds
at most the running run's ``last.pt`` and ``best.pt`` (27 + 10 MB for darcy-galerkin). With the
wheels (16 MB) and the working tree that exceeds the 64 MiB one call may carry, so a cold
machine continues in two calls: ``prepare`` (:mod:`.prepare`) with the wheels, then ``darcy``
with the state. A ``--from`` state older than the machine's own copy of a run is not restored
over it (a warm machine keeps its runs between calls).
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import shutil
from pathlib import Path
from typing import Any

from neuralop_fem.data.generation import generate
from neuralop_fem.models import PRESETS
from neuralop_fem.reproduce.rows import run_tag
from neuralop_fem.runs import RUN_JSON, RunDir, RunRecord
from neuralop_fem.runs.run_dir import METRICS
from neuralop_fem.training import Trainer, training_preset

from .machine import Deadline
from .outputs import BEST_SUFFIX, pack_state, unpack_runs

__all__ = ["PAPER", "RUNS", "SEED", "configs", "data_file", "run", "train_until"]

log = logging.getLogger("campaign.darcy")

RUNS = ("darcy-galerkin", "darcy-inverse-galerkin")
#: Training seed and dataset of the reproduction rows (``neuralop-fem reproduce``).
SEED = 1127802
PAPER = {"data_n": 421, "samples": 1224, "data_seed": 0}
#: Paper minutes for 100 epochs on an RTX 3090 (Cao 2021, Table 6, GT column).
PAPER_MINUTES = {"darcy-galerkin": 0.367 * 60, "darcy-inverse-galerkin": 0.248 * 60}
#: --rehearse: tiny data and models, 2 epochs (a call with --max-epochs-this-call 1 stops
#: in the middle of the first run).
REHEARSE = {"data_n": 29, "samples": 30, "data_seed": 0, "epochs": 2,
            "split": {"n_train": 20, "n_val": 5, "n_test": 5},
            "resolution": {"darcy-galerkin": 15, "darcy-inverse-galerkin": 29},
            "model": {"d_model": 12, "num_layers": 1, "d_ff": 16, "freq_dim": 8, "modes": 3,
                      "decoder_ff": 8}}
#: Seconds kept free after the last epoch: test errors, packing, writing the results.
FINISH_S = 45.0


def data_file(work: Path, rehearse: bool) -> Path:
    """The Darcy dataset, generated on all cores from its seed unless already there."""

    spec = REHEARSE if rehearse else PAPER
    path = work / "data" / f"darcy_n{spec['data_n']}_N{spec['samples']}.nc"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        log.info("generating %s on %d processes", path, os.cpu_count())
        generate("darcy", n_samples=spec["samples"], resolution=spec["data_n"],
                 seed=spec["data_seed"], out=path, workers=os.cpu_count() or 1, progress=False)
    return path


def configs(preset: str, args: argparse.Namespace) -> tuple[Any, Any]:

    model, cfg = PRESETS[preset], training_preset(preset)
    changes: dict[str, Any] = {"seed": SEED, "device": args.device, "amp": args.amp}
    if args.rehearse:
        changes.update(REHEARSE["split"], epochs=REHEARSE["epochs"],
                       resolution=REHEARSE["resolution"][preset], batch_size=2)
        model = model.replace(**{k: v for k, v in REHEARSE["model"].items()
                                 if k in model.to_dict()})
    return model, cfg.replace(**changes)


def _status(run_dir: Path) -> RunRecord:
    """The run's record; an empty one (no status, no epoch) before it has any."""
    run = RunDir(run_dir)
    return run.read() if run.run_json.is_file() else RunRecord()


def _epoch_seconds(run_dir: Path) -> float | None:
    """The longest epoch of the run so far (from its metrics), None before the first."""
    path = run_dir / "metrics.csv"
    if not path.is_file():
        return None
    rows = path.read_text().splitlines()[1:]
    times = [float(r.split(",")[-1]) for r in rows if r]
    return max(times) if times else None


def train_until(run_dir: Path, data: Path, preset: str, args: argparse.Namespace,
                deadline: Deadline) -> RunRecord:
    """Train (or resume) one run while epochs fit before the deadline."""

    model, cfg = configs(preset, args)
    first = _epoch_seconds(run_dir) or 0.0
    if deadline.left() < FINISH_S + 1.1 * first:
        return _status(run_dir)  # not even one more epoch fits: leave it for the next call
    calls = 0
    with Trainer(run_dir, data, model_config=model, config=cfg, preset=preset) as trainer:
        while trainer.epoch < cfg.epochs:
            per_epoch = _epoch_seconds(run_dir)
            room = deadline.left() - FINISH_S
            if per_epoch is None:
                k = 1  # the first epoch measures the epoch time
            else:
                k = math.floor(room / (1.1 * per_epoch))
            if args.max_epochs_this_call is not None:
                k = min(k, args.max_epochs_this_call - calls)
            if k < 1 or room <= 0:
                break
            result = trainer.fit(max_epochs_this_call=k)
            calls += k
            if result["finished"]:
                break
        epochs = trainer.epoch
    info = _status(run_dir)
    log.info("%s: %d/%d epochs (%s)", preset, epochs, cfg.epochs, info.status)
    return info


def _summary(preset: str, info: RunRecord, finished_now: bool,
             run_dir: Path) -> dict[str, Any]:
    epochs = (info.train_config or {}).get("epochs")
    per_epoch = _epoch_seconds(run_dir)
    left = None if per_epoch is None or epochs is None else (
        (epochs - int(info.epochs_completed or 0)) * per_epoch / 60)
    return {"preset": preset, "status": info.status,
            "epoch_s": per_epoch, "training_minutes_left": left,
            "epochs_completed": info.epochs_completed,
            "epochs": epochs,
            "best_epoch": info.best_epoch, "best_val_rel_l2": info.best_val_rel_l2,
            "test_rel_l2_best": info.test_rel_l2_best,
            "wall_time_s": info.wall_time_s, "device": info.device,
            "best_weights_in_this_output": finished_now or info.status != "finished",
            "paper_minutes_rtx3090": PAPER_MINUTES.get(preset)}


def _restore(source: Path, runs_root: Path) -> list[str]:
    """Unpack the runs of ``source`` into ``runs_root``, except a run the machine already holds
    further trained (a warm machine keeps its runs between calls: an older ``--from`` must not
    take them back); the member names restored."""
    incoming = runs_root.parent / "incoming"
    shutil.rmtree(incoming, ignore_errors=True)
    names = unpack_runs(source, incoming)
    restored = []
    for run_dir in sorted(p for p in incoming.iterdir() if p.is_dir()):
        here = runs_root / run_dir.name
        have = int(_status(here).epochs_completed or 0)
        carried = int(_status(run_dir).epochs_completed or 0)
        if have > carried:
            log.warning("%s: keeping this machine's copy (epoch %d); --from holds epoch %d",
                        run_dir.name, have, carried)
            continue
        here.mkdir(parents=True, exist_ok=True)
        for path in run_dir.iterdir():
            shutil.copyfile(path, here / path.name)
        restored += [n for n in names if n.split("/", 1)[0] == run_dir.name]
    shutil.rmtree(incoming, ignore_errors=True)
    return restored


def run(args: argparse.Namespace, deadline: Deadline, out: Path) -> tuple[dict, list[str], int]:
    work = args.work
    runs_root = work / "runs"
    restored = _restore(args.source, runs_root) if args.source is not None else []
    before = {p: _status(runs_root / tag).status for p, tag in _tags(args).items()}
    data = data_file(work, args.rehearse)
    rows, members = [], []
    for preset, tag in _tags(args).items():
        run_dir = runs_root / tag
        info = _status(run_dir)
        stopped = False
        if info.status != "finished":
            info = train_until(run_dir, data, preset, args, deadline)
            stopped = info.status != "finished"
        finished_now = info.status == "finished" and before[preset] != "finished"
        rows.append(_summary(preset, info, finished_now, run_dir))
        keep = [RUN_JSON, METRICS]
        if info.status != "finished":
            keep += ["last.pt", "best.pt"]
        elif finished_now:
            (out / f"{tag}{BEST_SUFFIX}").write_bytes((run_dir / "best.pt").read_bytes())
        members += [run_dir / f for f in keep if (run_dir / f).is_file()]
        if stopped:
            break  # one run at a time: the next starts once this one has finished
    parts = pack_state(out, runs_root, members)
    done = all(r["status"] == "finished" for r in rows) and len(rows) == len(RUNS)
    result = {"runs": rows, "data": str(data), "restored": restored, "state_parts": parts,
              "finished": done}
    return result, _markdown(rows, done, args), 0


def _tags(args: argparse.Namespace) -> dict[str, str]:
    spec = REHEARSE if args.rehearse else PAPER
    stem = f"darcy_n{spec['data_n']}_N{spec['samples']}"
    mode = "quick" if args.rehearse else "paper"
    return {p: run_tag(p, stem, mode, SEED, label="" if args.amp == "none" else args.amp,
                       noise=0.01 if "inverse" in p else None) for p in RUNS}


def _markdown(rows: list[dict[str, Any]], done: bool, args: argparse.Namespace) -> list[str]:
    head = ("All runs finished: record them (docs/training.md, 'What has run on a GPU')." if done
            else "Not finished: run the same command again with `--from` this output folder "
            "(where its state, the wheels and the working tree exceed one call's 64 MiB carry, "
            "run the `prepare` stage first on the same machine: docs/training.md, "
            "'What has run on a GPU').")
    lines = [f"# GPU campaign: Darcy at the paper's scale{' (rehearsal)' if args.rehearse else ''}",
             "", head, "",
             "| run | status | epochs | best epoch | val rel L2 | test rel L2 (best) | "
             "train time (min) | paper RTX 3090 (min) | longest epoch (s) | training left (min) "
             "| best.pt in this output |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        def num(v: Any, f: str = ".4e") -> str:
            return "-" if v is None else format(v, f)
        wall = None if r["wall_time_s"] is None else r["wall_time_s"] / 60
        lines.append(f"| {r['preset']} | {r['status']} | {r['epochs_completed']}/{r['epochs']} | "
                     f"{r['best_epoch']} | {num(r['best_val_rel_l2'])} | "
                     f"{num(r['test_rel_l2_best'])} | {num(wall, '.1f')} | "
                     f"{num(r['paper_minutes_rtx3090'], '.0f')} | {num(r['epoch_s'], '.1f')} | "
                     f"{num(r['training_minutes_left'], '.1f')} | "
                     f"{'yes' if r['best_weights_in_this_output'] else 'no'} |")
    return lines
