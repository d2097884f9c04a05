"""The GPU campaign's driver (docs/training.md, "What has run on a GPU"), run from the
repository root, also on the device machine's bare copy where the package is not installed::

    python -m benchmarks.gpu.campaign correctness --out $OUT
    python -m benchmarks.gpu.campaign darcy --out $OUT --from carry/darcy
    python -m benchmarks.gpu.campaign throughput --out out/t --rehearse     # CPU, seconds
"""

import sys

from .runner import DRIVER, main

if __name__ == "__main__":
    sys.exit(main(program=DRIVER))
