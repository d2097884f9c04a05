"""The tree is ruff-clean under the project's own configuration (pyproject.toml [tool.ruff])."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_reports_nothing():
    pytest.importorskip(
        "ruff", reason="ruff is not installed; `pip install -e .[test]` installs it"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", str(ROOT)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
    assert proc.returncode == 0, f"ruff check found problems:\n{proc.stdout}{proc.stderr}"
