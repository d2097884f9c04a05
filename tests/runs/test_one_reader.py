"""run.json has one reader and one writer, :class:`neuralop_fem.runs.RunDir`: no module
outside ``neuralop_fem/runs`` builds the file's path, opens it, or reads a run's fields by
string key from a dict that the record hands out (:func:`neuralop_fem.runs.read_run_info`,
``RunRecord.to_dict``). The library, the solvers and the lab are checked."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HOME = ROOT / "neuralop_fem" / "runs"
NAME = "run.json"
#: Functions that hand out a run's record as a plain dict (kept for old scripts).
DICT_READERS = {"read_run_info", "load_trained"}


def _python_files() -> list[Path]:
    files = []
    for package in ("neuralop_fem", "solvers", "benchmarks"):
        files += [p for p in sorted((ROOT / package).rglob("*.py")) if HOME not in p.parents]
    return files


def run_file_uses(source: str) -> list[str]:
    """Where ``source`` joins, opens or reads run.json itself, or calls a dict reader of it."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)
                and isinstance(node.right, ast.Constant) and node.right.value == NAME):
            found.append(f"line {node.lineno}: path / {NAME!r}")
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name in DICT_READERS:
                found.append(f"line {node.lineno}: {name}(...)")
            elif name in {"open", "Path", "joinpath", "read_text"} and any(
                    isinstance(a, ast.Constant) and a.value == NAME for a in node.args):
                found.append(f"line {node.lineno}: {name}({NAME!r})")
    return found


def test_no_module_outside_runs_reads_run_json_itself():
    bad = {str(p.relative_to(ROOT)): found for p in _python_files()
           if (found := run_file_uses(p.read_text(encoding="utf-8")))}
    assert not bad, f"read run.json through neuralop_fem.runs.RunDir instead: {bad}"


@pytest.mark.parametrize(("source", "expected"), [
    ('info = json.loads((run / "run.json").read_text())\n', ["line 1: path / 'run.json'"]),
    ('f = open("run.json")\n', ["line 1: open('run.json')"]),
    ('p = run_dir.joinpath("run.json")\n', ["line 1: joinpath('run.json')"]),
    ('info = read_run_info(run)\n', ["line 1: read_run_info(...)"]),
    ('record = RunDir(run).read()\n', []),
    ('msg = f"{run.run_json}: field `x` is missing"\n', []),
])
def test_the_check_finds_what_it_looks_for(source, expected):
    assert run_file_uses(source) == expected
