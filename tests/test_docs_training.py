"""docs/training.md followed literally by a newcomer, at small sizes.

The first commands of the page run in order, as written, in an empty directory, then its first
Python snippet runs there as a script: every file the snippet uses must have been made by the
commands before it. Only sizes change (:data:`SHRINK`, :data:`SNIPPET_SHRINK`), and every rule
must match, so a page that changes them fails here instead of running at full size.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from .training.conftest import TINY_BURGERS, TINY_DARCY, set_args

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "training.md"

#: (pattern, replacement): the page's sizes -> small ones, one match each.
SHRINK = [
    (r"^(neuralop-fem generate burgers .*)--samples 1224",
     r"\1--samples 12 --resolution 64 --workers 0"),
    (r"^(neuralop-fem generate darcy .*)--samples 1224",
     r"\1--samples 12 --resolution 29 --workers 0"),
    (r"^(neuralop-fem train .*--preset burgers-galerkin.*)$",
     r"\1 --epochs 1 --batch-size 4 " + shlex.join(set_args(TINY_BURGERS))),
    (r"^(neuralop-fem evaluate .*)--resolution 8192", r"\1--resolution 64"),
]
#: The snippet's paper-size run -> one epoch of a tiny model on the small file.
SNIPPET_SHRINK = [
    (r"replace\(epochs=50\)",
     "replace(epochs=1, n_train=8, n_val=2, n_test=2, batch_size=4, resolution=29)"),
    (r'model_config=PRESETS\["darcy-galerkin"\]',
     f'model_config=PRESETS["darcy-galerkin"].replace(**{TINY_DARCY!r})'),
]


def _first_blocks() -> tuple[list[str], str]:
    """The command lines (comments dropped) of the page's first bash block and its first
    Python snippet."""
    text = PAGE.read_text()
    bash = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    snippet = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    lines = [line.split("#", 1)[0].strip() for line in bash.splitlines()]
    return [line for line in lines if line], snippet


def _shrink(text: str, rules: list[tuple[str, str]], flags: int = 0) -> str:
    for pattern, replacement in rules:
        text, n = re.subn(pattern, replacement, text, flags=flags)
        assert n == 1, f"no single match of {pattern!r} in docs/training.md: update the rules"
    return text


def test_the_first_commands_make_what_the_first_snippet_uses(tmp_path):
    commands, snippet = _first_blocks()
    small = _shrink("\n".join(commands), SHRINK, re.M).splitlines()
    (tmp_path / "snippet.py").write_text(_shrink(snippet, SNIPPET_SHRINK))
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    for line in small:
        if line.startswith("neuralop-fem "):
            argv = [sys.executable, "-m", "neuralop_fem.cli", *shlex.split(line)[1:]]
        else:
            assert line.split()[0] == "mkdir", f"unexpected command in docs/training.md: {line}"
            argv = shlex.split(line)
        proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, f"{line}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    proc = subprocess.run([sys.executable, "snippet.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "runs" / "gt141" / "best.pt").exists()
    # the configuration-file section trains again from the run the snippet wrote
    assert "--config runs/gt141/run.json" in PAGE.read_text()
