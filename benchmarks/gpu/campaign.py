"""The GPU campaign (:mod:`neuralop_fem.gpu_campaign`; docs/training.md, "What has run on a GPU").

    python benchmarks/gpu/campaign.py correctness --out $OUT
    python benchmarks/gpu/campaign.py darcy --out $OUT --from carry/darcy
    python benchmarks/gpu/campaign.py throughput --out out/t --rehearse     # CPU, seconds

On the device machine the repository is a bare copy with the package not installed: there this
driver runs again with the copy's root on ``PYTHONPATH`` (the stages' subprocesses inherit it).
"""

import importlib.util
import os
import sys
from pathlib import Path

if __name__ == "__main__":
    if importlib.util.find_spec("neuralop_fem") is None:
        root = str(Path(__file__).resolve().parents[2])
        path = os.environ.get("PYTHONPATH", "")
        if root in path.split(os.pathsep):
            print(f"campaign: no neuralop_fem package under {root}", file=sys.stderr)
            sys.exit(2)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (root, path)))}
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    from neuralop_fem.gpu_campaign import main

    sys.exit(main())
