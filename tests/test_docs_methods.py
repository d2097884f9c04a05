"""docs/methods/*.md agree with the solvers: the options they list and the numbers they quote."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from solvers import PeriodicGRF
from solvers._darcy_linear import LINEAR_SOLVERS
from solvers.burgers import BurgersSpectralSolver
from solvers.exact import burgers_exact

METHODS = Path(__file__).resolve().parents[1] / "docs" / "methods"


def _section(text: str, heading: str) -> str:
    return text.split(heading, 1)[1].split("\n## ", 1)[0]


def test_darcy_page_lists_every_linear_solver():
    table = _section((METHODS / "darcy.md").read_text(), "## Linear solvers")
    listed = re.findall(r'^\| `"([\w-]+)"`', table, re.M)
    assert sorted(listed) == sorted(LINEAR_SOLVERS)


def test_darcy_summary_speedup_is_the_table_speedup():
    text = (METHODS / "darcy.md").read_text()
    summary = re.search(r"\*\*([\d.]+)x faster\*\*", text).group(1)
    row = re.search(r"^\| 421 \| gmg \|.*?\| ([\d.]+)x \|", text, re.M).group(1)
    assert summary == row


@pytest.mark.parametrize(("label", "viscosity"), [("0.1/(2 pi)", 0.1 / (2 * np.pi)), ("0.1", 0.1)])
def test_burgers_page_quotes_the_n1024_error_the_solver_has(label, viscosity):
    # The data of tests/solvers/test_burgers.py::test_spectral_matches_exact_on_benchmark_data_n1024
    text = (METHODS / "grf_burgers.md").read_text()
    stated = float(re.search(rf"^\| 1024 \| {re.escape(label)} \| ~([\d.e-]+) \|", text,
                             re.M).group(1))
    u0 = PeriodicGRF(1024).sample(2, rng=np.random.default_rng(10))
    u = BurgersSpectralSolver(viscosity=viscosity).solve(u0)
    exact = burgers_exact(u0, viscosity=viscosity, times=1.0)
    err = np.linalg.norm(u - exact, axis=-1) / np.linalg.norm(exact, axis=-1)
    assert err.max() == pytest.approx(stated, rel=0.25)
