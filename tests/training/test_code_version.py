"""run.json's code record: the commit, and whether code (not benchmark results) was edited."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from neuralop_fem.training._env import code_version

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "benchmarks" / "results").mkdir(parents=True)
    (tmp_path / "pkg.py").write_text("x = 1\n")
    (tmp_path / "benchmarks" / "results" / "rows.json").write_text("{}\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    return tmp_path


def test_results_written_by_the_benchmarks_leave_the_code_clean(tree: Path) -> None:
    head = _git(tree, "rev-parse", "HEAD")
    assert code_version(tree) == {"commit": head, "dirty": False}
    (tree / "benchmarks" / "results" / "rows.json").write_text('{"runs": {}}\n')
    assert code_version(tree) == {"commit": head, "dirty": False}
    (tree / "pkg.py").write_text("x = 2\n")
    assert code_version(tree) == {"commit": head, "dirty": True}


def test_outside_a_checkout_nothing_is_claimed(tmp_path: Path) -> None:
    assert code_version(tmp_path) == {"commit": None, "dirty": None}
