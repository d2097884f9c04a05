"""The gallery scripts (docs/gallery/) say what they do: every function or class their text
names is used by the code, and the size they state is the size of the model they train."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from neuralop_fem.models import PRESETS
from neuralop_fem.models.presets import build_model

GALLERY = Path(__file__).resolve().parents[1] / "docs" / "gallery"
SCRIPTS = sorted(GALLERY.glob("plot_*.py"))


def _names_used(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
    return names


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_every_object_the_text_names_is_used(script):
    source = script.read_text()
    tree = ast.parse(source)
    text = "\n".join([ast.get_docstring(tree) or "",
                      *(line for line in source.splitlines() if line.lstrip().startswith("#"))])
    named = {m.split(".")[-1] for m in re.findall(r":(?:func|class|meth):`~?([\w.]+)`", text)}
    missing = named - _names_used(tree)
    assert not missing, f"{script.name} names {sorted(missing)} but never uses them"


def test_train_and_compare_states_the_size_of_its_model():
    script = GALLERY / "plot_train_and_compare.py"
    tree = ast.parse(script.read_text())
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Attribute) and node.func.attr == "replace"
             and "PRESETS" in ast.unparse(node.func.value)]
    assert len(calls) == 1, "one PRESETS[...].replace(...) model in the script"
    config = eval(ast.unparse(calls[0]), {"PRESETS": PRESETS})  # noqa: S307 - the repo's script
    n_parameters = sum(p.numel() for p in build_model(config).parameters())
    stated = re.search(r"about (\d+) thousand parameters", ast.get_docstring(tree))
    assert stated, "the docstring states the parameter count as 'about N thousand parameters'"
    assert int(stated.group(1)) == round(n_parameters / 1000), n_parameters
