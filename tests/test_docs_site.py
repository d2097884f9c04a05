"""The documentation site (docs/site): built with warnings as errors, API pages and the executed
gallery present. Slow (the gallery trains a tiny model): run with --runslow."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_docs_site_builds_without_warnings(tmp_path):
    for module in ("sphinx", "numpydoc", "sphinx_gallery"):
        pytest.importorskip(module)  # the `docs` extra
    env = {**os.environ, "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = tmp_path / "html"
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         str(ROOT / "docs" / "site"), str(out)],
        env=env, capture_output=True, text=True, timeout=1800, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    for page in ("neuralop_fem.training.Trainer", "neuralop_fem.compare",
                 "solvers.DarcyFDSolver", "neuralop_fem.training.TrainConfig"):
        assert (out / "generated" / f"{page}.html").exists(), page
    trainer = (out / "generated" / "neuralop_fem.training.Trainer.html").read_text()
    assert "run_dir" in trainer  # the numpydoc Parameters section rendered
    for example in ("plot_generate", "plot_train_and_compare", "plot_inverse"):
        html = (out / "auto_examples" / f"{example}.html").read_text()
        assert "sphx-glr-script-out" in html, example  # executed: its output is on the page
        assert "sphx_glr_" + example in html, example  # and its figures
