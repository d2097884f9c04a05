"""The README followed literally by a newcomer, at small sizes.

The commands of its tour run in order, as written, in an empty directory (the real command in
a subprocess), then its Python snippet runs there as a script: every path the snippet uses must
have been created by the tour. Only sizes change: sample counts, grids, epochs and a tiny model
(:data:`SHRINK`), and each of those rules must match, so a README that changes them fails here
instead of running at full size. The outputs the README's commands write by default are ignored
by git.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from .training.conftest import TINY_BURGERS, TINY_DARCY, set_args

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

_TINY = {"burgers-galerkin": TINY_BURGERS, "darcy-galerkin": TINY_DARCY}
_TRAIN = re.compile(r"^train .*--preset (\S+)")

#: (pattern, replacement, what it is for): the README's sizes -> small ones.
SHRINK: list[tuple[str, str]] = [
    (r"^(generate burgers .*)--samples 1224", r"\1--samples 24 --resolution 64 --workers 0"),
    (r"^(generate darcy .*)--samples 1224", r"\1--samples 24 --resolution 29 --workers 0"),
    (r"^(evaluate .*)--resolution 8192", r"\1--resolution 64"),
]
#: The snippet's Darcy grid -> the small file's.
SNIPPET_SHRINK = (r"NeumannGRF\(141\)", "NeumannGRF(29)")


def _section(title: str) -> str:
    text = README.read_text()
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else None]


def tour() -> tuple[list[str], str]:
    """The tour's command lines (without comments) and its Python snippet."""
    section = _section("A tour")
    bash = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    snippet = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    lines = [line.split("#", 1)[0].strip() for line in bash.splitlines()]
    return [line for line in lines if line], snippet


def shrink(command: str) -> str:
    """``command`` at small sizes; refuses a command of a kind with sizes that no rule shrank."""
    command = command.removeprefix("neuralop-fem ")
    small = command
    for pattern, replacement in SHRINK:
        small = re.sub(pattern, replacement, small)
    train = _TRAIN.match(command)
    if train:
        small += " --epochs 1 --batch-size 4 " + shlex.join(set_args(_TINY[train.group(1)]))
    kind = command.split()[0]
    if kind == "generate" or (kind == "evaluate" and "--resolution" in command):
        assert small != command, f"no rule shrinks the README's {command!r}: update SHRINK"
    return small


#: Runs the tour's lines in order, then the snippet as a script, in one process (the real
#: command line's ``main`` for each ``neuralop-fem`` line: one start-up instead of one each).
_DRIVER = """\
import runpy, shlex, subprocess, sys
from neuralop_fem.cli import main

for line in sys.argv[1:]:
    print("$", line, flush=True)
    if line.startswith("neuralop-fem "):
        status = main(shlex.split(line.removeprefix("neuralop-fem ")))
        if status != 0:
            sys.exit(f"exit status {status}: {line}")
    else:
        subprocess.run(line, shell=True, check=True)
runpy.run_path("snippet.py", run_name="__main__")
"""


def test_the_tour_creates_everything_its_snippet_uses(tmp_path):
    commands, snippet = tour()
    assert any(c.startswith("neuralop-fem generate burgers") for c in commands)
    lines = []
    for command in commands:
        if command.startswith("neuralop-fem "):
            lines.append(f"neuralop-fem {shrink(command)}")
        else:  # a shell command such as mkdir
            assert command.split()[0] == "mkdir", f"unexpected command in the tour: {command}"
            lines.append(command)
    small, n = re.subn(*SNIPPET_SHRINK, snippet)
    assert n == 1, "the snippet's NeumannGRF(141) changed: update SNIPPET_SHRINK"
    (tmp_path / "snippet.py").write_text(small)
    (tmp_path / "tour.py").write_text(_DRIVER)
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "tour.py", *lines], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    assert proc.stdout.count("$ ") == len(lines)
    used = re.findall(r"""["']([\w./-]+)["']""", snippet)
    assert "runs/darcy-gt" in used
    missing = [p for p in used if "/" in p and not (tmp_path / p).exists()]
    assert not missing, f"the snippet uses {missing}, which the tour does not create"


def _outputs() -> list[str]:
    """What the README's commands write where they run: the tour's ``--out`` paths and the
    demo's default directory."""
    commands, _ = tour()
    outs = [m.group(1) for c in commands for m in [re.search(r"--out (\S+)", c)] if m]
    from neuralop_fem.cli import build_parser

    demo = build_parser(only="demo").parse_args(["demo"])
    return [*outs, os.fspath(demo.out)]


def test_the_readme_outputs_are_ignored_by_git():
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    outputs = _outputs()
    assert "neuralop_fem_demo" in outputs
    assert "report/" in outputs
    for out in outputs:
        # a file in it: a directory is matched by the patterns that end in "/"
        path = out if out.endswith(".nc") else f"{out.rstrip('/')}/x"
        proc = subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT)
        assert proc.returncode == 0, f"{path!r}, written by the README's commands, is not ignored"


def test_the_readme_suggests_a_virtual_environment_before_setup():
    text = _section("Set up and run")
    venv = text.index("python3 -m venv .venv && . .venv/bin/activate")
    assert venv < text.index("bash scripts/setup.sh && neuralop-fem demo")
    # the two main commands stay as they are (.ci/run runs the second one)
    assert "bash scripts/setup.sh && python3 -m pytest" in text
    assert "bash scripts/setup.sh && python3 -m pytest" in (ROOT / ".ci" / "run").read_text()
