"""The packages stand in layers, and imports only go down (docs/layout.md).

Each entry of :data:`LAYERS` is one layer, lowest first; the packages of one layer do not import
each other. The modules at the top of ``neuralop_fem`` (errors, files, metrics ...) form the
core layer: they may import each other (no cycle: ``tests/test_layout.py``) and nothing above.
``neuralop_fem/__init__.py``, the public face, may import any layer; no module imports it.
Imports inside functions and ``TYPE_CHECKING`` blocks count too.
"""

from __future__ import annotations

import pytest

from tests.test_layout import _import_graph

#: The layers, lowest first (a name is a subpackage of neuralop_fem, or "solvers" or "core").
LAYERS: tuple[tuple[str, ...], ...] = (
    ("solvers",),
    ("core",),
    ("problems",),
    ("torch_solvers", "models"),
    ("data",),
    ("runs",),
    ("training", "surrogate"),
    ("evaluation",),
    ("zoo", "reproduce"),
    ("commands",),
    ("cli",),
)
_LEVEL = {name: level for level, layer in enumerate(LAYERS) for name in layer}


def part_of(module: str) -> str:
    """The layer entry of a module: ``solvers``, ``core``, a subpackage name, ``cli`` or
    ``face`` (the package ``neuralop_fem`` itself)."""
    parts = module.split(".")
    if parts[0] == "solvers":
        return "solvers"
    if len(parts) == 1:
        return "face"
    if parts[1] == "cli":
        return "cli"
    return parts[1] if parts[1] in _LEVEL else "core"


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import of ``graph`` that goes up a layer, sideways within one, or to the face."""
    bad = []
    for module, targets in sorted(graph.items()):
        here = part_of(module)
        if here == "face":
            continue
        for target in sorted(targets):
            there = part_of(target)
            if there == "face":
                bad.append(f"{module} -> {target} (the package face)")
            elif there != here and _LEVEL[there] >= _LEVEL[here]:
                bad.append(f"{module} -> {target} ({here} may not import {there})")
    return bad


def test_imports_only_go_down_the_layers():
    bad = upward_imports(_import_graph())
    assert not bad, "\n".join(bad)


def test_every_subpackage_has_a_layer():
    subpackages = {m.split(".")[1] for m in _import_graph()
                   if m.startswith("neuralop_fem.") and m.count(".") >= 2}
    assert subpackages <= set(_LEVEL), sorted(subpackages - set(_LEVEL))


@pytest.mark.parametrize(("graph", "expected"), [
    ({"neuralop_fem.data.io": {"neuralop_fem.training.setup"}},
     ["neuralop_fem.data.io -> neuralop_fem.training.setup (data may not import training)"]),
    ({"neuralop_fem.zoo.pack": {"neuralop_fem.reproduce.rows"}},
     ["neuralop_fem.zoo.pack -> neuralop_fem.reproduce.rows (zoo may not import reproduce)"]),
    ({"neuralop_fem.metrics": {"neuralop_fem"}},
     ["neuralop_fem.metrics -> neuralop_fem (the package face)"]),
    ({"solvers.grf": {"neuralop_fem.errors"}},
     ["solvers.grf -> neuralop_fem.errors (solvers may not import core)"]),
    ({"neuralop_fem.errors": {"solvers.errors"}, "neuralop_fem.plotting": {"neuralop_fem.files"},
      "neuralop_fem.cli": {"neuralop_fem.path_options"},
      "neuralop_fem.surrogate.mesh": {"neuralop_fem.data.grids", "neuralop_fem.runs"}}, []),
])
def test_the_layer_check_finds_what_it_looks_for(graph, expected):
    assert upward_imports(graph) == expected
