"""Configuration files that do harm without running code, given to ``train --config``.

Each is refused in one short line (exit status 2) before anything is allocated or written:
a YAML alias bomb, a self-referring alias, nesting deeper than any configuration needs (YAML
and JSON), a key given twice, a file larger than the limit, and a model whose width would
allocate far more than the size limits of model files allow.
"""

from __future__ import annotations

import json
import time

import pytest

from neuralop_fem.cli import main
from neuralop_fem.safe_documents import MAX_YAML_BYTES

#: Five levels of ten aliases each: 10**5 copies of "lol" once expanded (41 aliases).
_BOMB = "\n".join([
    "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]",
    *(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, 5)),
    "preset: *l4",
]) + "\n"
#: Seventeen levels of two aliases each, inside the alias budget but 2**17 values expanded.
_WIDE = "\n".join([
    "a0: &a0 [x, x]",
    *(f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}]" for i in range(1, 16)),
    "preset: [*a15, *a15]",
]) + "\n"

CASES = {
    "alias bomb.yaml": (_BOMB, "holds more than 32 YAML aliases"),
    "wide bomb.yaml": (_WIDE, "expands to more than 100,000 values through its aliases"),
    "cycle.yaml": ("preset: &p {a: *p}\n", "a YAML alias refers to a value that contains it"),
    "deep.yaml": ("train_config: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n",
                  "is nested deeper than 64 levels"),
    "deep.json": ('{"train_config": ' + "[" * 50_000 + "]" * 50_000 + "}",
                  "is nested deeper than 64 levels"),
    "twice.yaml": ("preset: burgers-galerkin\ntrain_config:\n  epochs: 1\n  lr_max: 0.1\n"
                   "  epochs: 2\n", "key 'epochs' is given twice in one mapping (again at line 5)"),
    "twice.json": ('{"preset": "burgers-galerkin", "preset": "burgers-fno"}',
                   "key 'preset' is given twice in one mapping"),
    "huge.yaml": ("#" * (MAX_YAML_BYTES + 10) + "\n",
                  f"must be at most {MAX_YAML_BYTES:,} bytes"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_hostile_config_file_is_one_short_line(tmp_path, capsys, name):
    text, message = CASES[name]
    path = tmp_path / name.replace(" ", "_")
    path.write_text(text)
    start = time.perf_counter()
    assert main(["train", "--config", str(path), "--print-config"]) == 2
    took = time.perf_counter() - start
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1, captured.err[:500]
    assert len(captured.err) < 400, captured.err[:500]
    assert captured.err.startswith(f"neuralop-fem train: error: {path}: "), captured.err
    assert message in captured.err
    assert took < 60, took  # generous: the unguarded 8-level bomb took 49 s and 8.9 GB


def test_a_value_quoted_in_a_message_is_cut_and_escaped(tmp_path, capsys):
    """A long value with terminal escapes, quoted back by a message, stays one short line."""
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"preset": "\x1b]0;owned\x07" + "x" * 100_000}))
    assert main(["train", "--config", str(path), "--print-config"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "\x1b" not in err
    assert "\x07" not in err
    assert len(err) < 2500


def test_a_model_too_large_to_allocate_is_refused_before_allocation(tmp_path, burgers_file,
                                                                    capsys):
    """d_model = 200000: 1.6e11 parameters (640 GB of float32), refused by the same limit as
    model files, naming where the width came from; nothing is written."""
    path = tmp_path / "c.yaml"
    out = tmp_path / "run"
    path.write_text(f"preset: burgers-galerkin\ndata: {burgers_file}\nout: {out}\n"
                    "model_config: {d_model: 200000}\n")
    assert main(["train", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert (f"the model (preset burgers-galerkin, model_config of {path}) describes a model "
            "with at least") in err
    assert "the limit is 200,000,000" in err
    assert "Choose a smaller width or fewer layers." in err
    assert not out.exists()
    assert main(["train", "--preset", "burgers-galerkin", "--data", str(burgers_file),
                 "--out", str(out), "--set", "d_model=200000"]) == 2
    assert "the model (preset burgers-galerkin, --set) describes" in capsys.readouterr().err
    assert not out.exists()
