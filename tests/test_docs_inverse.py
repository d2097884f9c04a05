"""docs/inverse_problem.md followed literally by a newcomer, at small sizes.

In an empty directory: the commands of "Train one" (a tiny file and a 2-epoch tiny model: only
sizes change, by :data:`SHRINK`), then the Python blocks of "In a script" and "Compare" as one
script, as written (warm start included), then the command lines of "Compare" through the real
command line in a subprocess.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from .training.conftest import TINY_INVERSE, set_args

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "inverse_problem.md"

#: (pattern, replacement): the doc's sizes -> small ones (29 -> 8 is the 141 -> 36 rule).
SHRINK: list[tuple[str, str]] = [
    (r"^(generate darcy .*)--samples 64", r"\1--samples 24 --resolution 29 --workers 0"),
    (r"^(train .*--preset darcy-inverse-galerkin.*)--epochs 2",
     r"\1--epochs 2 --batch-size 4 " + shlex.join(set_args(TINY_INVERSE))),
    (r"^(compare .*)--max-samples 8", r"\1--max-samples 2"),
]


def _section(text: str, title: str) -> str:
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else None]


def _blocks(section: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", section, re.S)


def _commands(section: str, shrink: bool = True) -> list[str]:
    lines = [line.split("#", 1)[0].strip() for b in _blocks(section, "bash")
             for line in b.splitlines()]
    out = []
    for line in filter(None, lines):
        if line.startswith("mkdir "):
            out.append(line)
            continue
        assert line.startswith("neuralop-fem "), f"unexpected command in the doc: {line}"
        small = line.removeprefix("neuralop-fem ")
        for pattern, replacement in SHRINK:
            small = re.sub(pattern, replacement, small)
        if shrink and small.split()[0] in ("generate", "train"):
            assert small != line.removeprefix("neuralop-fem "), f"no rule shrinks {line!r}"
        out.append(small)
    return out


#: Runs the doc's steps in order in one process (the real command line's ``main`` for each
#: ``neuralop-fem`` line: one start-up instead of one each); ``GUIDE`` marks the script.
_DRIVER = """\
import runpy, shlex, subprocess, sys
from neuralop_fem.cli import main

for line in sys.argv[1:]:
    print("$", line, flush=True)
    if line == "GUIDE":
        runpy.run_path("guide.py", run_name="__main__")
    elif line.startswith("mkdir "):
        subprocess.run(shlex.split(line), check=True)
    else:
        status = main(shlex.split(line))
        if status != 0:
            sys.exit(f"exit status {status}: {line}")
"""


def _env() -> dict[str, str]:
    """One thread each, and this checkout's code first."""
    return {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def test_the_inverse_guide_runs_as_written(tmp_path):
    text = DOC.read_text()
    train = _commands(_section(text, "Train one"))
    assert [c.split()[0] for c in train] == ["generate", "mkdir", "train"]
    script = "\n".join(_blocks(_section(text, "In a script"), "python")
                       + _blocks(_section(text, "Compare"), "python"))
    assert "initial_guess=start" in script  # the warm start is part of what runs
    compare = _commands(_section(text, "Compare"))
    assert [c.split()[0] for c in compare] == ["evaluate", "compare"]
    assert "--maxiter" in compare[1]
    (tmp_path / "guide.py").write_text(script)
    (tmp_path / "driver.py").write_text(_DRIVER)
    env = _env()
    steps = [*train, "GUIDE", *compare]
    # warnings (e.g. a linear-solve fallback) may show on stderr, never stop the guide
    proc = subprocess.run([sys.executable, "driver.py", *steps], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    assert proc.stdout.count("$ ") == len(steps)
    assert "discrepancy" in proc.stdout or "maxiter" in proc.stdout
    summary = (tmp_path / "report-inverse" / "summary.md").read_text()
    assert "Warm start" in summary


def test_the_zoo_section_runs_as_written(tmp_path):
    """"From the zoo": its command and script unchanged (2 samples at 141: about 10 s)."""
    section = _section(DOC.read_text(), "From the zoo")
    commands = _commands(section, shrink=False)  # already small
    assert [c.split()[0] for c in commands] == ["generate"]
    (tmp_path / "guide.py").write_text("\n".join(_blocks(section, "python")))
    env = _env()
    # the real command line (its worker processes need the module's main guard), then the script
    for argv in ([sys.executable, "-m", "neuralop_fem.cli", *shlex.split(commands[0])],
                 [sys.executable, "guide.py"]):
        proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, f"{argv}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    printed = proc.stdout.strip().splitlines()[-1]
    surrogate, classical = (
        [float(v) for v in part.strip(" []").split()]
        for part in re.match(r"surrogate (\[.*\]) classical inversion (\[.*\])", printed).groups())
    # the figures the section quotes: 0.09 / 0.086 and 0.084 / 0.078 on our CPU
    assert len(surrogate) == len(classical) == 2
    assert all(0.05 < e < 0.12 for e in surrogate + classical), printed
