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

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m benchmarks.bench_models
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m benchmarks.bench_models --quick

* ``vs-reference``: back to back in one process, our model and the same model (same
  weights) with every attention layer evaluated in the reference code's order of computation
  (``benchmarks/lab/reference_order.py``): the speed ratio on the same CPU at the
  same moment.
* ``fourier-scale``: a small training run of the Burgers Fourier Transformer with and
  without the sqrt(d') score divisor (the reference code vs the paper's formula).

Writes ``benchmarks/results/models_cpu``, ``models_scaling`` and ``models_fourier_scale``
(``.json`` and ``.md``; ``models_quick_*`` with ``--quick``). Each timed case also records
``calib_gflops``, the GFLOP/s of a fixed GEMM in the same process, so that results taken
on a busy machine can be read against an idle core (about 80-90 GFLOP/s).
The measurements are :mod:`benchmarks.lab.models`'.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchmarks.lab import models as bm
from neuralop_fem.reproduce.results import write_results
from neuralop_fem.reproduce.script_runner import run_script

RESULTS = Path(__file__).parent / "results"
PARTS = {"cpu": (bm.cpu, bm.markdown_cpu, "cpu"),
         "vs-reference": (bm.versus_reference, bm.markdown_versus_reference, "vs_reference"),
         "scaling": (bm.scaling, bm.markdown_scaling, "scaling"),
         "fourier-scale": (bm.fourier_scale, bm.markdown_fourier_scale, "fourier_scale")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny smoke run")
    parser.add_argument("--part", choices=[*PARTS, "all"], default="all")
    parser.add_argument("--case", help=argparse.SUPPRESS)  # one case, as the subprocesses run
    args = parser.parse_args(argv)
    if args.case:
        print(json.dumps(bm.run_case(json.loads(args.case))))
        return 0
    hw = bm.hardware_block()
    prefix = "models_quick_" if args.quick else "models_"
    for part, (measure, markdown, stem) in PARTS.items():
        if args.part in (part, "all"):
            res = {"hardware": hw, **measure(args.quick)}
            write_results(RESULTS, prefix + stem, res, markdown(res, hw))
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
