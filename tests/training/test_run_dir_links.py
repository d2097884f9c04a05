"""Symbolic links in and at a run directory are never written through.

Links planted at the old fixed temporary names (``last.pt.tmp`` ...), at the trainer's own
file names (before or during a run), at ``evaluate``'s output names, or at the run directory
itself must leave every file outside the run directory exactly as it was: the trainer refuses
a linked run directory and linked files (``--overwrite`` removes the links, not their
targets), and every write replaces a link that appears at its name.
"""

from __future__ import annotations

import json
import shutil

import pytest

from neuralop_fem.cli import main
from neuralop_fem.errors import RunDirectoryError
from neuralop_fem.models import PRESETS
from neuralop_fem.surrogate import Surrogate
from neuralop_fem.training import TrainConfig, Trainer

from .conftest import TINY_BURGERS

CONFIG = TrainConfig(task="burgers", epochs=2, batch_size=4, n_train=12, n_val=4, n_test=4,
                     resolution=64)
MODEL = PRESETS["burgers-galerkin"].replace(**TINY_BURGERS)
NAMES = ("last.pt", "best.pt", "run.json", "metrics.csv", "loss_curve.png")


def _trainer(run, data, **kwargs):
    return Trainer(run, data, model_config=MODEL, config=CONFIG, **kwargs)


@pytest.fixture
def outside(tmp_path):
    """A directory of files the run must never touch; returns a function that checks them."""
    root = tmp_path / "outside"
    root.mkdir()
    for i, name in enumerate((*NAMES, "results.csv", "results.json")):
        (root / name).write_bytes(f"precious {i}\n".encode())
    before = {p.name: p.read_bytes() for p in root.iterdir()}

    def untouched():
        assert {p.name: p.read_bytes() for p in root.iterdir()} == before

    untouched.root = root
    return untouched


def _plant(run, names, outside_root, *, suffix=""):
    for name in names:
        link = run / f"{name}{suffix}"
        link.unlink(missing_ok=True)
        link.symlink_to(outside_root / name)


def _all_regular(run):
    for name in NAMES:
        assert not (run / name).is_symlink(), name
        assert (run / name).is_file(), name


def test_links_at_the_old_temporary_names_are_left_alone(tmp_path, burgers_file, outside):
    run = tmp_path / "run"
    _trainer(run, burgers_file).fit(max_epochs_this_call=1)
    _plant(run, NAMES, outside.root, suffix=".tmp")
    result = _trainer(run, burgers_file).fit()  # the resumed run of the issue
    assert result["finished"]
    outside()
    _all_regular(run)
    assert all((run / f"{name}.tmp").is_symlink() for name in NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_a_trainer_file_that_is_a_link_is_refused_or_removed(tmp_path, burgers_file, outside,
                                                            name):
    run = tmp_path / "run"
    _trainer(run, burgers_file).fit(max_epochs_this_call=1)
    _plant(run, [name], outside.root)
    with pytest.raises(RunDirectoryError, match=rf"{name}: is a symbolic link \(to .*outside/"
                                                rf"{name}\); the trainer writes only regular "
                                                r"files .* or pass overwrite=True"):
        _trainer(run, burgers_file)
    _trainer(run, burgers_file, overwrite=True).fit()
    outside()
    _all_regular(run)


def test_links_planted_during_the_run_are_replaced(tmp_path, burgers_file, outside):
    run = tmp_path / "run"

    def plant(trainer, row):
        if row["epoch"] == 1:
            _plant(run, NAMES, outside.root)

    _trainer(run, burgers_file).fit(callback=plant)
    outside()
    _all_regular(run)
    assert json.loads((run / "run.json").read_text())["status"] == "finished"


def test_a_run_dir_that_is_a_link_is_refused(tmp_path, burgers_file):
    target = tmp_path / "elsewhere"
    target.mkdir()
    (tmp_path / "run").symlink_to(target)
    with pytest.raises(RunDirectoryError, match=r"`run_dir` must be a directory, not a symbolic "
                                                r"link; got .*run -> .*elsewhere\. Pass the "
                                                r"link's target"):
        _trainer(tmp_path / "run", burgers_file)
    assert list(target.iterdir()) == []
    (tmp_path / "file").write_text("x")
    with pytest.raises(RunDirectoryError, match=r"`run_dir` must be a directory; got .*file"):
        _trainer(tmp_path / "file", burgers_file)


def test_evaluate_replaces_links_at_its_outputs(tmp_path, burgers_file, outside, capsys):
    run = tmp_path / "run"
    _trainer(run, burgers_file).fit()
    out = run / "results.csv"
    _plant(run, ["results.csv", "results.json"], outside.root)
    assert main(["evaluate", str(run), "--data", str(burgers_file), "--out", str(out)]) == 0
    outside()
    assert out.read_text().startswith("sample,rel_l2,rel_h1")
    assert not out.is_symlink()
    assert not out.with_suffix(".json").is_symlink()


def test_reading_through_a_link_is_allowed(tmp_path, burgers_file):
    run = tmp_path / "run"
    _trainer(run, burgers_file).fit()
    store = tmp_path / "store"
    store.mkdir()
    shutil.move(run / "best.pt", store / "best.pt")
    (run / "best.pt").symlink_to(store / "best.pt")  # e.g. git-annex or DVC managed files
    assert Surrogate.load(run, device="cpu").resolution == 64
