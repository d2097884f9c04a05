"""A preset's split and grid fitted to a small file (``fit_to_data``), and the command line
that uses it: ``neuralop-fem train`` on a small file without split or resolution options."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from neuralop_fem.errors import ConfigError
from neuralop_fem.models import PRESETS
from neuralop_fem.training import fit_to_data, training_preset
from neuralop_fem.training.small_data import SPLIT_FIELDS, fit_resolution, fit_split

from .conftest import TINY_BURGERS, set_args

ROOT = Path(__file__).resolve().parents[2]
BURGERS = training_preset("burgers-galerkin")  # 1024 / 100 / 100, n = 512
DARCY = training_preset("darcy-galerkin")  # 1024 / 100 / 100, n = 141
INVERSE = training_preset("darcy-inverse-galerkin")
FLAGS = {"n_train": "--n-train", "n_val": "--n-val", "n_test": "--n-test",
         "resolution": "--resolution"}


def _split(n_samples, config=BURGERS, **kw):
    sizes, note = fit_split(n_samples, config, **kw)
    return tuple(sizes[f] for f in SPLIT_FIELDS), note


def test_a_file_large_enough_keeps_the_preset_split():
    assert _split(1224) == ((1024, 100, 100), None)
    assert _split(5000) == ((1024, 100, 100), None)


def test_a_small_file_is_split_about_80_10_10_and_the_note_says_why():
    sizes, note = _split(64, names=FLAGS, where="b.nc")
    assert sizes == (52, 6, 6)
    assert note.count("\n") == 0
    for part in ("52 training / 6 validation / 6 test", "b.nc holds 64 samples",
                 "1024 + 100 + 100 = 1224", "--n-train/--n-val/--n-test"):
        assert part in note, note


@pytest.mark.parametrize(("n", "sizes"), [(3, (1, 1, 1)), (4, (2, 1, 1)), (24, (20, 2, 2)),
                                          (1000, (800, 100, 100)), (1223, (1023, 100, 100))])
def test_chosen_splits(n, sizes):
    assert _split(n)[0] == sizes


def test_too_few_samples_to_split_at_all():
    with pytest.raises(ConfigError, match=r"at least 3 samples .* got 2 in b\.nc"):
        fit_split(2, BURGERS, where="b.nc")


def test_chosen_sizes_are_kept_and_the_others_fill_the_rest():
    cfg = BURGERS.replace(n_train=40)
    assert _split(64, cfg, keep={"n_train"})[0] == (40, 6, 6)
    assert _split(64, BURGERS.replace(n_train=60), keep={"n_train"})[0] == (60, 2, 2)
    assert _split(64, BURGERS.replace(n_val=5), keep={"n_val"})[0] == (53, 5, 6)
    sizes, note = _split(64, BURGERS.replace(n_train=8, n_val=4, n_test=4),
                         keep={"n_train", "n_val", "n_test"})
    assert sizes == (8, 4, 4)
    assert note is None
    # the preset's sizes that fit next to a chosen one are kept as they are
    assert _split(2000, BURGERS.replace(n_train=10), keep={"n_train"}) == ((10, 100, 100), None)


@pytest.mark.parametrize(("keep", "values", "match"), [
    ({"n_train"}, {"n_train": 100},
     r"^argument --n-train: must be at most 62 \(the 64 samples of b\.nc less one each for "
     r"validation and test\); got 100\.$"),
    ({"n_train", "n_val"}, {"n_train": 50, "n_val": 20},
     r"^argument --n-train/--n-val: must add up to at most 63 .* less one for test\); got 50 "
     r"\+ 20 = 70\.$"),
    ({"n_test"}, {"n_test": 64}, r"argument --n-test: must be at most 62 .*got 64"),
])
def test_chosen_sizes_larger_than_the_file_name_the_option_and_both_counts(keep, values, match):
    with pytest.raises(ConfigError, match=match):
        fit_split(64, BURGERS.replace(**values), keep=keep, names=FLAGS, where="b.nc")


def test_every_split_is_disjoint_within_the_file_and_keeps_the_chosen_sizes():
    for n in range(3, 130):
        for r in range(4):
            for keep in itertools.combinations(SPLIT_FIELDS, r):
                values = {f: max(1, (n // (3 + i))) for i, f in enumerate(keep)}
                cfg = BURGERS.replace(**values)
                try:
                    sizes, _ = fit_split(n, cfg, keep=keep)
                except ConfigError:
                    assert sum(values.values()) + 3 - len(keep) > n
                    continue
                assert all(sizes[f] >= 1 for f in SPLIT_FIELDS), (n, keep, sizes)
                assert sum(sizes.values()) <= n, (n, keep, sizes)
                assert all(sizes[f] == values[f] for f in keep), (n, keep, sizes)


def test_explicit_indices_are_left_alone():
    cfg = BURGERS.replace(train_indices=(0, 1), val_indices=(2,), test_indices=(3,))
    assert _split(10, cfg) == ((1024, 100, 100), None)


@pytest.mark.parametrize(("config", "n_full", "expected"), [
    (BURGERS, 8192, 512), (BURGERS, 1024, 512), (BURGERS, 32, 32), (BURGERS, 1000, 500),
    (BURGERS, 300, 300), (DARCY, 421, 141), (DARCY, 85, 85), (DARCY, 29, 29), (DARCY, 201, 101),
    (INVERSE, 29, 29),
])
def test_the_training_grid_is_the_preset_s_or_the_largest_reachable_below(config, n_full,
                                                                          expected):
    n, note = fit_resolution(n_full, config, model_config=PRESETS["darcy-inverse-galerkin"],
                             names=FLAGS, where="f.nc")
    assert n == expected
    if expected == config.resolution:
        assert note is None
    else:
        assert f"n={expected}" in note
        assert f"preset's {config.resolution}" in note
        assert f"n={n_full} grid of f.nc" in note
        assert "--resolution" in note


def test_the_inverse_grid_must_pool_to_its_coarse_target():
    model = PRESETS["darcy-inverse-galerkin"]  # coarse grid round(0.25 (n - 1)) + 1
    # 57: coarse grid 15, and 56 % 14 == 0
    assert fit_resolution(57, INVERSE, model_config=model)[0] == 57
    # 71 reaches 71, 36, 15, 11, 8, 6, 3, 2; coarse grids 19, 10, 5, 4, 3 do not pool
    # (70 % 18, 35 % 9, 14 % 4, 10 % 3, 7 % 2), 6 -> 2 does
    assert fit_resolution(71, INVERSE, model_config=model)[0] == 6


def test_a_chosen_or_file_grid_resolution_is_not_changed():
    assert fit_resolution(32, BURGERS.replace(resolution=16), keep={"resolution"}) == (16, None)
    assert fit_resolution(32, BURGERS.replace(resolution=None)) == (None, None)


def test_a_chosen_resolution_the_file_cannot_reach_is_an_error_naming_where_it_was_chosen():
    with pytest.raises(ConfigError, match=r"^--resolution must be reachable from 32 by striding "
                                          r"\(the grid of f\.nc\): one of \[1, 2, 4, 8, 16, 32\]; "
                                          r"got 512\.$"):
        fit_resolution(32, BURGERS, keep={"resolution"}, names=FLAGS, where="f.nc")


def test_no_usable_grid_below_the_preset_is_an_error_listing_the_reachable_ones():
    with pytest.raises(ConfigError, match=r"^argument --resolution: the preset's n=512 is not "
                                          r"reachable from the n=1021 grid of f\.nc .* "
                                          r"\[1, 1021\] with --resolution"):
        fit_resolution(1021, BURGERS, names=FLAGS, where="f.nc")


def test_fit_to_data_on_a_file(burgers_file, darcy_file):
    config, notes = fit_to_data(BURGERS, burgers_file)  # 24 samples at n = 128
    assert (config.n_train, config.n_val, config.n_test, config.resolution) == (20, 2, 2, 128)
    assert len(notes) == 2
    assert all("\n" not in n for n in notes)
    assert fit_to_data(BURGERS.replace(n_train=12, n_val=4, n_test=4, resolution=64),
                       burgers_file, keep={"n_train", "n_val", "n_test"}) == \
        (BURGERS.replace(n_train=12, n_val=4, n_test=4, resolution=64), [])
    with pytest.raises(ConfigError, match="must be a burgers dataset"):
        fit_to_data(BURGERS, darcy_file)


def test_train_on_a_small_file_says_which_split_and_grid_it_chose(tmp_path, burgers_file):
    """The real command, no split or resolution option: two lines on stdout, then training."""
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    run = tmp_path / "run"
    args = ["train", "--data", str(burgers_file), "--preset", "burgers-galerkin", "--out",
            str(run), "--epochs", "1", "--batch-size", "4", *set_args(TINY_BURGERS)]
    proc = subprocess.run([sys.executable, "-m", "neuralop_fem.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("split: 20 training / 2 validation / 2 test samples"), lines
    assert "--n-train/--n-val/--n-test" in lines[0]
    assert lines[1].startswith("resolution: n=128 (the file's grid) instead of the preset's 512")
    assert "--resolution" in lines[1]
    info = json.loads((run / "run.json").read_text())
    assert info["sample_counts"] == {"train": 20, "val": 2, "test": 2}
    assert info["resolution"] == 128
    assert info["status"] == "finished"
