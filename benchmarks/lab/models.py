"""Speed and memory of the operator learners on CPU (Cao 2021 models; docs/models.md,
"Measured speed and memory").

Every case runs in a fresh process (:func:`run_in_subprocess`), so that ``ru_maxrss`` is that
case's peak. The parts (``case["part"]``):

* ``scaling``: one encoder layer (d = 96, 1 head) forward + backward in training mode at
  length ``n``; the growth exponents are fitted by :func:`scaling`;
* ``cpu``: a full preset, one iteration = ``zero_grad`` + forward + MSE + backward, and the
  eval-mode forward, one thread;
* ``vs-reference``: our model and the same weights in the reference code's order of
  computation (:mod:`.reference_order`), timed alternately in one process;
* ``fourier-scale``: a small training run of ``burgers-fourier`` with or without the
  sqrt(d') score divisor.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from neuralop_fem.models import EncoderLayer, build_model

from .reference_order import use_reference_order
from .timing import (
    calibrate_gflops,
    current_rss_mib,
    hardware,
    peak_rss_mib,
    saved_for_backward_mib,
    slope,
    timed,
)

__all__ = ["NOTE", "REFERENCE", "cpu", "fourier_scale", "hardware_block", "markdown_cpu",
           "markdown_fourier_scale", "markdown_scaling", "markdown_versus_reference",
           "run_case", "run_in_subprocess", "scaling", "versus_reference"]

#: The repository root, where a fresh process finds the lab (``python -c`` puts its working
#: directory on the path).
ROOT = Path(__file__).resolve().parents[2]

#: The reference code's figures (Cao 2021's benchmark protocol, docs/models.md): torch 2.13
#: CPU, 2-vCPU shared box, 1 thread, keyed by (preset, n, batch).
REFERENCE = {
    ("burgers-galerkin", 512, 8): {"train_it_s": 6.5, "eval_it_s": 20.1, "rss_mib": 509},
    ("burgers-fourier", 512, 8): {"train_it_s": 2.5, "eval_it_s": 4.6, "rss_mib": 734},
    ("burgers-galerkin", 2048, 8): {"train_it_s": 1.75, "eval_it_s": 4.9, "rss_mib": 942},
    ("darcy-galerkin", 141, 4): {"train_it_s": 0.47, "eval_it_s": 1.6, "rss_mib": 1508},
    ("darcy-fourier", 141, 4): {"train_it_s": None, "eval_it_s": None, "rss_mib": 4407},
}
#: How the timings are taken (the hardware block's note).
NOTE = ("2-core box shared with other engineers' jobs; best and median of `iters` timed "
        "iterations after one warm-up; peak RSS = ru_maxrss of a fresh process")


def hardware_block() -> dict[str, Any]:
    """The hardware block of the models' results files (imports torch, so its version is
    listed; every case runs one torch thread)."""
    import torch  # noqa: F401  (listed by the versions once imported)

    return {**hardware(NOTE), "torch_threads": 1}


def _input(model: Any, n: int, batch: int) -> Any:
    """Random inputs (batch, n[, n], 1) on the grid of ``model`` (its config's space dims)."""
    import torch

    return torch.randn((batch, *[n] * model.config.spatial_dims, 1))


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    """Run one case (a dict with ``part``, ``threads`` and the part's settings) in this
    process; return the case with its measurements added."""
    import torch

    torch.set_num_threads(case["threads"])
    torch.manual_seed(0)
    if case["part"] == "fourier-scale":
        return _fourier_scale_case(case)
    if case["part"] == "vs-reference":
        return _versus_reference_case(case)
    calib = calibrate_gflops()
    if case["part"] == "scaling":

        layer = EncoderLayer(96, 192, num_heads=1, pos_dim=1, attention=case["attention"],
                             attention_dropout=case["attention_dropout"])
        x = torch.randn(case["batch"], case["n"], 96)
        pos = (torch.arange(case["n"]) / case["n"]).unsqueeze(-1)
        base = current_rss_mib()

        def step() -> None:
            layer.zero_grad(set_to_none=True)
            layer(x, pos).square().mean().backward()

        step()  # warm-up
        times = timed(step, case["iters"])
        peak = peak_rss_mib()
        saved = saved_for_backward_mib(lambda: layer(x, pos).square().mean())
        return {**case, "best_s": min(times), "median_s": float(np.median(times)),
                "peak_rss_mib": peak, "rss_increase_mib": peak - base,
                "saved_for_backward_mib": saved, "calib_gflops": max(calib, calibrate_gflops())}


    model = build_model(case["preset"])
    x = _input(model, case["n"], case["batch"])
    with torch.no_grad():
        shape = model(x[:1]).shape[1:]
    target = torch.randn(shape).expand(case["batch"], *shape)

    def train_step() -> None:
        model.zero_grad(set_to_none=True)
        torch.nn.functional.mse_loss(model(x), target).backward()

    model.train()
    train_step()  # warm-up
    train = timed(train_step, case["iters"])
    model.eval()
    with torch.no_grad():
        model(x)
        evals = timed(lambda: model(x), case["iters"])
    return {**case, "params": sum(p.numel() for p in model.parameters()),
            "train_it_s_best": 1 / min(train), "train_it_s_median": 1 / float(np.median(train)),
            "eval_it_s_best": 1 / min(evals), "peak_rss_mib": peak_rss_mib(),
            "calib_gflops": max(calib, calibrate_gflops())}


def _versus_reference_case(case: dict[str, Any]) -> dict[str, Any]:
    """Ours and the reference's order of computation (same weights), timed alternately."""
    import torch


    ours = build_model(case["preset"])
    ref = build_model(case["preset"])
    ref.load_state_dict(ours.state_dict())
    use_reference_order(ref, reference_dropout=False)
    x = _input(ours, case["n"], case["batch"])
    ours.eval(), ref.eval()
    with torch.no_grad():
        y_ours, y_ref = ours(x), ref(x)
    max_diff = float((y_ours - y_ref).abs().max() / y_ours.abs().max())
    if max_diff > 1e-5:  # the comparison is only meaningful for the same function
        msg = f"reference order differs from ours by {max_diff:.2e} (relative) on {case}"
        raise RuntimeError(msg)
    use_reference_order(ref, reference_dropout=True)  # time it with the reference's dropout
    target = torch.randn_like(y_ours)
    models = {"ours": ours.train(), "reference_order": ref.train()}

    def step(model: Any) -> None:
        model.zero_grad(set_to_none=True)
        torch.nn.functional.mse_loss(model(x), target).backward()

    times: dict[str, list[float]] = {k: [] for k in models}
    for model in models.values():
        step(model)  # warm-up
    for _ in range(case["iters"]):
        for key, model in models.items():
            times[key] += timed(lambda m=model: step(m), 1)
    out = {**case, "max_rel_diff_eval": max_diff}
    for key, ts in times.items():
        out[key] = {
            "it_s_best": 1 / min(ts), "it_s_median": 1 / float(np.median(ts)),
            "saved_for_backward_mib": saved_for_backward_mib(
                lambda m=models[key]: torch.nn.functional.mse_loss(m(x), target)),
        }
    out["speedup_median"] = out["ours"]["it_s_median"] / out["reference_order"]["it_s_median"]
    out["speedup_best"] = out["ours"]["it_s_best"] / out["reference_order"]["it_s_best"]
    return out


def _fourier_scale_case(case: dict[str, Any]) -> dict[str, Any]:
    """Train a small Burgers-shaped Fourier Transformer on a fixed smooth operator."""
    import torch


    torch.manual_seed(case["seed"])
    n, batch = 128, 16
    model = build_model("burgers-fourier", fourier_scale=case["fourier_scale"], ffn_dropout=0.0)
    t = torch.arange(n) / n
    coef = torch.randn(batch, 4)
    k = torch.arange(1, 5)
    x = torch.einsum("bk,kx->bx", coef, torch.sin(2 * torch.pi * k[:, None] * t)).unsqueeze(-1)
    y = torch.roll(x, 5, dims=1) ** 2 - 0.5 * x  # nonlinear and nonlocal
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(case["steps"]):
        opt.zero_grad()
        loss = ((model(x) - y).norm(dim=1) / y.norm(dim=1)).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return {**case, "final_rel_l2": float(np.mean(losses[-10:])), "first": losses[0]}


def run_in_subprocess(case: dict[str, Any]) -> dict[str, Any]:
    """:func:`run_case` in a fresh Python process (its own peak memory)."""
    code = ("import json, sys\nfrom benchmarks.lab.models import run_case\n"
            "print(json.dumps(run_case(json.loads(sys.argv[1]))))")
    out = subprocess.run([sys.executable, "-c", code, json.dumps(case)], cwd=ROOT,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def scaling(quick: bool) -> dict[str, Any]:
    """One encoder layer at n = 512 ... 32768 (``quick``: 512 ... 2048): Galerkin, Fourier
    without score dropout (reassociated, linear in n) and with 10 % dropout on its n x n
    scores (quadratic), with the exponents of time and memory fitted for n >= 1024."""
    full = [512, 1024, 2048, 4096, 8192, 16384, 32768]
    series = {"galerkin": ("galerkin", 0.0, full), "fourier": ("fourier", 0.0, full),
              "fourier, score dropout 0.1": ("fourier", 0.1, full[:5])}
    rows, fits = [], {}
    for label, (attention, dropout, ns) in series.items():
        res = [run_in_subprocess({"part": "scaling", "attention": attention, "n": n,
                                  "attention_dropout": dropout, "label": label, "batch": 4,
                                  "iters": 3 if n >= 4096 else 5, "threads": 1})
               for n in (full[:3] if quick else ns)]
        rows += res
        big = [r for r in res if r["n"] >= 1024]  # fixed overheads dominate below
        ns_big = [r["n"] for r in big]
        fits[label] = {
            "time_exponent": slope(ns_big, [r["best_s"] for r in big]),
            "memory_exponent": slope(ns_big, [max(r["rss_increase_mib"], 1.0) for r in big]),
            "saved_memory_exponent": slope(ns_big, [r["saved_for_backward_mib"] for r in big]),
        }
    return {"rows": rows, "fits": fits}


def _run_cases(part: str, cases: list[tuple[str, int, int, int]]) -> dict[str, Any]:
    """Each (preset, n, batch, iters) case in a fresh process, with the reference figures."""
    rows = []
    for preset, n, b, iters in cases:
        r = run_in_subprocess({"part": part, "preset": preset, "n": n, "batch": b,
                               "iters": iters, "threads": 1})
        r["reference"] = REFERENCE.get((preset, n, b))
        rows.append(r)
    return {"rows": rows}


_QUICK = [("burgers-galerkin", 128, 2, 3), ("darcy-galerkin", 29, 1, 2)]


def cpu(quick: bool) -> dict[str, Any]:
    """Full presets at the paper's sizes (``quick``: two tiny cases), one thread."""
    return _run_cases("cpu", _QUICK if quick else [
        ("burgers-galerkin", 512, 8, 40), ("burgers-fourier", 512, 8, 10),
        ("burgers-galerkin", 2048, 8, 8), ("darcy-galerkin", 141, 4, 6),
        ("darcy-fourier", 141, 4, 2), ("burgers-fno", 512, 8, 40), ("darcy-fno", 141, 4, 10)])


def versus_reference(quick: bool) -> dict[str, Any]:
    """Our attention against the reference order, back to back."""
    return _run_cases("vs-reference", _QUICK if quick else [
        ("burgers-galerkin", 512, 8, 60), ("burgers-galerkin", 2048, 8, 16),
        ("darcy-galerkin", 141, 4, 10), ("burgers-fourier", 512, 8, 20)])


def fourier_scale(quick: bool) -> dict[str, Any]:
    """``burgers-fourier`` trained with ``fourier_scale`` "sqrt" and "none" (300 steps, seeds
    0-2; ``quick``: 20 steps, seed 0)."""
    return {"rows": [run_in_subprocess({"part": "fourier-scale", "fourier_scale": fs,
                                        "seed": seed, "steps": 20 if quick else 300,
                                        "threads": 1})
                     for fs in ("sqrt", "none") for seed in ((0,) if quick else (0, 1, 2))]}


def _cpu_line(hw: dict[str, Any]) -> str:
    return f"CPU: {hw['cpu_model']} ({hw['cpu_count']} cores), torch {hw.get('torch')}"


def markdown_versus_reference(res: dict[str, Any], hw: dict[str, Any]) -> str:
    """The results file of :func:`versus_reference`."""
    lines = ["# Back to back: our attention vs the reference's order of computation (1 thread)",
             "", f"{_cpu_line(hw)}. {hw['note']}.", "",
             "Same model, same weights, same input; `reference order` evaluates every attention "
             "layer as the reference code does (separate Q/K/V projections, one LayerNorm call per "
             "head, coordinates concatenated to Q, K, V, (d' x d') matrix with the reference's "
             "always-on 50 % dropout, then `fc`; benchmarks/lab/reference_order.py). "
             "Both models are "
             "timed alternately in one process (train step = zero_grad + forward + MSE + "
             "backward), so machine load hits both alike. `diff` = max relative difference of "
             "the eval outputs with the reference dropout off (the two orders compute the same "
             "function). `saved` = bytes autograd keeps for backward.", "",
             "| case (batch) | ours it/s best / median | reference order it/s best / median | "
             "speedup (median) | reference code it/s | ours saved MiB | ref-order saved MiB "
             "| diff |", "|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        ours, ref = r["ours"], r["reference_order"]
        lines.append(
            f"| {r['preset']} n={r['n']} ({r['batch']}) | {ours['it_s_best']:.3g} / "
            f"{ours['it_s_median']:.3g} | {ref['it_s_best']:.3g} / {ref['it_s_median']:.3g} | "
            f"{r['speedup_median']:.2f}x | {(r['reference'] or {}).get('train_it_s', '-')} | "
            f"{ours['saved_for_backward_mib']:.0f} | {ref['saved_for_backward_mib']:.0f} | "
            f"{r['max_rel_diff_eval']:.1e} |")
    return "\n".join(lines) + "\n"


def markdown_fourier_scale(res: dict[str, Any], hw: dict[str, Any]) -> str:
    """The results file of :func:`fourier_scale` (``hw`` unused: the table is about loss)."""
    lines = ["# Fourier attention: divide the scores by sqrt(d') or not", "",
             "burgers-fourier (4 layers, d = 96), n = 128, 16 fixed smooth samples, target "
             "roll(u, 5)^2 - u/2, Adam lr 1e-3, mean relative L2 of the last 10 steps.", "",
             "| fourier_scale | seed | steps | first loss | final loss |", "|---|---|---|---|---|"]
    lines += [f"| {r['fourier_scale']} | {r['seed']} | {r['steps']} | {r['first']:.3g} | "
              f"{r['final_rel_l2']:.3g} |" for r in res["rows"]]
    return "\n".join(lines) + "\n"


def markdown_cpu(res: dict[str, Any], hw: dict[str, Any]) -> str:
    """The results file of :func:`cpu`."""
    lines = ["# Operator learners: full-model CPU speed (1 thread)", "",
             f"{_cpu_line(hw)}, torch threads 1. {hw['note']}.", "",
             "`calib` = GFLOP/s of a reference GEMM measured in the same process (about 80-90 "
             "on an idle core): the share of the CPU the case actually got.", "",
             "| case (batch) | params | train it/s best / median | ref it/s | eval it/s | "
             "ref eval | peak RSS MiB | ref RSS | calib |", "|---|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        ref = r["reference"] or {}
        lines.append(
            f"| {r['preset']} n={r['n']} ({r['batch']}) | {r['params']:,} | "
            f"{r['train_it_s_best']:.3g} / {r['train_it_s_median']:.3g} | "
            f"{ref.get('train_it_s', '-')} | {r['eval_it_s_best']:.3g} | "
            f"{ref.get('eval_it_s', '-')} | {r['peak_rss_mib']:.0f} | {ref.get('rss_mib', '-')} | "
            f"{r['calib_gflops']:.0f} |")
    return "\n".join(lines) + "\n"


def markdown_scaling(res: dict[str, Any], hw: dict[str, Any]) -> str:
    """The results file of :func:`scaling`."""
    lines = ["# Encoder-layer scaling (d = 96, 1 head, batch 4, forward + backward, 1 thread)",
             "", f"CPU: {hw['cpu_model']}. {hw['note']}.", "",
             "`saved` = bytes autograd keeps for the backward pass (exact, from "
             "`saved_tensors_hooks`); `increase` = ru_maxrss minus the RSS before the first "
             "step (allocator-dependent).", "",
             "| attention | n | best s | median s | saved MiB | peak RSS MiB | increase MiB "
             "| calib |", "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['label']} | {r['n']} | {r['best_s']:.4f} | {r['median_s']:.4f} | "
              f"{r['saved_for_backward_mib']:.1f} | {r['peak_rss_mib']:.0f} | "
              f"{r['rss_increase_mib']:.0f} | {r['calib_gflops']:.0f} |" for r in res["rows"]]
    lines += ["", "Fitted exponents (n >= 1024): " + "; ".join(
        f"{k}: time n^{v['time_exponent']:.2f}, saved memory "
        f"n^{v['saved_memory_exponent']:.2f}, RSS increase n^{v['memory_exponent']:.2f}"
        for k, v in res["fits"].items())]
    return "\n".join(lines) + "\n"
