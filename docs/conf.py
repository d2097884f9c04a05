"""Sphinx configuration of the neuralop-fem documentation site.

The source directory is ``docs/``: the Markdown guide pages (``docs/*.md``,
``docs/methods/*.md``, read by myst-parser) as they are, the site's own pages in ``docs/site/``
(home page, API reference from the numpydoc docstrings) and the gallery ``docs/gallery/`` (run
at build time by sphinx-gallery). Build, warnings as errors (README.md, Documentation)::

    python -m sphinx -W -b html docs docs/_build/html
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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
    "myst_parser",
]
root_doc = "site/index"
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
# GitHub-style anchors for the guide's links to sections (`page.md#a-heading`).
myst_heading_anchors = 4
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
# The gallery's sources are scripts (sphinx-gallery renders them into auto_examples/).
exclude_patterns = ["_build", "gallery", "examples"]
html_theme = "alabaster"
