"""``scripts/layout_figures.py`` (the figures of docs/layout.md) counts what it says."""

from __future__ import annotations

import subprocess
import sys

from tests.test_layout import FIGURES, ROOT

SCRIPT = ROOT / "scripts" / "layout_figures.py"


def test_floors_loops_and_deferred_imports_of_a_small_tree():
    sources = {
        "solvers": "",
        "solvers.grf": "import numpy\n",
        "neuralop_fem": "",
        "neuralop_fem.errors": "from solvers import grf\n",
        "neuralop_fem.data": "",
        "neuralop_fem.data.io": "from ..errors import x\n\ndef f():\n    from ..models import m\n",
        "neuralop_fem.models": "from ..data import io\n",
        "neuralop_fem.runs": "",
        "neuralop_fem.runs.dir": "p = run / 'run.json'\n",
        "neuralop_fem.zoo": "def g(run):\n    return run / 'run.json'\n",
    }
    packages = {m: m in ("solvers", "neuralop_fem", "neuralop_fem.data", "neuralop_fem.models",
                         "neuralop_fem.runs", "neuralop_fem.zoo") for m in sources}
    f = FIGURES.figures(sources, packages)
    assert f["loops"] == [["neuralop_fem.data", "neuralop_fem.models"]]
    assert f["floor"]["solvers"] == 1
    assert f["floor"]["neuralop_fem.errors"] == 2
    assert len(f["back"]) == 1  # one of the loop's two arrows runs back up
    assert (f["inside"], f["total"]) == (1, 4)  # errors, io (2, one in f), models
    assert f["run_json"] == ["neuralop_fem.zoo"]  # runs/ may join it


def test_the_tree_today():
    out = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True,
                         check=True).stdout
    assert "imports back up: 0\n" in out
    assert "loops: 0\n" in out
    assert "modules outside neuralop_fem/runs joining run.json: 0" in out
