"""Imports go at the top of a module: an import of our own code inside a function is allowed
only for a stated reason, and there are few of them.

An internal import (of ``solvers`` or ``neuralop_fem``) inside a function hides the order of
the layers and, worse, a loop between them. The few that remain keep a heavy or optional
dependency off a path that must stay light, and say so with a comment on their line::

    from ..data.datasets import FieldDataset  # deferred: torch (...)

The allowed reasons are :data:`REASONS`; the dependency order itself is checked by
``tests/test_layout.py`` (no cycle between modules).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("solvers", "neuralop_fem")

#: The most internal imports that may stay inside functions, over both packages.
LIMIT = 60

#: Why an internal import may wait for its function: the first word after ``# deferred:``.
REASONS = {
    "torch": "keeps torch out of a module that must import without it (solvers, the data "
             "layer's numpy path)",
    "help": "keeps the top-level `neuralop-fem --help` light (no torch, xarray, dask, scipy)",
    "extra": "an optional extra (meshio, tensorboard, mlflow, wandb, distributed) that may be "
             "missing",
    "matplotlib": "plotting, imported only when a figure is drawn",
}

_MARK = re.compile(r"#\s*deferred:\s*([a-z]+)")


def _is_internal(node: ast.Import | ast.ImportFrom) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").split(".")[0] in PACKAGES
    return any(alias.name.split(".")[0] in PACKAGES for alias in node.names)


def deferred_imports(source: str) -> list[tuple[int, str | None]]:
    """The internal imports inside functions of ``source``: (line, reason or None).

    The reason is the word after ``# deferred:`` on a line of the import statement or on a
    comment line right above it.
    """
    lines = source.splitlines()
    found: list[tuple[int, str | None]] = []
    seen: set[int] = set()
    for func in ast.walk(ast.parse(source)):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(func):
            if not isinstance(node, (ast.Import, ast.ImportFrom)) or id(node) in seen:
                continue
            seen.add(id(node))
            if not _is_internal(node):
                continue
            first = node.lineno - 1
            if first > 0 and lines[first - 1].lstrip().startswith("#"):
                first -= 1
            text = "\n".join(lines[first:(node.end_lineno or node.lineno)])
            match = _MARK.search(text)
            found.append((node.lineno, match.group(1) if match else None))
    return found


def _all_deferred() -> dict[str, list[tuple[int, str | None]]]:
    result = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found = deferred_imports(path.read_text(encoding="utf-8"))
            if found:
                result[str(path.relative_to(ROOT))] = found
    return result


def test_few_internal_imports_wait_inside_functions():
    found = _all_deferred()
    count = sum(len(v) for v in found.values())
    listing = "\n".join(f"{len(v):3d} {path}" for path, v in
                        sorted(found.items(), key=lambda kv: -len(kv[1])))
    assert count <= LIMIT, (f"{count} internal imports inside functions (at most {LIMIT}):\n"
                            f"{listing}")


def test_each_import_inside_a_function_states_an_allowed_reason():
    bad = [f"{path}:{line}: {reason or 'no `# deferred: REASON` comment'}"
           for path, found in _all_deferred().items()
           for line, reason in found if reason not in REASONS]
    assert not bad, ("internal imports inside functions need one of the reasons "
                     f"{sorted(REASONS)}:\n" + "\n".join(bad))


@pytest.mark.parametrize(("source", "expected"), [
    ("def f():\n    from .x import y\n", [(2, None)]),
    ("def f():\n    from .x import y  # deferred: torch (the data path)\n", [(2, "torch")]),
    ("def f():\n    import neuralop_fem.data  # deferred: extra\n", [(2, "extra")]),
    ("def f():\n    def g():\n        from solvers import grf\n", [(3, None)]),
    ("def f():\n    # deferred: extra (meshio)\n    from .mesh import write\n", [(3, "extra")]),
    ("def f():\n    x = 1  # deferred: torch\n    from .mesh import write\n", [(3, None)]),
    ("def f():\n    import numpy\n    from scipy import sparse\n", []),
    ("from .x import y\n\ndef f():\n    return y\n", []),
    ("class A:\n    def m(self):\n        from ..a import (\n"
     "            b,  # deferred: matplotlib\n        )\n", [(3, "matplotlib")]),
])
def test_the_counter_finds_what_it_looks_for(source, expected):
    assert deferred_imports(source) == expected
