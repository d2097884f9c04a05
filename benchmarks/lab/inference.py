"""What a zoo model's inference costs: FLOPs, samples/s of ``Surrogate.solve`` and of the bare
forward pass, the share of a dense matmul's rate, and each precision's accuracy cost
(``benchmarks/bench_inference.py``; the GPU campaign's ``inference`` stage).

* :func:`forward_flops`: floating-point operations of one sample's forward pass, counted by
  :class:`torch.utils.flop_counter.FlopCounterMode` (matrix products, convolutions and
  attention; FFTs and elementwise work are not counted, so the spectral layers' share is low);
* :func:`matmul_peak`: FLOP/s of a dense square float32 (or bf16) matrix product on the device,
  the reference of "fraction of peak", measured in the same run;
* :func:`speed_rows`: per batch size, samples/s of ``Surrogate.solve`` (host float64 arrays in
  and out: the checks, the casts, the transfers, the forward pass) and of the bare forward pass
  (a device tensor through the model), and their ratio, the overhead of ``solve``;
* :func:`precision_rows`: mean relative L2 error against fresh reference solutions in each
  precision, the deviation from float32 and the forward pass's samples/s;
* :func:`compile_row`: the forward pass eager and under :func:`torch.compile`.

The results file's tables and the merging of re-runs: :mod:`.inference_report`.

Timings: each cell is the least wall time per call of a few calls (after a warm-up call at
batch 1 and one at the cell's batch), ``solve`` and the forward pass interleaved so that load
changes on a shared machine hit both; a call takes at least ``min_time`` seconds (small
calls are repeated inside one timing). Cells whose one call would exceed ``max_call_s`` (from
the batch-16 rate) are skipped and say so.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import xarray as xr
from torch.utils.flop_counter import FlopCounterMode

from neuralop_fem.data.generation import generate_samples
from neuralop_fem.data.generation.config import config_class
from neuralop_fem.data.subsample import average_pool_nodes
from neuralop_fem.surrogate import Surrogate
from neuralop_fem.surrogate.inference import PRECISIONS, inference_forward, precision_context
from neuralop_fem.surrogate.observations import sample_fields
from neuralop_fem.zoo import available

__all__ = ["CPU_BATCHES", "GOAL_BATCH", "GOAL_OVERHEAD", "GPU_BATCHES", "Plan", "compile_row",
           "forward_flops", "fresh_dataset", "fresh_samples", "matmul_peak", "measure",
           "precision_rows", "speed_rows", "threads", "zoo_models"]

CPU_BATCHES = (1, 16, 128)
GPU_BATCHES = (1, 16, 128, 1024)
#: The goal of the fast path (issue 46): at batch 16 on one CPU thread, solve <= 1.10 x forward.
GOAL_BATCH, GOAL_OVERHEAD = 16, 1.10
#: First sample index of the fresh test sets: the paper datasets' test split starts there.
FIRST_TEST_INDEX = 1124


def zoo_models() -> list[str]:
    """The zoo's model names (``neuralop-fem zoo``)."""
    return list(available())


@contextlib.contextmanager
def threads(n: int | None) -> Iterator[int]:
    """torch's intra-op threads set to ``n`` inside the block (None: unchanged); the count."""
    before = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield torch.get_num_threads()
    finally:
        torch.set_num_threads(before)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _per_call(fn: Callable[[], Any], device: torch.device, *, repeats: int,
              min_time: float) -> tuple[float, float]:
    """Least wall seconds and least process CPU seconds of one call of ``fn`` over
    ``repeats`` timings of enough calls to last ``min_time`` (the inner count from a first
    timed call). On one thread the CPU time is the work of the call whatever the machine's
    load; the wall time also holds the waits for a core."""
    _sync(device)
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    _sync(device)
    first, cpu = time.perf_counter() - t0, time.process_time() - c0
    inner = max(1, int(np.ceil(min_time / max(first, 1e-9))))
    best = first
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(inner):
            fn()
        _sync(device)
        best = min(best, (time.perf_counter() - t0) / inner)
        cpu = min(cpu, (time.process_time() - c0) / inner)
    return best, cpu


def matmul_peak(device: torch.device, *, dtype: torch.dtype = torch.float32,
                size: int | None = None, repeats: int = 5) -> float:
    """FLOP/s of a dense ``size x size`` matrix product in ``dtype`` on ``device`` (least time
    of ``repeats``; ``size`` None: 8192 on CUDA, 1024 on the CPU)."""
    n = size or (8192 if device.type == "cuda" else 1024)
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    with torch.inference_mode():
        seconds = _per_call(lambda: a @ b, device, repeats=repeats, min_time=0.05)[0]
    return 2.0 * n**3 / seconds


def forward_flops(sur: Surrogate, sample: np.ndarray) -> float:
    """Floating-point operations of the forward pass on one sample (``sample``: the input on
    the model grid, shape ``(*grid,)``), as :class:`FlopCounterMode` counts them."""
    x = torch.as_tensor(sample[None, ..., None], dtype=sur.dtype, device=sur.device)
    counter = FlopCounterMode(display=False)
    with torch.inference_mode(), counter:
        sur.operator(x)
    return float(counter.get_total_flops())


def fresh_dataset(card: dict[str, Any], samples: int, *,
                  first: int = FIRST_TEST_INDEX) -> xr.Dataset:
    """``samples`` fresh samples of a zoo model's dataset (``card``: its model card).

    Drawn with the bundled solvers from the card's dataset settings and seed at the card's
    resolution, sample indices ``first, first + 1, ...`` (the paper datasets' test split).
    """
    data = card.get("data")
    if not isinstance(data, dict):
        msg = "`card` must be a zoo model card with its data settings (`data`)."
        raise ValueError(msg)
    cls = config_class(data["problem"])
    config = cls(**{k: v for k, v in data["settings"].items() if k in cls.field_names()})
    return generate_samples(data["problem"], np.arange(first, first + samples),
                            resolution=int(data["resolution"]), seed=int(data["dataset_seed"]),
                            config=config)


def fresh_samples(sur: Surrogate, ds: xr.Dataset) -> tuple[np.ndarray, np.ndarray]:
    """(inputs, true outputs) of every sample of ``ds`` (:func:`fresh_dataset`) as the model's
    training saw them (:func:`~neuralop_fem.surrogate.observations.sample_fields`): strided to
    the model grid; for an inverse model the observations carry its training noise and the
    output is its training target, the coefficient average-pooled from the file's grid to the
    observation grid and again to the model's output grid
    (:class:`~neuralop_fem.data.datasets.DarcyInverseDataset`)."""
    inputs, outputs = sample_fields(sur, ds, np.arange(int(ds.sizes["sample"])))
    if not sur.spec.inverse:
        return np.asarray(inputs.values), np.asarray(outputs.values)
    full = np.asarray(ds[sur.spec.output_name].values, dtype=np.float64)
    fine = average_pool_nodes(full, factor=sur.spec.stride(full.shape[-1], sur.resolution))
    coarse = average_pool_nodes(fine, factor=sur.spec.stride(sur.resolution,
                                                               sur.output_resolution))
    return np.asarray(inputs.values), coarse


def _tile(inputs: np.ndarray, batch: int) -> np.ndarray:
    """``batch`` inputs, repeating ``inputs`` as needed (timing does not depend on values)."""
    reps = -(-batch // len(inputs))
    return np.ascontiguousarray(np.concatenate([inputs] * reps)[:batch])


def speed_rows(sur: Surrogate, inputs: np.ndarray, *, batches: Sequence[int], where: str,
               flops: float, peak: float, repeats: int = 3, min_time: float = 0.2,
               max_call_s: float = 20.0) -> list[dict[str, Any]]:
    """Samples/s of ``sur.solve`` and of the bare forward pass at each batch size.

    ``where`` labels the rows (e.g. ``"CPU, 1 thread"``); ``flops`` per sample and ``peak``
    FLOP/s give the achieved TFLOP/s and its fraction of peak. Returns one dict per batch.
    """
    device = sur.device
    forward = inference_forward(sur.operator, sur.precision, device)
    rows: list[dict[str, Any]] = []
    rate16 = None
    for batch in batches:
        row: dict[str, Any] = {"where": where, "batch": batch, "precision": sur.precision}
        rows.append(row)
        if rate16 is not None and batch / rate16 > max_call_s:
            row["skipped"] = f"one call would take about {batch / rate16:.0f} s"
            continue
        x_host = _tile(inputs, batch)
        x_dev = torch.as_tensor(x_host[..., None], dtype=sur.dtype).to(device)
        sur.batch_size = batch

        def bare(x: torch.Tensor = x_dev) -> None:
            with torch.inference_mode(), precision_context(sur.precision):
                forward(x)

        def solve(x: np.ndarray = x_host) -> None:
            sur.solve(x)

        solve()  # warm-up at this batch (allocator, kernels)
        bare()
        t_fwd = t_solve = c_fwd = c_solve = np.inf
        for _ in range(repeats):  # interleaved: a load change hits both
            wall, cpu = _per_call(bare, device, repeats=1, min_time=min_time)
            t_fwd, c_fwd = min(t_fwd, wall), min(c_fwd, cpu)
            wall, cpu = _per_call(solve, device, repeats=1, min_time=min_time)
            t_solve, c_solve = min(t_solve, wall), min(c_solve, cpu)
        fwd_rate, solve_rate = batch / t_fwd, batch / t_solve
        row.update({"forward_samples_per_s": fwd_rate, "solve_samples_per_s": solve_rate,
                    "overhead": t_solve / t_fwd, "overhead_cpu_time": c_solve / c_fwd,
                    "forward_tflops": flops * fwd_rate / 1e12,
                    "solve_tflops": flops * solve_rate / 1e12,
                    "fraction_of_peak": flops * fwd_rate / peak,
                    "solve_ms_per_sample": 1e3 * t_solve / batch})
        if batch <= 16:
            rate16 = fwd_rate
    sur.batch_size = None
    return rows


def _rel_l2(pred: np.ndarray, truth: np.ndarray) -> np.ndarray:
    diff = (pred - truth).reshape(len(truth), -1)
    return np.linalg.norm(diff, axis=1) / np.linalg.norm(truth.reshape(len(truth), -1), axis=1)


def precision_rows(sur: Surrogate, inputs: np.ndarray, truth: np.ndarray, *,
                   precisions: Sequence[str], batch: int = 16, repeats: int = 3,
                   min_time: float = 0.2) -> list[dict[str, Any]]:
    """Per precision: mean relative L2 error against ``truth`` (on the model's output grid,
    else strided to it), the mean relative deviation from the float32 prediction, and forward
    samples/s at ``batch``. ``precisions`` must start with ``"float32"``."""
    if tuple(precisions[:1]) != ("float32",):
        msg = f"`precisions` must start with 'float32'; got {list(precisions)}."
        raise ValueError(msg)
    stride = sur.spec.stride(truth.shape[-1], sur.output_resolution)
    truth = truth[(slice(None), *[slice(None, None, stride)] * (truth.ndim - 1))]
    rows, ref = [], None
    x_dev = torch.as_tensor(_tile(inputs, batch)[..., None], dtype=sur.dtype).to(sur.device)
    for precision in precisions:
        if precision not in PRECISIONS:
            msg = f"`precisions` must be among {PRECISIONS}; got {precision!r}."
            raise ValueError(msg)
        sur.precision = precision
        sur.batch_size = batch
        pred = np.asarray(sur.solve(inputs))
        ref = pred if ref is None else ref
        forward = inference_forward(sur.operator, precision, sur.device)

        def bare(fwd: Callable[[torch.Tensor], torch.Tensor] = forward,
                 precision: str = precision) -> None:
            with torch.inference_mode(), precision_context(precision):
                fwd(x_dev)

        bare()
        seconds = _per_call(bare, sur.device, repeats=repeats, min_time=min_time)[0]
        err = _rel_l2(pred, truth)
        rows.append({"precision": precision, "samples": len(inputs),
                     "rel_l2": float(err.mean()),
                     "deviation_from_float32": float(_rel_l2(pred, ref).mean()),
                     "forward_samples_per_s": batch / seconds, "batch": batch})
    sur.precision = "float32"
    sur.batch_size = None
    base = rows[0]["rel_l2"]
    for row in rows:
        row["cost"] = row["rel_l2"] - base
        row["cost_share"] = row["cost"] / base
        row["speedup"] = row["forward_samples_per_s"] / rows[0]["forward_samples_per_s"]
    return rows


def compile_row(sur: Surrogate, inputs: np.ndarray, *, batch: int = 16, repeats: int = 5,
                min_time: float = 0.3) -> dict[str, Any]:
    """The bare forward pass at ``batch`` eager and under :func:`torch.compile` (default mode):
    least wall and CPU seconds per call of each (interleaved), the first compiled call's
    seconds, and the largest relative deviation of the compiled output."""
    x = torch.as_tensor(_tile(inputs, batch)[..., None], dtype=sur.dtype).to(sur.device)
    compiled = torch.compile(sur.operator)
    with torch.inference_mode():
        ref = sur.operator(x)
        _sync(sur.device)
        t0 = time.perf_counter()
        out = compiled(x)
        _sync(sur.device)
        first = time.perf_counter() - t0
        eager = (np.inf, np.inf)
        fast = (np.inf, np.inf)
        for _ in range(repeats):
            e = _per_call(lambda: sur.operator(x), sur.device, repeats=1, min_time=min_time)
            c = _per_call(lambda: compiled(x), sur.device, repeats=1, min_time=min_time)
            eager = (min(eager[0], e[0]), min(eager[1], e[1]))
            fast = (min(fast[0], c[0]), min(fast[1], c[1]))
    dev = float(((out - ref).flatten(1).norm(dim=1) / ref.flatten(1).norm(dim=1)).max())
    return {"name": sur.name, "batch": batch, "eager_s": eager[0], "eager_cpu_s": eager[1],
            "compiled_s": fast[0], "compiled_cpu_s": fast[1], "first_call_s": first,
            "max_deviation": dev}


@dataclass(frozen=True)
class Plan:
    """What :func:`measure` runs.

    Attributes
    ----------
    models : tuple of str
        Zoo model names.
    samples : int
        Fresh test samples per dataset (accuracy; timing inputs repeat them).
    cpu_threads : tuple of int
        CPU thread counts to time (empty: no CPU rows).
    cpu_batches, gpu_batches : tuple of int
        Batch sizes on the CPU and on a GPU.
    gpu : bool
        Also time ``cuda`` (when available).
    precisions_cpu, precisions_gpu : tuple of str
        Precisions of the accuracy table (float32 first); on the CPU at one thread.
    max_call_s : float
        Skip a cell whose one call would take longer (estimated from batch 16).
    repeats, min_time : int, float
        Timings per cell and least seconds per timing.
    cpu_reserve_s : float
        With a deadline, CPU rows start only with this many seconds left (the GPU rows of
        each model run first).
    """

    models: tuple[str, ...]
    samples: int = 24
    cpu_threads: tuple[int, ...] = (1,)
    cpu_batches: tuple[int, ...] = CPU_BATCHES
    gpu_batches: tuple[int, ...] = GPU_BATCHES
    gpu: bool = False
    precisions_cpu: tuple[str, ...] = ("float32", "bf16")
    precisions_gpu: tuple[str, ...] = ("float32", "tf32", "bf16")
    max_call_s: float = 20.0
    repeats: int = 3
    min_time: float = 0.2
    cpu_reserve_s: float = 60.0


def _label(threads_n: int, cores: int) -> str:
    return "CPU, 1 thread" if threads_n == 1 else f"CPU, {threads_n} threads of {cores}"


def measure(plan: Plan, *, log: Callable[[str], None] = print,
            deadline: Callable[[], float] | None = None) -> dict[str, Any]:
    """Run ``plan``: per model its FLOPs, speed rows and precision rows; the matmul peaks.

    ``deadline`` (optional): seconds left; a model is skipped when under 30 s are left, its
    CPU rows when under ``plan.cpu_reserve_s``. A model's GPU rows run before its CPU rows.
    Returns ``{"models": [...], "peaks": {...}, "plan": {...}}``.
    """
    cores = os.cpu_count() or 1
    cuda = plan.gpu and torch.cuda.is_available()
    peaks: dict[str, float] = {}
    for n in plan.cpu_threads:
        with threads(n):
            peaks[_label(n, cores)] = matmul_peak(torch.device("cpu"))
    if cuda:
        dev = torch.device("cuda")
        peaks["GPU"] = matmul_peak(dev)
        peaks["GPU bf16"] = matmul_peak(dev, dtype=torch.bfloat16)
    log(f"matmul peaks (TFLOP/s): { {k: round(v / 1e12, 4) for k, v in peaks.items()} }")
    datasets: dict[str, xr.Dataset] = {}
    models: list[dict[str, Any]] = []
    for name in plan.models:
        if deadline is not None and deadline() < 30:
            models.append({"name": name, "skipped": "time budget", "speed": [], "flops": 0.0})
            continue
        sur = Surrogate.pretrained(name, device="cpu")
        key = repr(sorted((sur.card or {}).get("data", {}).items()))
        if key not in datasets:
            t0 = time.perf_counter()
            datasets[key] = fresh_dataset(sur.card or {}, plan.samples)
            log(f"{name}: {plan.samples} fresh samples in {time.perf_counter() - t0:.0f} s")
        inputs, truth = fresh_samples(sur, datasets[key])
        entry: dict[str, Any] = {"name": name, "problem": sur.problem,
                                 "resolution": sur.resolution,
                                 "output_resolution": sur.output_resolution,
                                 "card_test_rel_l2": sur.test_error,
                                 "flops": forward_flops(sur, inputs[0]), "speed": [],
                                 "precision": []}
        if cuda:
            gpu = Surrogate.pretrained(name, device="cuda")
            entry["speed"] += speed_rows(
                gpu, inputs, batches=plan.gpu_batches, where="GPU", flops=entry["flops"],
                peak=peaks["GPU"], repeats=plan.repeats, min_time=plan.min_time,
                max_call_s=plan.max_call_s)
            rows = precision_rows(gpu, inputs, truth, precisions=plan.precisions_gpu,
                                  repeats=plan.repeats, min_time=plan.min_time)
            entry["precision"] += [{"where": "GPU", **r} for r in rows]
            entry["gpu_auto_batch"] = gpu.batch_size
            del gpu
        for n in plan.cpu_threads:
            where = _label(n, cores)
            if deadline is not None and deadline() < plan.cpu_reserve_s:
                entry["speed"].append({"where": where, "batch": "-", "skipped": "time budget"})
                continue
            with threads(n):
                entry["speed"] += speed_rows(
                    sur, inputs, batches=plan.cpu_batches, where=where, flops=entry["flops"],
                    peak=peaks[where], repeats=plan.repeats, min_time=plan.min_time,
                    max_call_s=plan.max_call_s)
                if n == 1:
                    rows = precision_rows(sur, inputs, truth, precisions=plan.precisions_cpu,
                                          repeats=plan.repeats, min_time=plan.min_time)
                    entry["precision"] += [{"where": where, **r} for r in rows]
        models.append(entry)
        log(f"{name}: " + "; ".join(
            f"{r['where']} b{r['batch']}: {r.get('overhead', float('nan')):.3f}"
            for r in entry["speed"]))
    return {"models": models, "peaks": peaks,
            "plan": {k: list(v) if isinstance(v, tuple) else v
                     for k, v in plan.__dict__.items()}}
