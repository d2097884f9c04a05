"""``scripts/count_problem_facts.py`` finds what it counts, and the peer formats stay clean."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "count_problem_facts.py"

PLANTED = '''\
def read(problem, x):
    if problem == "burgers":
        return 1
    known = ("burgers", "darcy")
    guess = {2: "burgers", 3: "darcy"}.get(x.ndim)
    return known, guess, problem.startswith("darcy-")
'''

# The same decisions asked of the entries: nothing to count.
CLEAN = '''\
from neuralop_fem.problems import kits


def read(problem, x):
    known = tuple(k.name for k in kits() if k.neuralop_format)
    return [k for k in kits() if k.problem.ndim + 1 == x.ndim], known
'''


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd,
                   check=True, capture_output=True)


def test_the_script_counts_a_planted_comparison_table_and_guess(tmp_path):
    (tmp_path / "scripts").mkdir()
    shutil.copy(SCRIPT, tmp_path / "scripts")
    for package in ("solvers", "neuralop_fem"):
        (tmp_path / package).mkdir()
    (tmp_path / "neuralop_fem" / "planted.py").write_text(PLANTED)
    (tmp_path / "solvers" / "clean.py").write_text(CLEAN)
    _git("init", "-q", cwd=tmp_path)
    _git("add", ".", cwd=tmp_path)
    _git("commit", "-qm", "planted", cwd=tmp_path)
    proc = subprocess.run([sys.executable, str(tmp_path / "scripts" / SCRIPT.name), "--rev",
                           "HEAD", "--list"], capture_output=True, text=True, check=True)
    out = proc.stdout
    assert "name-keyed per-problem tables: 1\n    neuralop_fem/planted.py:4\n" in out
    assert ("problem-name comparisons: 2\n    neuralop_fem/planted.py:2\n"
            "    neuralop_fem/planted.py:6\n") in out
    assert "name lookups): 1\n    neuralop_fem/planted.py:5\n" in out
    assert "clean.py" not in out


def test_the_peer_formats_and_commands_name_no_problem():
    proc = subprocess.run([sys.executable, str(SCRIPT), "--list"], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    found = [line.strip() for line in proc.stdout.splitlines() if line.startswith("    ")]
    assert "tests/heat_problem.py" in found, proc.stdout  # the listing works
    assert [f for f in found if f.startswith(("neuralop_fem/data/peers/",
                                              "neuralop_fem/commands/"))] == []
