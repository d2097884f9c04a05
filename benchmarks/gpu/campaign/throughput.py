"""Stage ``throughput``: training it/s against the paper's RTX 3090, inference against the solver.

Training: the trainer's own loop (data loader, loss with its H1 term, clipping, Adam, one-cycle
schedule, a one-batch validation per epoch) on generated data, fp32 and bf16 with the default
data path (``data_on_device="auto"``: the splits on the GPU) and fp32 with per-sample loading
(``"off"``, the only path before 2026-11-26's measurement); one warm-up epoch, then it/s =
steps per epoch / median epoch time of two more. Paper figures (Cao 2021):
Burgers n = 8192, batch 4: 27.15 it/s (Table 1, training); Burgers 512, batch 8: about 55 it/s
and Darcy 141, batch 4: about 19.4 it/s (Table 6: 100 epochs of 128 or 256 steps including the
evaluations, so slightly pessimistic).

Inference: ``Surrogate.solve`` on a batch of inputs (host arrays in, host arrays out: the
copies, the out-of-distribution check and the resampling count) against the classical solver
of the data (Darcy FD with GMG-CG, Burgers spectral ETDRK4) on all cores of the machine (one
process per core). With trained darcy-galerkin weights from the ``darcy`` stage (``--from``)
both sides' accuracy at 141 is reported too; the speed-up at equal accuracy needs the fair
verdict's ladder of solver settings, which does not exist yet.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np

from neuralop_fem.data.generation import generate
from neuralop_fem.data.io import load_dataset
from neuralop_fem.metrics import relative_l2
from neuralop_fem.models import PRESETS
from neuralop_fem.runs import RunDir
from neuralop_fem.runs.operator import load_run
from neuralop_fem.surrogate import Surrogate
from neuralop_fem.training import (
    Trainer,
    operator_loss,
    training_preset,
)
from neuralop_fem.training.loaders import ResidentDataset
from solvers.problems import get_problem

from .machine import Deadline
from .outputs import unpack_runs

__all__ = ["CASES", "INFERENCE", "VARIANTS", "inference", "run", "solver_rate", "surrogate_rate",
           "sync_cost", "train_rate"]

log = logging.getLogger("campaign.throughput")

#: (preset, resolution, batch, steps per epoch, paper it/s on an RTX 3090, where from).
CASES = (
    ("burgers-galerkin", 512, 8, 64, 55.0, "Table 6 (incl. evaluations)"),
    ("burgers-galerkin", 8192, 4, 32, 27.15, "Table 1 (training)"),
    ("darcy-galerkin", 141, 4, 32, 19.4, "Table 6 (incl. evaluations)"),
)
#: (amp, data_on_device) of the training rows of each case.
VARIANTS = (("none", "auto"), ("bf16", "auto"), ("none", "off"))
#: (problem, resolution, samples, surrogate batch size).
INFERENCE = (("darcy", 141, 256, 32), ("darcy", 421, 64, 8), ("burgers", 8192, 256, 32))
#: (problem, resolution, samples) of the generated data files.
DATA = (("burgers", 8192, 8 * 64 + 16), ("darcy", 421, 264))
REHEARSE = {
    "cases": (("burgers-galerkin", 64, 4, 3, 55.0, "-"), ("burgers-galerkin", 256, 4, 3, 27.15,
              "-"), ("darcy-galerkin", 15, 2, 3, 19.4, "-")),
    "inference": (("darcy", 15, 8, 4), ("darcy", 29, 8, 4), ("burgers", 256, 8, 4)),
    "data": (("burgers", 256, 24), ("darcy", 29, 14)),
    "model": {"d_model": 12, "num_layers": 1, "d_ff": 16, "freq_dim": 8, "modes": 3,
              "decoder_ff": 8},
}


def _data(work: Path, problem: str, n: int, samples: int) -> Path:

    path = work / "data" / f"{problem}_n{n}_N{samples}.nc"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        generate(problem, n_samples=samples, resolution=n, seed=0, out=path,
                 workers=os.cpu_count() or 1, progress=False)
    return path


def train_rate(case: tuple, amp: str, data: Path, args: argparse.Namespace,
               data_on_device: str = "auto") -> dict[str, Any]:
    """Training it/s of one case (one warm-up epoch, then the median of two)."""
    import torch


    preset, n, batch, steps, paper, source = case
    model = PRESETS[preset]
    if args.rehearse:
        model = model.replace(**{k: v for k, v in REHEARSE["model"].items()
                                 if k in model.to_dict()})
    cfg = training_preset(preset).replace(
        epochs=3, batch_size=batch, eval_batch_size=batch, n_train=batch * steps, n_val=batch,
        n_test=batch, resolution=n, amp=amp, device=args.device, data_on_device=data_on_device)
    run_dir = args.work / "throughput" / f"{preset}_{n}_{amp}_data-{data_on_device}"
    cuda = torch.cuda.is_available() and args.device != "cpu"
    with Trainer(run_dir, data, model_config=model, config=cfg, preset=preset,
                 overwrite=True) as trainer:
        trainer.fit(max_epochs_this_call=1)
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        trainer.fit()
        times = trainer.history["epoch_time_s"][1:]
        resident = isinstance(trainer.val_data, ResidentDataset)
        sync = sync_cost(trainer, cfg.gamma) if (amp, data_on_device) == ("none", "auto") else {}
    rate = steps / statistics.median(times)
    return {"preset": preset, "resolution": n, "batch": batch, "amp": amp,
            "data_on_device": data_on_device, "data_path": "on the device" if resident
            else "per sample",
            "steps_per_epoch": steps, "epoch_times_s": times, "it_per_s": rate,
            "paper_it_per_s": paper, "paper_source": source, "ratio_to_paper": rate / paper,
            "peak_gib": torch.cuda.max_memory_allocated() / 2**30 if cuda else None,
            "run_dir": str(run_dir), **sync}


def sync_cost(trainer: Any, gamma: float) -> dict[str, float]:
    """Steps/s of the trainer's step (forward, loss, backward, clipping, Adam) on batches
    already on the device, reading the loss back after every step (as the trainer does) and
    summing it on the device instead (read once): what the per-step wait costs."""
    import torch


    dev = trainer.device
    batches = [{k: v.to(dev) for k, v in b.items()} for b in trainer.loader]
    module, opt = trainer.train_module.train(), trainer.optimizer
    params = list(trainer.operator.parameters())

    def step(batch: dict) -> torch.Tensor:
        loss = operator_loss(module(batch["input"]).float(), batch["target"],
                             target_grad=batch.get("target_grad") if gamma > 0 else None,
                             coefficient=batch.get("coefficient"), gamma=gamma)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if trainer.config.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(params, trainer.config.grad_clip)
        opt.step()
        return loss.detach()

    def rate(each: bool) -> float:
        total = torch.zeros((), device=dev, dtype=torch.float64)
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        t0 = time.perf_counter()
        for batch in batches:
            loss = step(batch)
            if each:
                float(loss)
            else:
                total += loss
        float(total)
        return len(batches) / (time.perf_counter() - t0)

    rate(True)  # warm-up
    each, once = rate(True), rate(False)
    return {"steps_per_s_read_each_step": each, "steps_per_s_read_once": once}


def _solve(job: tuple[Any, np.ndarray]) -> np.ndarray:
    solver, x = job
    return np.asarray(solver.solve(x))


def solver_rate(pool: ProcessPoolExecutor, workers: int, solver: Any,
                inputs: np.ndarray) -> tuple[float, np.ndarray]:
    """Samples/s of ``solver`` on ``inputs`` split over the ``workers`` processes of ``pool``
    (after one warm-up sample each: imports, first-call set-up); the solutions."""
    list(pool.map(_solve, [(solver, inputs[:1])] * workers))
    chunks = [c for c in np.array_split(inputs, workers) if len(c)]
    t0 = time.perf_counter()
    out = list(pool.map(_solve, [(solver, c) for c in chunks]))
    dt = time.perf_counter() - t0
    return len(inputs) / dt, np.concatenate(out)


def surrogate_rate(sur: Any, inputs: np.ndarray, repeats: int = 3) -> tuple[float, np.ndarray]:
    """Samples/s of ``sur.solve`` on ``inputs`` (median of ``repeats`` after a warm-up)."""
    sur.solve(inputs[: sur.batch_size])
    times, pred = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        pred = sur.solve(inputs)
        times.append(time.perf_counter() - t0)
    return len(inputs) / statistics.median(times), pred


def _problem(preset: str) -> str:
    """The problem a training preset trains on."""

    return training_preset(preset).task


def _run_preset(run: Path) -> str:
    """The preset of a run directory (its run.json)."""

    return str(RunDir(run).read().preset)


def _trained_darcy(args: argparse.Namespace) -> Path | None:
    """A finished darcy-galerkin run of the ``darcy`` stage in ``--from``, if any."""
    if args.source is None:
        return None
    root = args.work / "from_darcy"
    unpack_runs(args.source, root)
    for run in sorted(root.glob("darcy-galerkin_*")):
        if (run / "best.pt").is_file() and RunDir(run).recorded_status() == "finished":
            return run
    return None


def inference(args: argparse.Namespace, runs: dict[str, Path], files: dict[str, Path],
              deadline: Deadline) -> list[dict[str, Any]]:
    """Surrogate and solver samples/s for each row of :data:`INFERENCE`."""
    trained = _trained_darcy(args)
    rows, workers = [], os.cpu_count() or 1
    pool = ProcessPoolExecutor(workers, mp_context=get_context("spawn"))
    try:
        _inference_rows(args, runs, files, deadline, trained, pool, workers, rows)
    finally:
        pool.shutdown()
    return rows


def _inference_rows(args: argparse.Namespace, runs: dict[str, Path], files: dict[str, Path],
                    deadline: Deadline, trained: Path | None, pool: ProcessPoolExecutor,
                    workers: int, rows: list[dict[str, Any]]) -> None:

    # the training grid of each problem's last case: the grid its weights were trained at
    train_n = {_problem(c[0]): c[1] for c in (REHEARSE["cases"] if args.rehearse else CASES)}
    trained_problem = _problem(_run_preset(trained)) if trained is not None else None
    for problem, n, samples, batch in (REHEARSE["inference"] if args.rehearse else INFERENCE):
        run = trained if problem == trained_problem else runs.get(problem)
        if deadline.left() < 60 or run is None:
            why = "time budget" if run is not None else "no trained weights"
            rows.append({"problem": problem, "resolution": n, "skipped": why})
            continue
        spec = get_problem(problem)
        ds = load_dataset(files[problem])
        stride = spec.stride(int(ds.sizes["x"]), n)
        ds = ds.isel(sample=slice(0, samples), **{d: slice(None, None, stride) for d in spec.dims})
        x, y = ds[spec.input_name].values, ds[spec.output_name].values
        operator, record = load_run(run, map_location=args.device)
        sur = Surrogate(operator, problem=problem, resolution=n, run_info=record,
                        device=args.device, batch_size=batch)
        sur_rate, pred = surrogate_rate(sur, x)
        solver = spec.make_solver()
        sol_rate, sol = solver_rate(pool, workers, solver, x)
        row = {"problem": problem, "resolution": n, "samples": len(x), "batch": batch,
               "weights": "trained (darcy stage)" if run == trained else
               f"3 epochs at n={train_n[problem]} (speed only)",
               "surrogate_samples_per_s": sur_rate, "solver_samples_per_s": sol_rate,
               "solver": type(solver).__name__, "solver_processes": workers,
               "speedup": sur_rate / sol_rate}
        if run == trained and n == train_n[problem]:
            row["surrogate_rel_l2"] = float(relative_l2(pred, y).mean())
            row["solver_rel_l2"] = float(relative_l2(sol, y).mean())
        rows.append(row)
        log.info("inference %s", row)


def run(args: argparse.Namespace, deadline: Deadline, out: Path) -> tuple[dict, list[str], int]:
    files = {p: _data(args.work, p, n, samples)
             for p, n, samples in (REHEARSE["data"] if args.rehearse else DATA)}
    training, runs = [], {}
    for case in (REHEARSE["cases"] if args.rehearse else CASES):
        problem = _problem(case[0])
        for amp, where in VARIANTS:
            if deadline.left() < 120:
                training.append({"preset": case[0], "resolution": case[1], "amp": amp,
                                 "data_on_device": where, "skipped": "time budget"})
                continue
            row = train_rate(case, amp, files[problem], args, data_on_device=where)
            training.append(row)
            log.info("training %s", {k: v for k, v in row.items() if k != "epoch_times_s"})
            if (amp, where) == ("none", "auto"):
                runs[problem] = Path(row["run_dir"])  # last fp32 run: 8192 Burgers, 141 Darcy
    rows = inference(args, runs, files, deadline)
    result = {"training": training, "inference": rows}
    return result, _markdown(training, rows, args.rehearse), 0


def _f(v: Any, spec: str = ".1f") -> str:
    return "-" if v is None else format(v, spec)


def _markdown(training: list[dict], rows: list[dict], rehearse: bool) -> list[str]:
    lines = [f"# GPU campaign: throughput{' (rehearsal: not a measurement)' if rehearse else ''}",
             "", "## Training (it/s; one warm-up epoch, then the median of two)", "",
             "| preset | n | batch | amp | data | it/s | paper RTX 3090 it/s | ratio | peak GiB |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in training:
        if "skipped" in r:
            lines.append(f"| {r['preset']} | {r['resolution']} | - | {r['amp']} | "
                         f"{r['data_on_device']} | skipped ({r['skipped']}) | | | |")
            continue
        lines.append(f"| {r['preset']} | {r['resolution']} | {r['batch']} | {r['amp']} | "
                     f"{r['data_on_device']}: {r['data_path']} | {_f(r['it_per_s'])} | "
                     f"{r['paper_it_per_s']} ({r['paper_source']}) | "
                     f"{_f(r['ratio_to_paper'], '.2f')} | {_f(r['peak_gib'], '.2f')} |")
    waits = [r for r in training if "steps_per_s_read_once" in r]
    lines += ["", "## The trainer's per-step wait (fp32; steps/s on batches already on the "
              "device, no data loader, no schedule)", "",
              "| preset | n | loss read every step | loss read once | gain |",
              "|---|---|---|---|---|"]
    lines += [f"| {r['preset']} | {r['resolution']} | {_f(r['steps_per_s_read_each_step'])} | "
              f"{_f(r['steps_per_s_read_once'])} | "
              f"{_f(r['steps_per_s_read_once'] / r['steps_per_s_read_each_step'], '.2f')} |"
              for r in waits]
    lines += ["", "## Inference (samples/s; Surrogate.solve, host arrays in and out)", "",
              "| problem | n | samples | weights | surrogate | solver (all cores) | speed-up | "
              "rel L2 surrogate / solver |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "skipped" in r:
            lines.append(f"| {r['problem']} | {r['resolution']} | skipped ({r['skipped']}) "
                         "| | | | | |")
            continue
        acc = (f"{r['surrogate_rel_l2']:.3e} / {r['solver_rel_l2']:.3e}"
               if "surrogate_rel_l2" in r else "-")
        lines.append(f"| {r['problem']} | {r['resolution']} | {r['samples']} | {r['weights']} | "
                     f"{_f(r['surrogate_samples_per_s'])} | {_f(r['solver_samples_per_s'])} "
                     f"({r['solver']}, {r['solver_processes']} processes) | "
                     f"{_f(r['speedup'], '.2f')} | {acc} |")
    return lines
