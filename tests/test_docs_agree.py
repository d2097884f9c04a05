"""The documentation agrees with the code and cites only what ships with the repository."""

from __future__ import annotations

import re
from pathlib import Path

import netCDF4

from neuralop_fem.data import save_dataset
from neuralop_fem.data.schema import burgers_dataset

ROOT = Path(__file__).resolve().parents[1]

#: Design notes that are not part of the repository: docs and docstrings point to docs pages.
_UNSHIPPED = re.compile(r"DESIGN\.md|PAPER_SPEC")


def test_data_format_states_the_compression_the_files_have(rng, tmp_path):
    ds = burgers_dataset(rng.random((2, 8)), rng.random((2, 8)), seed=[0, 1], iterations=[1, 1],
                         residual=[0.0, 0.0], solve_time=[0.0, 0.0],
                         attrs={"dataset_seed": 0, "source": "t"})
    with netCDF4.Dataset(save_dataset(ds, tmp_path / "b.nc")) as nc:
        levels = {v.filters()["complevel"] for v in nc.variables.values()
                  if (v.filters() or {}).get("zlib")}
    text = (ROOT / "docs" / "data_format.md").read_text()
    stated = {int(m) for m in re.findall(r"zlib-compressed \(level (\d+)", text)}
    assert stated
    assert stated == levels


def test_no_citation_of_design_files_outside_the_repository():
    sources = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "docs").rglob("*.py"),
               *(ROOT / "neuralop_fem").rglob("*.py"), *(ROOT / "solvers").rglob("*.py")]
    cited = [f"{p.relative_to(ROOT)}:{i}" for p in sources
             for i, line in enumerate(p.read_text().splitlines(), 1) if _UNSHIPPED.search(line)]
    assert not cited, cited
