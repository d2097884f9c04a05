#!/usr/bin/env bash
# Set up neuralop-fem on a fresh machine (idempotent, safe to re-run).
#
# torch: if a torch >= 2.3 is already installed (for example a CUDA build on a GPU
# machine) it is kept. Otherwise torch==2.13.0 is installed: on a CPU-only machine with
# a local wheel this takes seconds; on a Linux GPU machine PyPI's 2.13.0 is the CUDA build.
# An unpinned install would pull the newest CUDA build (several GB) even on a CPU box.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if ! "$PY" -c 'import sys, torch; v = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2]); sys.exit(v < (2, 3))' 2>/dev/null; then
    "$PY" -m pip install --quiet "torch==2.13.0"
fi
"$PY" -m pip install --quiet -e ".[test]"
