"""Sphinx configuration of the neuralop-fem documentation site (docs/site).

Build: ``python -m sphinx -W -b html docs/site docs/_build/html`` (README.md, Documentation).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("MPLBACKEND", "Agg")

from neuralop_fem import __version__  # noqa: E402

project = "neuralop-fem"
author = "The neuralop_fem maintainers"
release = version = __version__
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]
autosummary_generate = True
autodoc_typehints = "none"  # the numpydoc sections state types and shapes
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "docs" / "gallery"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
}
exclude_patterns = ["_build"]
html_theme = "alabaster"
