"""The documentation site (source directory docs/, configuration docs/conf.py): built with
warnings as errors as README.md says; the Markdown guide pages, the API pages and the executed
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
    for module in ("sphinx", "numpydoc", "sphinx_gallery", "myst_parser"):
        pytest.importorskip(module)  # the `docs` extra
    env = {**os.environ, "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = tmp_path / "html"
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         str(ROOT / "docs"), str(out)],
        env=env, capture_output=True, text=True, timeout=1800, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    for page in ("neuralop_fem.training.Trainer", "neuralop_fem.compare",
                 "solvers.DarcyFDSolver", "neuralop_fem.training.TrainConfig"):
        assert (out / "site" / "generated" / f"{page}.html").exists(), page
    trainer = (out / "site" / "generated" / "neuralop_fem.training.Trainer.html").read_text()
    assert "run_dir" in trainer  # the numpydoc Parameters section rendered
    for example in ("plot_generate", "plot_train_and_compare", "plot_inverse"):
        html = (out / "auto_examples" / f"{example}.html").read_text()
        assert "sphx-glr-script-out" in html, example  # executed: its output is on the page
        assert "sphx_glr_" + example in html, example  # and its figures
    guide = sorted(p.relative_to(ROOT / "docs").with_suffix(".html")
                   for p in [*(ROOT / "docs").glob("*.md"), *(ROOT / "docs").glob("methods/*.md")])
    assert len(guide) >= 12
    for page in guide:  # every Markdown page of the guide is a page of the site
        assert (out / page).exists(), page
    fmt = (out / "data_format.html").read_text()
    assert "<table" in fmt  # the Markdown tables rendered
    assert 'href="generating_data.html#on-another-machine' in fmt  # links between pages work
    home = (out / "site" / "index.html").read_text()
    for target in ("../training.html", "api.html", "../auto_examples/index.html"):
        assert f'href="{target}' in home, target  # guide, API and gallery in one site
