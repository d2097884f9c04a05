"""Training speed of our trainer against the paper's reference code, same data, same machine
(:mod:`benchmarks.lab.reference_training`).

Bring a checkout of the reference code (github:scaomath/galerkin-transformer: its ``libs`` and
``config.yml``) and ``pip install torchinfo psutil``. On the GPU machine: carry the checkout (for
example under the ignored ``.carry/``) and the two wheels (``benchmarks/gpu/fetch_wheels.sh``
fetches them), then run with ``--device cuda --resolutions 512 8192``. Writes
``results/reference_training.{json,md}`` (``--out``). Usage::

    python -m benchmarks.bench_reference_training --reference DIR [--device cpu|cuda]
        [--threads 1] [--resolutions 512 8192] [--steps 32]
"""

import argparse
import sys
from pathlib import Path

import torch

from benchmarks.lab import reference_training as rt
from neuralop_fem.environment import environment_record
from neuralop_fem.reproduce.results import write_results

RESULTS = Path(__file__).resolve().parent / "results"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, required=True,
                        help="checkout of the reference code (libs/, config.yml)")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads (default 1)")
    parser.add_argument("--resolutions", type=int, nargs="+", default=[512])
    parser.add_argument("--steps", type=int, default=32, help="steps per epoch (default 32)")
    parser.add_argument("--out", type=Path, default=RESULTS,
                        help="folder of reference_training.{json,md} (default results/)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    rt.load_reference(args.reference)
    rows = rt.measure(args.reference, device, args.resolutions, args.steps)
    env = environment_record()
    settings = {"device": args.device, "threads": args.threads, "steps": args.steps,
                "batch": rt.BATCH, "resolutions": args.resolutions}
    write_results(args.out, "reference_training",
                  {"settings": settings, "rows": rows, "environment": env},
                  rt.markdown(rows, env, settings))
    return 0


if __name__ == "__main__":
    sys.exit(main())
