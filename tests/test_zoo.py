"""The model zoo: every packaged model against its card on regenerated test samples, packing a
run (``zoo add``), ``zoo:NAME`` and ``Surrogate.pretrained``, the command line, the errors."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import xarray as xr

from neuralop_fem import Surrogate
from neuralop_fem.cli import main
from neuralop_fem.data.generation import config_class, generate_samples
from neuralop_fem.errors import ConfigError, InputError, RunDirectoryError
from neuralop_fem.evaluation import evaluate_run
from neuralop_fem.models import PRESETS
from neuralop_fem.runs.weights import read_payload
from neuralop_fem.training import TrainConfig, Trainer, load_trained
from neuralop_fem.zoo import (
    CARD,
    CARD_MD,
    PLANNED,
    WEIGHTS,
    available,
    entry_dir,
    planned_missing,
    read_card,
)
from neuralop_fem.zoo.pack import add_to_zoo, read_verdict

from .training.conftest import TINY_BURGERS

_ROOT = Path(__file__).resolve().parents[1]  # the checkout, for subprocesses

#: Test samples regenerated per zoo model: each costs one solve at the dataset's grid (Darcy
#: 421: about a second) and one forward pass per evaluated resolution.
N_CHECK = 2
#: Per-sample errors must match the card to this relative tolerance. The regenerated samples
#: equal the file's to round-off (same per-sample seeds; batched solves agree to ~1e-15), and
#: the float32 model's output moves by ~1e-6 relative with the batch composition and the CPU's
#: kernels, which moves an error of ~1e-2 by ~1e-4 relative: 1e-3 leaves a 10x margin, while
#: other weights, normalisers, samples or seeds change the errors by O(1).
RTOL = 1e-3


def _regenerated(card):
    """The first N_CHECK test samples of the card's dataset, regenerated (sample coordinates
    = their indices in the file)."""
    data = card["data"]
    settings = dict(data["settings"])
    fixed = {k: settings.pop(k) for k in ("problem", "resolution", "dataset_seed", "dtype")}
    config = config_class(fixed["problem"]).from_stored(settings)
    indices = card["test"]["indices"][:N_CHECK]
    return indices, generate_samples(fixed["problem"], indices, resolution=fixed["resolution"],
                                     seed=fixed["dataset_seed"], config=config,
                                     dtype=fixed["dtype"])


@pytest.mark.parametrize("name", available())
def test_zoo_model_loads_weights_only_and_matches_its_card(name):
    card = read_card(name)
    weights = entry_dir(name) / WEIGHTS
    assert hashlib.sha256(weights.read_bytes()).hexdigest() == card["weights"]["sha256"]
    payload = read_payload(weights)  # safetensors: tensors and text metadata, nothing else
    assert all(isinstance(v, torch.Tensor) for v in payload["state_dict"].values())
    sur = Surrogate.pretrained(name)
    assert sur.card == card
    from neuralop_fem.zoo.card import render_markdown

    assert (entry_dir(name) / "card.md").read_text() == render_markdown(card)  # no stale card
    assert sum(p.numel() for p in sur.operator.model.parameters()) == card["n_parameters"]
    indices, ds = _regenerated(card)
    assert ds["sample"].values.tolist() == indices
    positions = [card["test"]["indices"].index(i) for i in indices]
    for entry in card["test"]["errors"]:
        result = evaluate_run(f"zoo:{name}", ds, resolution=entry["resolution"],
                              indices=range(len(indices)))
        for key in ("rel_l2", "rel_h1"):
            expected = np.asarray(entry[key])[positions]
            np.testing.assert_allclose(result[key], expected, rtol=RTOL,
                                       err_msg=f"{name} {key} at n={entry['resolution']}")


# -- packing a run -----------------------------------------------------------------------------

CFG = TrainConfig(task="burgers", epochs=1, batch_size=4, n_train=16, n_val=4, n_test=4,
                  resolution=64, gamma=0.1)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory, burgers_file):
    """A finished one-epoch run of a tiny Galerkin model at n = 64 on the 128-point file."""
    run = tmp_path_factory.mktemp("zoo") / "run"
    model = PRESETS["burgers-galerkin"].replace(**TINY_BURGERS)
    with Trainer(run, burgers_file, model_config=model, config=CFG,
                 preset="burgers-galerkin") as trainer:
        trainer.fit()
    return run


def test_zoo_add_packs_a_run_that_loads_and_predicts_the_same(tmp_path, tiny_run, burgers_file):
    target = add_to_zoo(tiny_run, name="tiny-gt", data=burgers_file, resolutions=[64, 128],
                        root=tmp_path)
    assert sorted(p.name for p in target.iterdir()) == [CARD, CARD_MD, "run.json", WEIGHTS]
    card = read_card("tiny-gt", tmp_path)
    info = json.loads((tiny_run / "run.json").read_text())
    assert card["test"]["indices"] == info["splits"]["test"] == [20, 21, 22, 23]
    (own, finer) = card["test"]["errors"]
    assert (own["resolution"], finer["resolution"]) == (64, 128)
    assert len(own["rel_l2"]) == len(finer["rel_h1"]) == 4
    # the trainer's test error of the selected model (float32 batch order)
    assert own["rel_l2_mean"] == pytest.approx(info["test_rel_l2_best"], rel=1e-6)
    assert card["data"]["dataset_seed"] == 1
    assert card["data"]["checksum"].startswith("sha256:")
    assert card["data"]["generate_command"].startswith(
        "neuralop-fem generate burgers --samples 24 --resolution 128 --seed 1 ")
    assert "--preset burgers-galerkin" in card["train_command"]
    assert "--set d_model=16" in card["train_command"]
    assert card["training"]["hardware"] == info["hardware"]
    assert card["fair_verdict"] is None
    assert "| 128 (direct) |" in (target / CARD_MD).read_text()
    # the packed weights give bitwise the predictions of best.pt
    best, _ = load_trained(tiny_run)
    packed, record = load_trained(target)
    assert record["data"]["path"] is None
    x = torch.randn(3, 64, 1, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        torch.testing.assert_close(packed(x), best(x), rtol=0, atol=0)
    # the card's per-sample errors are what evaluating the entry gives
    again = evaluate_run(target, burgers_file, resolution=128)
    np.testing.assert_allclose(again["rel_l2"], finer["rel_l2"], rtol=1e-6)


def test_zoo_add_refusals(tmp_path, tiny_run, burgers_file, darcy_file):
    with pytest.raises(ConfigError, match="`name` must be 1-64 lower-case letters"):
        add_to_zoo(tiny_run, name="Bad Name", data=burgers_file, root=tmp_path)
    with pytest.raises(ConfigError, match="must be the run's training file"):
        add_to_zoo(tiny_run, name="x", data=darcy_file, root=tmp_path)
    add_to_zoo(tiny_run, name="x", data=burgers_file, root=tmp_path)
    with pytest.raises(ConfigError, match="already holds 'x'.*overwrite=True"):
        add_to_zoo(tiny_run, name="x", data=burgers_file, root=tmp_path)
    report = tmp_path / "report"
    report.mkdir()
    with pytest.raises(ConfigError, match="comparison.nc is missing"):
        read_verdict(report, tiny_run)
    xr.Dataset(attrs={"run_dir": str(tmp_path), "verdict": "v"}).to_netcdf(
        report / "comparison.nc")
    with pytest.raises(ConfigError, match="must be a comparison of the run"):
        read_verdict(report, tiny_run)
    xr.Dataset(attrs={"run_dir": str(tiny_run), "verdict": "faster", "n_samples": 4,
                      "fair_speedup": 2.5, "fair_error": float("nan")}).to_netcdf(
        report / "comparison.nc", mode="w")
    assert read_verdict(report, tiny_run) == {"verdict": "faster", "n_samples": 4,
                                              "fair_speedup": 2.5, "fair_error": None}


def test_unknown_names_and_damaged_weights(tmp_path, tiny_run, burgers_file):
    listed = ", ".join(available()) or "none \\(the zoo is empty\\)"
    with pytest.raises(InputError, match=f"unknown zoo model 'nope'; available: {listed}\\.$"):
        Surrogate.pretrained("nope")
    with pytest.raises(InputError, match="unknown zoo model 'nope'"):
        evaluate_run("zoo:nope", burgers_file)
    empty = tmp_path / "empty_zoo"
    empty.mkdir()
    with pytest.raises(InputError, match="zoo model 'darcy-fno' is planned but not in this "
                                         "version .*; available: none \\(the zoo is empty\\)"):
        entry_dir("darcy-fno", empty)
    assert planned_missing(empty) == list(PLANNED)
    target = add_to_zoo(tiny_run, name="broken", data=burgers_file, root=tmp_path)
    # one weight changed, the file still valid safetensors: the card's checksum catches it
    raw = bytearray((target / WEIGHTS).read_bytes())
    raw[-3] ^= 0x40
    (target / WEIGHTS).write_bytes(bytes(raw))
    with pytest.raises(RunDirectoryError, match="is not the file its model card was packed "
                                                "with .*reinstall the package"):
        Surrogate.load(target)
    # a file that is no safetensors at all, the card's record made to agree with it
    (target / WEIGHTS).write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}")
    card = json.loads((target / CARD).read_text())
    card["weights"]["sha256"] = hashlib.sha256((target / WEIGHTS).read_bytes()).hexdigest()
    (target / CARD).write_text(json.dumps(card))
    with pytest.raises(RunDirectoryError, match="weights.safetensors must be the safetensors"):
        Surrogate.load(target)


# -- the command line --------------------------------------------------------------------------

def _cli(*args, cwd=None):
    env = {**os.environ, "PYTHONPATH": str(_ROOT)}
    return subprocess.run([sys.executable, "-m", "neuralop_fem.cli", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=300, cwd=cwd)


def test_command_line(tmp_path, tiny_run, burgers_file, capsys):
    zoo = tmp_path / "zoo"
    done = _cli("zoo", "add", tiny_run, "--name", "tiny", "--data", burgers_file,
                "--zoo-dir", zoo)
    assert done.returncode == 0, done.stderr
    assert "added tiny to the zoo" in done.stdout
    assert "## Test errors" in done.stdout  # the card
    listed = ", ".join(available()) or "none (the zoo is empty)"
    shown = _cli("zoo", "show", "nope")
    assert shown.returncode == 2
    assert shown.stderr == f"neuralop-fem zoo show: error: unknown zoo model 'nope'; available: " \
                           f"{listed}.\n"
    # the rest in this process (the same main() the subprocesses run)
    assert main(["zoo", "add", str(tiny_run), "--name", "tiny", "--data", str(burgers_file),
                 "--zoo-dir", str(zoo)]) == 2
    err = capsys.readouterr().err
    assert err.strip().endswith("pass --overwrite to replace it.")
    assert len(err.strip().splitlines()) == 1
    assert main(["zoo", "--zoo-dir", str(zoo)]) == 0
    head, row = capsys.readouterr().out.splitlines()
    assert head.split()[:3] == ["name", "problem", "preset"]
    assert row.split()[:3] == ["tiny", "burgers", "burgers-galerkin"]
    assert main(["evaluate", "zoo:nope", "--data", str(burgers_file)]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(
        f"argument RUN_DIR: unknown zoo model 'nope'; available: {listed}")
    assert main(["zoo", "add", str(tiny_run), "--name", "Bad", "--data", str(burgers_file),
                 "--zoo-dir", str(zoo)]) == 2
    assert "error: --name must be 1-64 lower-case letters" in capsys.readouterr().err


@pytest.mark.skipif(not available(), reason="the zoo is empty")
def test_command_line_package_zoo(capsys):
    name = available()[0]
    assert main(["zoo"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[1:len(available()) + 1]] == available()
    pending = [n for n in PLANNED if n not in available()]
    assert lines[len(available()) + 1:] == (
        [f"planned, training pending: {', '.join(pending)}"] if pending else [])
    assert main(["zoo", "show", f"zoo:{name}"]) == 0
    shown = capsys.readouterr().out
    assert shown == (entry_dir(name) / CARD_MD).read_text()
    assert f'Surrogate.pretrained("{name}")' in shown


def test_an_unfinished_run_is_refused(tmp_path, burgers_file, capsys):
    model = PRESETS["burgers-galerkin"].replace(**TINY_BURGERS)
    with Trainer(tmp_path / "run", burgers_file, model_config=model,
                 config=CFG.replace(epochs=2), preset="burgers-galerkin") as trainer:
        trainer.fit(max_epochs_this_call=1)
    assert main(["zoo", "add", str(tmp_path / "run"), "--name", "half", "--data",
                 str(burgers_file), "--zoo-dir", str(tmp_path / "zoo")]) == 2
    assert "must hold a finished run" in capsys.readouterr().err
    assert not (tmp_path / "zoo" / "half").exists()


@pytest.mark.skipif("burgers-fno" not in available(), reason="burgers-fno is not in the zoo")
def test_the_first_minute_of_using_a_surrogate_runs_as_written(tmp_path):
    """docs/using_a_surrogate.md starts from a zoo model: its first code block, as written."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "using_a_surrogate.md").read_text()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    env = {**os.environ, "PYTHONPATH": str(_ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary, errors = done.stdout.strip().splitlines()
    assert summary == read_card("burgers-fno")["summary"]
    values = np.array(errors.strip("[]").split(), dtype=float)
    # four fresh initial conditions: within a factor 5 of the card's mean test error (1.1e-2)
    mean = read_card("burgers-fno")["test"]["errors"][0]["rel_l2_mean"]
    assert values.shape == (4,)
    assert (values < 5 * mean).all(), values


def test_a_card_lists_every_commit_a_resumed_run_trained_under(tiny_run, burgers_file, tmp_path):
    from neuralop_fem.zoo.card import render_markdown

    card = read_card("tiny", add_to_zoo(tiny_run, name="tiny", data=burgers_file,
                                        root=tmp_path).parent)
    assert len(card["code_history"]) == 1
    row = [line for line in render_markdown(card).splitlines() if "| code commit |" in line]
    assert row == [f"| code commit | `{card['code']['commit'] or 'unknown'}"
                   f"{' (with uncommitted changes)' if card['code']['dirty'] else ''}` |"]
    done = card["training"]["epochs_completed"]
    card["code_history"] = [{"commit": None, "dirty": None, "from_epoch": 1},
                            {"commit": "0123456789abcdef", "dirty": True, "from_epoch": done}]
    row = [line for line in render_markdown(card).splitlines() if "| code commit |" in line]
    assert row == [f"| code commit | `unknown` epochs 1-{done - 1}; `0123456789ab` (with "
                   f"uncommitted changes) epochs {done}-{done} |"]


def test_train_zoo_status_lists_every_run_without_training(tmp_path):
    """``scripts/train_zoo.sh --status``: one line per run of the script, nothing generated or
    trained; a wrong option is one line on stderr and exit 2."""
    script = Path(__file__).resolve().parents[1] / "scripts" / "train_zoo.sh"
    runs = tmp_path / "runs"
    (runs / "darcy-fno").mkdir(parents=True)
    (runs / "darcy-fno" / "run.json").write_text(json.dumps({
        "status": "running", "epochs_completed": 34, "train_config": {"epochs": 100},
        "best_val_rel_l2": 0.01698, "best_epoch": 34, "wall_time_s": 7200.0}))
    torch.save({"epoch": 34, "within_epoch": {"batches_done": 120}},
               runs / "darcy-fno" / "partial.pt")
    (runs / "burgers-fno").mkdir()
    (runs / "burgers-fno" / "run.json").write_text(json.dumps({
        "status": "running", "epochs_completed": 3, "train_config": {"epochs": 200},
        "best_val_rel_l2": 0.5, "best_epoch": 3, "wall_time_s": 360.0}))
    (runs / "burgers-fno" / "partial.pt").write_bytes(b"damaged")
    (runs / "burgers-galerkin").mkdir()
    (runs / "burgers-galerkin" / "run.json").write_text("{damaged")
    (runs / "darcy-inverse-galerkin").mkdir()
    (runs / "darcy-inverse-galerkin" / "run.json").write_text(json.dumps({
        "status": "running", "epochs_completed": 30, "train_config": {"epochs": 100},
        "best_val_rel_l2": 0.04, "best_epoch": 30, "wall_time_s": 3600.0,
        "rollbacks": [{"epoch": 22, "train_loss": 1650.0, "val_rel_l2": 0.5, "reason": "x",
                       "lr_scale": 0.5}]}))
    env = {**os.environ, "DATA_DIR": str(tmp_path / "data"), "RUNS_DIR": str(runs),
           "BF16_DIR": str(tmp_path / "bf16")}
    done = subprocess.run(["bash", str(script), "--status"], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(": ", 1) for line in done.stdout.splitlines())
    assert lines[str(runs / "darcy-fno")] == ("running: epoch 34 of 100, best validation rel. "
                                              "L2 1.698e-02 (epoch 34), 2.0 h; partial.pt: "
                                              "batch 120 of epoch 35")
    assert lines[str(runs / "burgers-fno")].endswith("0.1 h; partial.pt unreadable "
                                                     "(UnpicklingError)")
    assert lines[str(runs / "burgers-galerkin")] == ("run.json unreadable (JSONDecodeError); the "
                                                     "next call resumes from last.pt")
    assert lines[str(runs / "darcy-galerkin")] == "not started"
    assert lines[str(runs / "darcy-inverse-galerkin")].endswith(
        "1.0 h; divergence guard undid epoch 22")
    assert set(lines) >= {str(runs / n) for n in PLANNED}  # every zoo model is trained there
    assert not any((tmp_path / "data").iterdir())  # nothing generated
    wrong = subprocess.run(["bash", str(script), "--go"], capture_output=True, text=True,
                           env=env, timeout=120)
    assert wrong.returncode == 2
    assert wrong.stderr == "train_zoo.sh: error: the only option is --status; got '--go'\n"


def test_zoo_dir_before_add_is_where_the_entry_goes(tmp_path, tiny_run, burgers_file, capsys,
                                                    monkeypatch):
    """`zoo --zoo-dir DIR add ...` (the option before the subcommand, as `zoo --help` shows
    it) packs into DIR, never into the package's zoo (here a stand-in directory)."""
    import neuralop_fem.zoo
    import neuralop_fem.zoo.pack

    package = tmp_path / "package-entries"
    package.mkdir()
    monkeypatch.setattr(neuralop_fem.zoo, "ENTRIES", package)
    monkeypatch.setattr(neuralop_fem.zoo.pack, "ENTRIES", package)
    zoo = tmp_path / "zoo"
    zoo.mkdir()
    assert main(["zoo", "--zoo-dir", str(zoo), "add", str(tiny_run), "--name", "before",
                 "--data", str(burgers_file)]) == 0
    capsys.readouterr()
    assert (zoo / "before" / CARD).exists()
    assert not any(package.iterdir())
    other = tmp_path / "other"
    other.mkdir()
    assert main(["zoo", "--zoo-dir", str(zoo), "add", str(tiny_run), "--name", "twice",
                 "--data", str(burgers_file), "--zoo-dir", str(other)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "argument --zoo-dir: must name one zoo directory" in err
    assert not (other / "twice").exists()
    assert not any(package.iterdir())


def test_an_inverse_card_says_its_errors_are_on_the_output_grid(tmp_path, capsys):
    """u at 29 in, a at 8 out: the card's table and the listing name both grids, since the
    test error is measured on the coarse output grid, not at the input resolution."""
    from tests._surrogate_fixtures import inverse_run

    run, data, _ = inverse_run(tmp_path, epochs=1)
    zoo = tmp_path / "zoo"
    zoo.mkdir()
    assert main(["zoo", "--zoo-dir", str(zoo), "add", str(run), "--name", "tiny-inverse",
                 "--data", str(data)]) == 0
    capsys.readouterr()
    card = read_card("tiny-inverse", zoo)
    assert (card["training"]["resolution"], card["training"]["output_resolution"]) == (29, 8)
    rows = [line for line in (zoo / "tiny-inverse" / CARD_MD).read_text().splitlines()
            if line.startswith("| 29")]
    assert len(rows) == 1
    assert rows[0].startswith("| 29 -> 8 (training; errors on the output grid) |")
    assert main(["zoo", "--zoo-dir", str(zoo)]) == 0
    listing = capsys.readouterr().out.splitlines()
    assert listing[1].split()[0] == "tiny-inverse"
    assert f"{card['test']['errors'][0]['rel_l2_mean']:.3e} (29 -> 8)" in listing[1]


def test_a_card_in_another_zoo_dir_says_how_to_use_it_and_that_works(tmp_path, tiny_run,
                                                                    burgers_file, capsys):
    """An entry added with ``zoo --zoo-dir DIR add`` is not ``zoo:NAME`` (that names the
    package's models): its card's examples name DIR, and both run as written."""
    import re
    import shlex

    zoo = tmp_path / "my zoo"  # a space: the command must quote it
    zoo.mkdir()
    assert main(["zoo", "--zoo-dir", str(zoo), "add", str(tiny_run), "--name", "mine",
                 "--data", str(burgers_file)]) == 0
    card = (zoo / "mine" / CARD_MD).read_text()
    assert capsys.readouterr().out.endswith(card)
    (snippet,) = re.findall(r"^surrogate = (Surrogate\.pretrained\(.*\))$", card, re.M)
    sur = eval(snippet, {"Surrogate": Surrogate})  # the card's own line
    assert sur.card["name"] == "mine"
    (command,) = re.findall(r"`(neuralop-fem compare .*?)`", card)
    argv = shlex.split(command.replace("FILE.nc", str(burgers_file))
                       .replace("REPORT", str(tmp_path / "report")))
    assert argv[2] == str(zoo.resolve() / "mine")
    assert main([*argv[1:], "--max-samples", "2", "--no-ladder"]) == 0
    assert (tmp_path / "report" / "summary.md").is_file()
    # the package's models: with or without the zoo: prefix, as everywhere else
    name = available()[0]
    assert Surrogate.pretrained(f"zoo:{name}").card == Surrogate.pretrained(name).card
    with pytest.raises(InputError, match="unknown zoo model 'mine'"):
        Surrogate.pretrained("zoo:mine")


def test_the_zoo_table_of_the_guide_states_each_cards_precision():
    """docs/using_a_surrogate.md's zoo table words each model's precision as its card does:
    float32, or bf16 autocast with the parts the card names kept in float32."""
    import re

    from neuralop_fem.training.config import recorded_float32_parts

    words = {"input_proj": "input layer", "decoder": "decoder", "output": "output layer"}
    text = (_ROOT / "docs" / "using_a_surrogate.md").read_text()
    rows = dict(re.findall(r"^\| `([\w-]+)` \| ([^|]*) \|", text, re.M))
    assert sorted(rows) == available()
    for name, trained in rows.items():
        t = read_card(name)["training"]
        parts = recorded_float32_parts(t.get("amp"), t.get("precision"))
        if parts is None:
            assert "float32" in trained, name
            assert "bf16" not in trained, name
        else:
            kept = " and ".join(words.get(p, p) for p in parts)
            assert f"bf16 autocast with the {kept} in float32" in trained, name
