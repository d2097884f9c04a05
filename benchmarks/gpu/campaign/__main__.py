"""The GPU campaign's driver (docs/training.md, "What has run on a GPU"), run from the
repository root, also on the device machine's bare copy where the package is not installed::

    python -m benchmarks.gpu.campaign correctness --out $OUT
    python -m benchmarks.gpu.campaign darcy --out $OUT --from carry/darcy
    python -m benchmarks.gpu.campaign throughput --out out/t --rehearse     # CPU, seconds

The checkout goes on ``PYTHONPATH`` for the processes a stage starts (pytest, torchrun, the
workers), which import its packages as this process does from the repository root.
"""

import os
import sys

from .machine import ROOT
from .runner import DRIVER, main

if __name__ == "__main__":
    path = os.environ.get("PYTHONPATH", "")
    if str(ROOT) not in path.split(os.pathsep):
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), path)))
    sys.exit(main(program=DRIVER))
