"""The documentation agrees with the code and cites only what ships with the repository."""

from __future__ import annotations

import re
from pathlib import Path

import netCDF4
import numpy as np

from neuralop_fem.data import generate, save_dataset
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


#: netCDF types as ncdump names them.
_NC_TYPES = {"float64": "double", "float32": "float", "int64": "int64", "uint64": "uint64"}
#: Attributes whose value the page shortens or that change from file to file.
_SHORTENED = ("created", "config_json", "neuralop_fem_version")


def _cdl_value(value) -> str:
    """An attribute value as ``ncdump`` prints it: strings quoted, int64 with ``LL``, floats
    shortest with ``1.`` for whole numbers."""
    if isinstance(value, str):
        return '"' + value.replace('"', '\\"') + '"'
    value = np.asarray(value)
    if value.dtype.kind == "f":
        return ", ".join(_cdl_float(float(x)) for x in value.ravel())
    suffix = "LL" if value.dtype == np.int64 else ""
    return ", ".join(f"{int(x)}{suffix}" for x in value.ravel())


def _cdl_float(x: float) -> str:
    text = "NaN" if np.isnan(x) else repr(x)
    return text.removesuffix("0") if text.endswith(".0") else text


def _cdl_header(path) -> list[str]:
    """The ``ncdump -h`` listing of ``path`` (dimensions, variables, attributes), stripped."""
    with netCDF4.Dataset(path) as nc:
        lines = ["dimensions:", *(f"{n} = {len(d)} ;" for n, d in nc.dimensions.items())]
        lines.append("variables:")
        for name, var in nc.variables.items():
            lines.append(f"{_NC_TYPES[str(var.dtype)]} {name}({', '.join(var.dimensions)}) ;")
            lines += [f"{name}:{k} = {_cdl_value(var.getncattr(k))} ;" for k in var.ncattrs()]
        lines.append("// global attributes:")
        lines += [f":{k} = {_cdl_value(nc.getncattr(k))} ;" for k in nc.ncattrs()]
    return lines


def test_data_format_listing_is_the_header_of_the_file_it_names(tmp_path):
    """docs/data_format.md: the ``ncdump -h`` listing is the header ``generate`` writes for the
    command the page names (every variable, attribute and value; shortened ones by name)."""
    text = (ROOT / "docs" / "data_format.md").read_text()
    section = text.split("## `ncdump -h` style listing", 1)[1]
    block = re.search(r"```\n(.*?)```", section, re.S).group(1)
    command = re.search(r"`neuralop-fem (generate darcy --samples 4 --resolution 17 --seed 3) "
                        r"--out d\.nc`", section)
    assert command, "the page names the command of its listing"
    path = generate("darcy", n_samples=4, resolution=17, seed=3, out=tmp_path / "d.nc",
                    workers=0, progress=False)
    shown = [line.strip() for line in block.splitlines()
             if line.strip() and line.strip() not in ("netcdf d {", "}")]

    def comparable(line: str) -> str:
        name = line.split(" = ", 1)[0]
        return name if name.lstrip(":") in _SHORTENED else line

    assert [comparable(x) for x in shown] == [comparable(x) for x in _cdl_header(path)]


def test_no_citation_of_design_files_outside_the_repository():
    sources = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "docs").rglob("*.py"),
               *(ROOT / "neuralop_fem").rglob("*.py"), *(ROOT / "solvers").rglob("*.py")]
    cited = [f"{p.relative_to(ROOT)}:{i}" for p in sources
             for i, line in enumerate(p.read_text().splitlines(), 1) if _UNSHIPPED.search(line)]
    assert not cited, cited


#: The cases of docs/models.md's back-to-back table -> (preset, n) of the results file.
_VS_REFERENCE_CASES = {"Burgers n=512 GT": ("burgers-galerkin", 512),
                       "Burgers n=2048 GT": ("burgers-galerkin", 2048),
                       "Darcy 141/43 GT": ("darcy-galerkin", 141),
                       "Burgers n=512 FT": ("burgers-fourier", 512)}


def _close(stated: str, value: float) -> bool:
    """Whether ``stated`` (as printed in a table) is ``value`` to the digits it shows."""
    decimals = len(stated.partition(".")[2])
    return abs(float(stated) - value) <= 0.51 * 10 ** -decimals


def test_models_md_back_to_back_table_is_the_committed_run():
    import json

    text = (ROOT / "docs" / "models.md").read_text()
    rows = json.loads((ROOT / "benchmarks" / "results" / "models_vs_reference.json")
                      .read_text())["rows"]
    measured = {(r["preset"], r["n"]): r for r in rows}
    found = re.findall(r"^\| (Burgers n=\d+ [GF]T|Darcy 141/43 GT) \(\d+\) \| ([\d.]+) / ([\d.]+) "
                       r"\| ([\d.]+) / ([\d.]+) \| ([\d.]+)x \|", text, re.M)
    assert sorted(case for case, *_ in found) == sorted(_VS_REFERENCE_CASES)
    for case, ours_best, ours_median, ref_best, ref_median, speedup in found:
        row = measured[_VS_REFERENCE_CASES[case]]
        pairs = [(ours_best, row["ours"]["it_s_best"]),
                 (ours_median, row["ours"]["it_s_median"]),
                 (ref_best, row["reference_order"]["it_s_best"]),
                 (ref_median, row["reference_order"]["it_s_median"]),
                 (speedup, row["speedup_median"])]
        assert all(_close(s, v) for s, v in pairs), (case, pairs)


#: The width the synopses in the docs are formatted at (argparse wraps at the terminal's).
_SYNOPSIS_COLUMNS = "100"
_SYNOPSIS = re.compile(r"```\n(usage: neuralop-fem (\S+) .*?)```", re.S)


def test_command_synopses_in_the_docs_are_the_parsers_usage(monkeypatch):
    """Each ``usage: neuralop-fem COMMAND ...`` block in the docs is what ``neuralop-fem
    COMMAND --help`` prints (at 100 columns): an option added to a command makes the page
    stale, and this test says so. Regenerate a block with ``COLUMNS=100 neuralop-fem COMMAND
    --help``."""
    from neuralop_fem.cli import build_parser

    monkeypatch.setenv("COLUMNS", _SYNOPSIS_COLUMNS)
    found = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        for block, command in _SYNOPSIS.findall(page.read_text(encoding="utf-8")):
            parser = build_parser(only=command)
            sub = next(a for a in parser._actions if a.dest == "command").choices[command]
            assert block == sub.format_usage(), f"{page.name}: the synopsis of {command}"
            found.append((page.name, command))
    assert ("using_a_surrogate.md", "compare") in found
