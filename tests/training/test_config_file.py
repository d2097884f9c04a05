"""``neuralop-fem train --config FILE`` / ``--print-config``, as a user runs them (subprocess)."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from neuralop_fem.cli import main

from ..test_cli_errors import run_cli
from .conftest import TINY_BURGERS

SPLIT = {"n_train": 8, "n_val": 2, "n_test": 2}


def _write_yaml(path, doc) -> str:
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def test_yaml_file_options_and_set_in_precedence_order(tmp_path, burgers_file):
    cfg = _write_yaml(tmp_path / "c.yaml", {
        "preset": "burgers-galerkin", "data": str(burgers_file),
        "train_config": {"epochs": 7, "batch_size": 3, "seed": 5, **SPLIT},
        "model_config": {"d_model": 24},
    })
    proc = run_cli(["train", "--config", cfg, "--epochs", "4", "--set", "epochs=2",
                    "--batch-size", "2", "--print-config"])
    assert proc.returncode == 0, proc.stderr
    doc = yaml.safe_load(proc.stdout)
    train = doc["train_config"]
    assert train["epochs"] == 2  # --set over the option over the file
    assert train["batch_size"] == 2  # the option over the file
    assert train["seed"] == 5  # the file over the preset
    assert train["lr_max"] == 1e-3  # the preset
    assert doc["model_config"]["d_model"] == 24
    assert doc["model_config"]["num_layers"] == 4  # the preset's
    assert {k: train[k] for k in SPLIT} == SPLIT  # chosen in the file: kept by fit_to_data
    assert doc["preset"] == "burgers-galerkin"
    assert doc["data"] == str(burgers_file)
    assert doc["out"] is None
    # the printed configuration is itself a config file giving the same configuration
    again = _write_yaml(tmp_path / "again.yaml", doc)
    proc2 = run_cli(["train", "--config", again, "--print-config"])
    assert yaml.safe_load(proc2.stdout) == doc
    as_json = run_cli(["train", "--config", again, "--print-config", "json"])
    assert json.loads(as_json.stdout) == doc


def test_run_json_reruns_as_it_is(tmp_path, burgers_file):
    cfg = tmp_path / "c.json"
    model = {**TINY_BURGERS}
    cfg.write_text(json.dumps({
        "preset": "burgers-galerkin", "data": str(burgers_file), "out": str(tmp_path / "a"),
        "train_config": {"epochs": 1, "batch_size": 4, "resolution": 64, **SPLIT},
        "model_config": model,
    }))
    first = run_cli(["train", "--config", str(cfg)])
    assert first.returncode == 0, first.stderr
    run_json = tmp_path / "a" / "run.json"
    info = json.loads(run_json.read_text())
    printed = run_cli(["train", "--config", str(run_json), "--print-config", "json"])
    assert printed.returncode == 0, printed.stderr
    doc = json.loads(printed.stdout)
    assert doc["train_config"] == info["train_config"]
    assert doc["model_config"] == info["model_config"]
    assert doc["data"] == info["data"]["path"]
    second = run_cli(["train", "--config", str(run_json), "--out", str(tmp_path / "b")])
    assert second.returncode == 0, second.stderr
    rerun = json.loads((tmp_path / "b" / "run.json").read_text())
    assert rerun["test_rel_l2_best"] == info["test_rel_l2_best"]  # deterministic on CPU


@pytest.mark.parametrize(("doc", "match"), [
    ({"preset": "burgers-galerkin", "epochs": 3}, r"unknown key\(s\) \['epochs'\]; valid keys"),
    ({"preset": "burgers-galerkin", "train_config": {"epochs": 0}},
     r"c.yaml: `epochs` must be an integer >= 1; got 0"),
    ({"preset": "burgers-galerkin", "train_config": {"epoch": 3}},
     r"c.yaml: Unknown TrainConfig key\(s\) \['epoch'\]; valid keys: task, epochs"),
    ({"preset": "burgers-galerkin", "train_config": [1, 2]},
     r"`train_config` must be a mapping of TrainConfig fields; got \[1, 2\]"),
    ({"preset": 3}, r"`preset` must be a training preset name; got 3"),
    ({"train_config": {"epochs": 2}}, r"argument --preset is required \(or `preset` in the"),
    # values of the file are named as its keys, not as the options the user did not give
    ({"preset": "burgers-galerkn"},
     r"c.yaml: `preset` must be one of burgers-galerkin, .*; got 'burgers-galerkn'\.$"),
    ({"preset": "burgers-galerkin", "data": "nothere.nc"},
     r"c.yaml: `data` must be an existing file; got 'nothere.nc', which does not exist\.$"),
    ({"preset": "burgers-galerkin", "train_config": {"n_train": 100}},
     r"key `n_train` of .*c.yaml: must be at most 22 \(the 24 samples of .* less one each "
     r"for validation and test\); got 100\.$"),
    ({"preset": "burgers-galerkin", "train_config": {"resolution": 100}},
     r"key `resolution` of .*c.yaml must be reachable from 128 by striding \(the grid of "
     r".*burgers.nc\): one of \[1, 2, 4, .*128\]; got 100\.$"),
    ("- just\n- a list\n", r"must hold a mapping of preset, data"),
    ("preset: [unclosed\n", r"must be valid YAML; got a parse error at line 2"),
])
def test_bad_config_file_is_one_line(doc, match, tmp_path, burgers_file, capsys):
    path = tmp_path / "c.yaml"
    if isinstance(doc, str):
        path.write_text(doc)
    else:
        _write_yaml(path, {"data": str(burgers_file), **doc})
    assert main(["train", "--config", str(path), "--print-config"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("neuralop-fem train: error: ")
    assert re.search(match, err.rstrip("\n")), err
    if "is required" not in err:  # a value of the file: named as its key, not as an option
        assert "argument --" not in err, err


def test_set_over_the_file_is_named_as_set(tmp_path, burgers_file, capsys):
    cfg = _write_yaml(tmp_path / "c.yaml", {"preset": "burgers-galerkin",
                                            "data": str(burgers_file),
                                            "train_config": {"resolution": 64}})
    assert main(["train", "--config", cfg, "--set", "resolution=100", "--print-config"]) == 2
    err = capsys.readouterr().err
    assert "error: --set resolution must be reachable from 128 by striding" in err


def test_yaml_numbers_without_a_dot_are_numbers(tmp_path, burgers_file):
    """``lr_max: 1e-3`` is the number it reads as (PyYAML alone reads YAML 1.1, a string)."""
    path = tmp_path / "c.yaml"
    path.write_text(f"preset: burgers-galerkin\ndata: {burgers_file}\ntrain_config:\n"
                    "  lr_max: 5e-4\n  weight_decay: 1E-5\n  gamma: .5e0\n"
                    "model_config:\n  norm_eps: 1.0e-6\n")
    proc = run_cli(["train", "--config", str(path), "--print-config", "json"])
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["train_config"]["lr_max"] == 5e-4
    assert doc["train_config"]["weight_decay"] == 1e-5
    assert doc["train_config"]["gamma"] == 0.5
    assert doc["model_config"]["norm_eps"] == 1e-6


def test_out_of_the_config_file_is_named_as_its_key(tmp_path, burgers_file, capsys,
                                                    monkeypatch):
    monkeypatch.chdir(tmp_path)  # no runs/ here
    cfg = _write_yaml(tmp_path / "c.yaml", {"preset": "burgers-galerkin",
                                            "data": str(burgers_file), "out": "runs/gt"})
    assert main(["train", "--config", cfg]) == 2
    err = capsys.readouterr().err
    assert err == (f"neuralop-fem train: error: {cfg}: `out` must be in an existing directory; "
                   "got 'runs/gt' ('runs' does not exist).\n")
    assert main(["train", "--config", cfg, "--out", "runs/b"]) == 2  # the option: named so
    assert "error: argument --out: must be in an existing directory" in capsys.readouterr().err


def test_config_suffix_and_missing_out(tmp_path, burgers_file, capsys):
    bad = tmp_path / "c.toml"
    bad.write_text("preset = 'x'\n")
    assert main(["train", "--config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "argument --config: must be a file ending in .yaml, .yml, .json" in err
    cfg = _write_yaml(tmp_path / "c.yml", {"preset": "burgers-galerkin",
                                          "data": str(burgers_file)})
    assert main(["train", "--config", cfg]) == 2
    assert capsys.readouterr().err == ("neuralop-fem train: error: argument --out is required "
                                       "(or `out` in the --config file).\n")
    # printed all the same (a run.json's settings have no `out`), saying what training needs
    assert main(["train", "--config", cfg, "--print-config"]) == 0
    captured = capsys.readouterr()
    assert "\nout: null\n" in captured.out
    assert captured.err == ("neuralop-fem train: warning: the printed configuration has no "
                            "`out` key (the run directory): add `out: DIR` to it, or pass --out "
                            "DIR, to train it.\n")


def test_the_config_file_of_docs_training_md_as_written(tmp_path, darcy_file):
    """The YAML example of docs/training.md and its first two commands (with --print-config),
    only `data:` pointed at a test file."""
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / "training.md").read_text()
    block = re.search(r"```yaml\n(# darcy-small\.yaml\n.*?)```", text, re.S)
    assert block, "the darcy-small.yaml example left docs/training.md"
    doc = block.group(1)
    assert "data: darcy.nc\n" in doc
    cfg = tmp_path / "darcy-small.yaml"
    cfg.write_text(doc.replace("data: darcy.nc\n", f"data: {darcy_file}\n"))
    assert "neuralop-fem train --config darcy-small.yaml --print-config" in text
    proc = run_cli(["train", "--config", str(cfg), "--print-config"])
    assert proc.returncode == 0, proc.stderr
    resolved = yaml.safe_load(proc.stdout)
    want = yaml.safe_load(doc)
    for key in ("preset", "out"):
        assert resolved[key] == want[key], key
    for section in ("train_config", "model_config"):
        for key, value in want[section].items():
            assert resolved[section][key] == value, (section, key)
    assert "--config darcy-small.yaml --epochs 80 --set weight_decay=0 --out runs/b" in text
    proc = run_cli(["train", "--config", str(cfg), "--epochs", "80", "--set", "weight_decay=0",
                    "--out", str(tmp_path / "b"), "--print-config"])
    assert proc.returncode == 0, proc.stderr
    varied = yaml.safe_load(proc.stdout)
    assert varied["train_config"]["epochs"] == 80
    assert varied["train_config"]["weight_decay"] == 0
    assert varied["train_config"]["scheduler"] == "cosine"  # the rest of the file stays


def test_help_of_config_names_every_key(capsys):
    from neuralop_fem.commands._config_file import KEYS

    assert main(["train", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    start = text.index("--config FILE configuration file")
    config_help = text[start:text.index("--print-config", start)]
    assert all(key in config_help for key in KEYS), config_help
