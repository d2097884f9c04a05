#!/usr/bin/env bash
# Set up neuralop-fem on a fresh machine (idempotent, safe to re-run).
#
# torch: if a torch >= 2.3 is already installed (for example a CUDA build on a GPU
# machine) it is kept. Otherwise torch==2.13.0 is installed: on a CPU-only machine with
# a local wheel this takes seconds; on a Linux GPU machine PyPI's 2.13.0 is the CUDA build.
# An unpinned install would pull the newest CUDA build (several GB) even on a CPU box.
#
# pip runs quietly; one line on stderr before each step says what is being installed (a
# fresh install downloads up to ~1.5 GB and can take minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
say() { printf 'setup: %s\n' "$*" >&2; }
if "$PY" -c 'import sys, torch; v = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2]); sys.exit(v < (2, 3))' 2>/dev/null; then
    say "keeping the installed torch $("$PY" -c 'import torch; print(torch.__version__)')"
else
    say "installing torch 2.13.0 (~200 MB as a CPU build, a few GB as PyPI's Linux CUDA build; can take minutes)..."
    "$PY" -m pip install --quiet "torch==2.13.0"
fi
say "installing neuralop-fem (editable) and its test extras..."
"$PY" -m pip install --quiet -e ".[test]"
say "done: run \`neuralop-fem demo\` or \`$PY -m pytest\`"
