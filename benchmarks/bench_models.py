"""Speed and memory of the operator learners on CPU (Cao 2021 models, PAPER_SPEC §9).

Two parts, every case in a fresh subprocess (so ``ru_maxrss`` is that case's peak):

* ``scaling``: one encoder layer of the Burgers model (d = 96, 1 head, batch 4),
  forward + backward in training mode, for n = 512 ... 32768 (Galerkin, and Fourier
  without attention dropout, which is evaluated as Q (K^T V)) and up to 8192 (Fourier with
  10 % dropout on its n x n scores, which forces the quadratic order); the growth exponents
  of time and of the memory increase over the baseline are fitted on log-log axes (~1 for
  the first two, ~2 for the third).
* ``cpu``: full models with the protocol of PAPER_SPEC §9: one iteration =
  ``zero_grad`` + forward + MSE + backward on random inputs, ``torch.set_num_threads(1)``;
  also eval-mode forward it/s; the reference figures are listed beside ours.

Run::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_models.py
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_models.py --quick

* ``vs-reference``: back to back in one process, our model and the same model (same
  weights) with every attention layer evaluated in the reference code's order of computation
  (``benchmarks/_reference_order.py``): the speed ratio on the same CPU at the same moment.
* ``fourier-scale``: a small training run of the Burgers Fourier Transformer with and
  without the sqrt(d') score divisor (the reference code vs the paper's formula).

Writes ``benchmarks/results/models_cpu``, ``models_scaling`` and ``models_fourier_scale``
(``.json`` and ``.md``; ``models_quick_*`` with ``--quick``). Each timed case also records
``calib_gflops``, the GFLOP/s of a fixed GEMM in the same process, so that results taken
on a busy machine can be read against an idle core (about 80-90 GFLOP/s).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from neuralop_fem.environment import cpu_model
from neuralop_fem.reproduce.script import run_script

RESULTS = Path(__file__).parent / "results"

# PAPER_SPEC §9: reference code, torch 2.13 CPU, 2-vCPU shared box, 1 thread.
REFERENCE = {
    ("burgers-galerkin", 512, 8): {"train_it_s": 6.5, "eval_it_s": 20.1, "rss_mib": 509},
    ("burgers-fourier", 512, 8): {"train_it_s": 2.5, "eval_it_s": 4.6, "rss_mib": 734},
    ("burgers-galerkin", 2048, 8): {"train_it_s": 1.75, "eval_it_s": 4.9, "rss_mib": 942},
    ("darcy-galerkin", 141, 4): {"train_it_s": 0.47, "eval_it_s": 1.6, "rss_mib": 1508},
    ("darcy-fourier", 141, 4): {"train_it_s": None, "eval_it_s": None, "rss_mib": 4407},
}


def _calibrate_gflops() -> float:
    """Best-of-10 GFLOP/s of a (4096 x 96) @ (96 x 96) float32 GEMM: the CPU share this
    process got (about 80-90 on an idle core of the reference box)."""
    import torch

    a, b = torch.randn(4096, 96), torch.randn(96, 96)
    best = min(_timed(lambda: a @ b, 10))
    return 2 * 4096 * 96 * 96 / best / 1e9


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _current_rss_mib() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _timed(fn, iters: int) -> list[float]:
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def run_case(case: dict) -> dict:
    """Run one case in this process (called in a fresh subprocess)."""
    import torch

    torch.set_num_threads(case["threads"])
    torch.manual_seed(0)
    if case["part"] == "fourier-scale":
        return _fourier_scale_case(case)
    if case["part"] == "vs-reference":
        return _versus_reference_case(case)
    calib = _calibrate_gflops()
    if case["part"] == "scaling":
        from neuralop_fem.models import EncoderLayer

        layer = EncoderLayer(96, 192, num_heads=1, pos_dim=1, attention=case["attention"],
                             attention_dropout=case["attention_dropout"])
        x = torch.randn(case["batch"], case["n"], 96)
        pos = (torch.arange(case["n"]) / case["n"]).unsqueeze(-1)
        base = _current_rss_mib()

        def step() -> None:
            layer.zero_grad(set_to_none=True)
            layer(x, pos).square().mean().backward()

        step()  # warm-up
        times = _timed(step, case["iters"])
        peak = _rss_mib()
        saved_mib = _saved_mib(lambda: layer(x, pos).square().mean())
        return {**case, "best_s": min(times), "median_s": float(np.median(times)),
                "peak_rss_mib": peak, "rss_increase_mib": peak - base,
                "saved_for_backward_mib": saved_mib,
                "calib_gflops": max(calib, _calibrate_gflops())}

    from neuralop_fem.models import build_model

    model = build_model(case["preset"])
    n, b = case["n"], case["batch"]
    shape = (b, n, 1) if case["preset"].startswith("burgers") else (b, n, n, 1)
    x = torch.randn(shape)
    with torch.no_grad():
        target = torch.randn(model(x[:1]).shape[1:]).expand(b, *model(x[:1]).shape[1:])

    def train_step() -> None:
        model.zero_grad(set_to_none=True)
        torch.nn.functional.mse_loss(model(x), target).backward()

    model.train()
    train_step()  # warm-up
    train = _timed(train_step, case["iters"])
    model.eval()
    with torch.no_grad():
        model(x)
        evals = _timed(lambda: model(x), case["iters"])
    return {**case, "params": sum(p.numel() for p in model.parameters()),
            "train_it_s_best": 1 / min(train), "train_it_s_median": 1 / float(np.median(train)),
            "eval_it_s_best": 1 / min(evals), "peak_rss_mib": _rss_mib(),
            "calib_gflops": max(calib, _calibrate_gflops())}


def _saved_mib(fn) -> float:
    """Bytes autograd keeps for the backward pass of ``fn()`` (each storage counted once)."""
    import torch

    saved: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        saved[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    del out
    return sum(saved.values()) / 2**20


def _versus_reference_case(case: dict) -> dict:
    """Ours and the reference's order of computation (same weights), timed alternately."""
    import torch
    from _reference_order import use_reference_order

    from neuralop_fem.models import build_model

    ours = build_model(case["preset"])
    ref = build_model(case["preset"])
    ref.load_state_dict(ours.state_dict())
    use_reference_order(ref, reference_dropout=False)
    n, b = case["n"], case["batch"]
    x = torch.randn((b, n, 1) if case["preset"].startswith("burgers") else (b, n, n, 1))
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

    def step(model) -> None:
        model.zero_grad(set_to_none=True)
        torch.nn.functional.mse_loss(model(x), target).backward()

    times: dict[str, list[float]] = {k: [] for k in models}
    for model in models.values():
        step(model)  # warm-up
    for _ in range(case["iters"]):
        for key, model in models.items():
            times[key] += _timed(lambda m=model: step(m), 1)
    out = {**case, "max_rel_diff_eval": max_diff}
    for key, ts in times.items():
        out[key] = {
            "it_s_best": 1 / min(ts), "it_s_median": 1 / float(np.median(ts)),
            "saved_for_backward_mib": _saved_mib(
                lambda m=models[key]: torch.nn.functional.mse_loss(m(x), target)
            ),
        }
    out["speedup_median"] = out["ours"]["it_s_median"] / out["reference_order"]["it_s_median"]
    out["speedup_best"] = out["ours"]["it_s_best"] / out["reference_order"]["it_s_best"]
    return out


def _fourier_scale_case(case: dict) -> dict:
    """Train a small Burgers-shaped Fourier Transformer on a fixed smooth operator."""
    import torch

    from neuralop_fem.models import build_model

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


def _subprocess(case: dict) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--case", json.dumps(case)],
        capture_output=True, text=True, check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _hardware() -> dict:
    import torch

    return {
        "cpu_model": cpu_model(), "cpu_count": os.cpu_count(),
        "torch_threads": 1,
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
        "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
        "python": platform.python_version(), "torch": torch.__version__,
        "numpy": np.__version__,
        "note": "2-core box shared with other engineers' jobs; best and median of `iters` "
                "timed iterations after one warm-up; peak RSS = ru_maxrss of a fresh process",
    }


def _slope(x: list[float], y: list[float]) -> float:
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def scaling(quick: bool) -> dict:
    full = [512, 1024, 2048, 4096, 8192, 16384, 32768]
    # label: (kernel, attention-matrix dropout, sizes). Without dropout the Fourier kernel is
    # reassociated (linear in n); with dropout on its n x n scores it is quadratic.
    series = {"galerkin": ("galerkin", 0.0, full), "fourier": ("fourier", 0.0, full),
              "fourier, score dropout 0.1": ("fourier", 0.1, full[:5])}
    rows, fits = [], {}
    for label, (attention, dropout, ns) in series.items():
        res = []
        for n in full[:3] if quick else ns:
            iters = 3 if n >= 4096 else 5
            res.append(_subprocess({"part": "scaling", "attention": attention, "n": n,
                                    "attention_dropout": dropout, "label": label,
                                    "batch": 4, "iters": iters, "threads": 1}))
        rows += res
        big = [r for r in res if r["n"] >= 1024]  # fixed overheads dominate below
        fits[label] = {
            "time_exponent": _slope([r["n"] for r in big], [r["best_s"] for r in big]),
            "memory_exponent": _slope([r["n"] for r in big],
                                      [max(r["rss_increase_mib"], 1.0) for r in big]),
            "saved_memory_exponent": _slope([r["n"] for r in big],
                                            [r["saved_for_backward_mib"] for r in big]),
        }
    return {"rows": rows, "fits": fits}


def cpu(quick: bool) -> dict:
    if quick:
        cases = [("burgers-galerkin", 128, 2, 3), ("darcy-galerkin", 29, 1, 2)]
    else:
        cases = [("burgers-galerkin", 512, 8, 40), ("burgers-fourier", 512, 8, 10),
                 ("burgers-galerkin", 2048, 8, 8), ("darcy-galerkin", 141, 4, 6),
                 ("darcy-fourier", 141, 4, 2)]
    return _run_cases("cpu", cases)


def _run_cases(part: str, cases: list[tuple[str, int, int, int]]) -> dict:
    """Each (preset, n, batch, iters) case in a fresh subprocess, with the reference figures."""
    rows = []
    for preset, n, b, iters in cases:
        r = _subprocess({"part": part, "preset": preset, "n": n, "batch": b,
                         "iters": iters, "threads": 1})
        r["reference"] = REFERENCE.get((preset, n, b))
        rows.append(r)
    return {"rows": rows}


def versus_reference(quick: bool) -> dict:
    if quick:
        cases = [("burgers-galerkin", 128, 2, 3), ("darcy-galerkin", 29, 1, 2)]
    else:
        cases = [("burgers-galerkin", 512, 8, 60), ("burgers-galerkin", 2048, 8, 16),
                 ("darcy-galerkin", 141, 4, 10), ("burgers-fourier", 512, 8, 20)]
    return _run_cases("vs-reference", cases)


def _markdown_versus_reference(res: dict, hw: dict) -> str:
    lines = ["# Back to back: our attention vs the reference's order of computation (1 thread)",
             "", f"CPU: {hw['cpu_model']} ({hw['cpu_count']} cores), torch {hw['torch']}. "
             f"{hw['note']}.", "",
             "Same model, same weights, same input; `reference order` evaluates every attention "
             "layer as the reference code does (separate Q/K/V projections, one LayerNorm call per "
             "head, coordinates concatenated to Q, K, V, (d' x d') matrix with the reference's "
             "always-on 50 % dropout, then `fc`; benchmarks/_reference_order.py). Both models are "
             "timed alternately in one process (train step = zero_grad + forward + MSE + "
             "backward), so machine load hits both alike. `diff` = max relative difference of "
             "the eval outputs with the reference dropout off (the two orders compute the same "
             "function). `saved` = bytes autograd keeps for backward.", "",
             "| case (batch) | ours it/s best / median | reference order it/s best / median | "
             "speedup (median) | PAPER_SPEC ref it/s | ours saved MiB | ref-order saved MiB "
             "| diff |", "|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        ours, ref = r["ours"], r["reference_order"]
        lines.append(
            f"| {r['preset']} n={r['n']} ({r['batch']}) | {ours['it_s_best']:.3g} / "
            f"{ours['it_s_median']:.3g} | {ref['it_s_best']:.3g} / {ref['it_s_median']:.3g} | "
            f"{r['speedup_median']:.2f}x | {(r['reference'] or {}).get('train_it_s', '-')} | "
            f"{ours['saved_for_backward_mib']:.0f} | {ref['saved_for_backward_mib']:.0f} | "
            f"{r['max_rel_diff_eval']:.1e} |"
        )
    return "\n".join(lines) + "\n"


def fourier_scale(quick: bool) -> dict:
    rows = [
        _subprocess({"part": "fourier-scale", "fourier_scale": fs, "seed": seed,
                     "steps": 20 if quick else 300, "threads": 1})
        for fs in ("sqrt", "none") for seed in ((0,) if quick else (0, 1, 2))
    ]
    return {"rows": rows}


def _markdown_fourier_scale(res: dict, hw: dict) -> str:
    lines = ["# Fourier attention: divide the scores by sqrt(d') or not", "",
             "burgers-fourier (4 layers, d = 96), n = 128, 16 fixed smooth samples, target "
             "roll(u, 5)^2 - u/2, Adam lr 1e-3, mean relative L2 of the last 10 steps.", "",
             "| fourier_scale | seed | steps | first loss | final loss |", "|---|---|---|---|---|"]
    for r in res["rows"]:
        lines.append(f"| {r['fourier_scale']} | {r['seed']} | {r['steps']} | {r['first']:.3g} | "
                     f"{r['final_rel_l2']:.3g} |")
    return "\n".join(lines) + "\n"


def _markdown_cpu(res: dict, hw: dict) -> str:
    lines = ["# Operator learners: full-model CPU speed (1 thread)", "",
             f"CPU: {hw['cpu_model']} ({hw['cpu_count']} cores), torch {hw['torch']}, "
             f"torch threads 1. {hw['note']}.", "",
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
            f"{r['calib_gflops']:.0f} |"
        )
    return "\n".join(lines) + "\n"


def _markdown_scaling(res: dict, hw: dict) -> str:
    lines = ["# Encoder-layer scaling (d = 96, 1 head, batch 4, forward + backward, 1 thread)",
             "", f"CPU: {hw['cpu_model']}. {hw['note']}.", "",
             "`saved` = bytes autograd keeps for the backward pass (exact, from "
             "`saved_tensors_hooks`); `increase` = ru_maxrss minus the RSS before the first "
             "step (allocator-dependent).", "",
             "| attention | n | best s | median s | saved MiB | peak RSS MiB | increase MiB "
             "| calib |", "|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        lines.append(f"| {r['label']} | {r['n']} | {r['best_s']:.4f} | {r['median_s']:.4f} | "
                     f"{r['saved_for_backward_mib']:.1f} | {r['peak_rss_mib']:.0f} | "
                     f"{r['rss_increase_mib']:.0f} | "
                     f"{r['calib_gflops']:.0f} |")
    lines += ["", "Fitted exponents (n >= 1024): " + "; ".join(
        f"{k}: time n^{v['time_exponent']:.2f}, saved memory "
        f"n^{v['saved_memory_exponent']:.2f}, RSS increase n^{v['memory_exponent']:.2f}"
        for k, v in res["fits"].items())]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny smoke run")
    parser.add_argument(
        "--part", choices=["scaling", "cpu", "vs-reference", "fourier-scale", "all"],
        default="all",
    )
    parser.add_argument("--case", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.case:
        print(json.dumps(run_case(json.loads(args.case))))
        return 0
    RESULTS.mkdir(parents=True, exist_ok=True)
    hw = _hardware()
    prefix = "models_quick_" if args.quick else "models_"
    if args.part in ("cpu", "all"):
        res = {"hardware": hw, **cpu(args.quick)}
        (RESULTS / f"{prefix}cpu.json").write_text(json.dumps(res, indent=2))
        (RESULTS / f"{prefix}cpu.md").write_text(_markdown_cpu(res, hw))
    if args.part in ("vs-reference", "all"):
        res = {"hardware": hw, **versus_reference(args.quick)}
        (RESULTS / f"{prefix}vs_reference.json").write_text(json.dumps(res, indent=2))
        (RESULTS / f"{prefix}vs_reference.md").write_text(_markdown_versus_reference(res, hw))
    if args.part in ("scaling", "all"):
        res = {"hardware": hw, **scaling(args.quick)}
        (RESULTS / f"{prefix}scaling.json").write_text(json.dumps(res, indent=2))
        (RESULTS / f"{prefix}scaling.md").write_text(_markdown_scaling(res, hw))
    if args.part in ("fourier-scale", "all"):
        res = {"hardware": hw, **fourier_scale(args.quick)}
        (RESULTS / f"{prefix}fourier_scale.json").write_text(json.dumps(res, indent=2))
        (RESULTS / f"{prefix}fourier_scale.md").write_text(_markdown_fourier_scale(res, hw))
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
