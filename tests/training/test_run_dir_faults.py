"""Damaged, tampered and hostile run directories met through Surrogate.load and the CLI.

Each case damages one file of a finished run the way a crash, a disk or a person would
(truncated, emptied, random bytes, a directory / FIFO / device in its place, absurd or
mistyped values, a dataset path pointing elsewhere) and checks the user gets one
:class:`RunDirectoryError` naming the file and the field, and from ``neuralop-fem evaluate``
a one-line message with exit status 2.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import warnings

import numpy as np
import pytest
import torch

from neuralop_fem.cli import main
from neuralop_fem.errors import RunDirectoryError
from neuralop_fem.models import PRESETS
from neuralop_fem.surrogate import Surrogate
from neuralop_fem.training import TrainConfig, Trainer, load_trained, read_run_info

from .conftest import TINY_BURGERS

CONFIG = TrainConfig(task="burgers", epochs=2, batch_size=4, n_train=12, n_val=4, n_test=4,
                     resolution=64)
MODEL = PRESETS["burgers-galerkin"].replace(**TINY_BURGERS)
RANDOM = np.random.default_rng(0).bytes(4096)


@pytest.fixture(scope="module")
def finished(tmp_path_factory, burgers_file):
    run = tmp_path_factory.mktemp("finished") / "run"
    Trainer(run, burgers_file, model_config=MODEL, config=CONFIG).fit()
    return run


@pytest.fixture
def run(finished, tmp_path):
    return shutil.copytree(finished, tmp_path / "run")


def _evaluate_error(run, data, capsys) -> str:
    """``neuralop-fem evaluate RUN`` must fail with exit status 2 and one line on stderr."""
    capsys.readouterr()
    assert main(["evaluate", str(run), "--data", str(data)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


# -- the file itself ----------------------------------------------------------------------------


def _truncate(p):
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


def _replace(make):
    def damage(p):
        p.unlink()
        make(p)
    return damage


FILE_DAMAGE = {
    "truncated": _truncate,
    "empty": lambda p: p.write_bytes(b""),
    "random bytes": lambda p: p.write_bytes(RANDOM),
    "a directory": _replace(lambda p: p.mkdir()),
    "a FIFO": _replace(os.mkfifo),
    "a link to /dev/zero": _replace(lambda p: p.symlink_to("/dev/zero")),
}
RUN_JSON_MATCH = {
    "truncated": r"run\.json: is not valid JSON \(.+ at line \d+, column \d+\); expected the "
                 r"run\.json of a training run",
    "empty": r"run\.json: is empty; expected the run\.json",
    "random bytes": r"run\.json: is not UTF-8 text \(byte \d+\)",
    "a directory": r"run\.json: is a directory; expected the run\.json of a training run "
                   r"\(a regular file\)",
    "a FIFO": r"run\.json: is a FIFO",
    "a link to /dev/zero": r"run\.json: is a device",
}
BEST_MATCH = {
    "truncated": r"best\.pt: cannot be read as a best-model checkpoint \(best\.pt\): the file is "
                 r"truncated, damaged, or holds more than tensors",
    "empty": r"best\.pt: is empty",
    "random bytes": r"best\.pt: cannot be read as a best-model checkpoint",
    "a directory": r"best\.pt: is a directory",
    "a FIFO": r"best\.pt: is a FIFO",
    "a link to /dev/zero": r"best\.pt: is a device",
}


@pytest.mark.parametrize("case", list(FILE_DAMAGE))
@pytest.mark.parametrize("name", ["run.json", "best.pt"])
def test_a_damaged_file_is_one_clear_error(run, burgers_file, capsys, name, case):
    FILE_DAMAGE[case](run / name)
    match = (RUN_JSON_MATCH if name == "run.json" else BEST_MATCH)[case]
    t0 = time.perf_counter()
    with pytest.raises(RunDirectoryError, match=match):
        Surrogate.load(run, device="cpu")
    assert time.perf_counter() - t0 < 10  # a FIFO or /dev/zero is never read
    assert name in _evaluate_error(run, burgers_file, capsys)


class _Code:
    def __reduce__(self):
        return (print, ("this would run on torch.load(weights_only=False)",))


def test_pickled_code_is_refused_without_torchs_advice(run, burgers_file, capsys):
    torch.save({"format": "neuralop_fem.training.best/1", "x": _Code()}, run / "best.pt")
    with pytest.raises(RunDirectoryError, match=r"best\.pt: .*\(UnpicklingError\)") as info:
        load_trained(run)
    assert "weights_only" not in str(info.value)
    assert "weights_only" not in _evaluate_error(run, burgers_file, capsys)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_run_json_is_one_clear_error(run):
    (run / "run.json").chmod(0)
    with pytest.raises(RunDirectoryError, match=r"run\.json: permission denied"):
        Surrogate.load(run, device="cpu")


def test_json_limits(run):
    path = run / "run.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(RunDirectoryError, match=r"run\.json: cannot be parsed .*RecursionError"):
        read_run_info(run)
    info = json.loads(json.dumps({"status": "finished", "data": {"attrs": {"x": []}}}))
    nested = info["data"]["attrs"]["x"]
    for _ in range(40):  # below Python's recursion limit, above MAX_JSON_DEPTH
        nested.append([])
        nested = nested[0]
    path.write_text(json.dumps(info))
    with pytest.raises(RunDirectoryError, match=r"nested more than 32 levels deep \(at `data"):
        read_run_info(run)
    path.write_text('{"resolution": 1' + "0" * 5000 + "}")
    with pytest.raises(RunDirectoryError, match=r"run\.json: cannot be parsed .*ValueError"):
        read_run_info(run)
    with path.open("r+b") as fh:
        fh.truncate(65 * 2**20)  # sparse: nothing is written, nothing may be read
    with pytest.raises(RunDirectoryError, match=r"run\.json: is 68,157,440 bytes; the run\.json "
                                                r"of a training run must be at most 67,108,864"):
        read_run_info(run)


def test_a_run_dir_that_is_not_one(tmp_path, run):
    with pytest.raises(RunDirectoryError, match=r"got .*nowhere \(no such directory\)"):
        Surrogate.load(tmp_path / "nowhere")
    with pytest.raises(RunDirectoryError, match=r"got .*run\.json \(not a directory\)"):
        Surrogate.load(run / "run.json")
    (run / "run.json").unlink()
    with pytest.raises(RunDirectoryError, match=r"must be a training run directory with run\.json"):
        Surrogate.load(run)


# -- run.json fields ----------------------------------------------------------------------------


def _edit_json(path, changes):
    info = json.loads(path.read_text())
    for dotted, value in changes.items():
        *parents, key = dotted.split(".")
        target = info
        for p in parents:
            target = target[p]
        target[key] = value
    path.write_text(json.dumps(info))


FIELD_DAMAGE = [
    ({"resolution": 1e30}, r"field `resolution` must be an integer in \[1, 65536\]; got 1e\+30"),
    ({"resolution": "64"}, r"field `resolution` must be an integer in \[1, 65536\]; got '64'"),
    ({"resolution": True}, r"field `resolution` must be an integer in \[1, 65536\]; got True"),
    ({"resolution": 3}, r"run\.json: field `resolution` must be >= 6, the smallest grid"),
    ({"splits.test": [20, "21"]}, r"field `splits\.test` must be a list of sample indices >= 0 "
                                  r"below data\.n_samples = 24; got \[20, '21'\]"),
    ({"splits.test": [20, 99]}, r"field `splits\.test` must be a list of sample indices"),
    ({"splits": [1, 2]}, r"field `splits` must be an object with lists"),
    ({"train_config.epochs": -1}, r"field `train_config`: `epochs` must be an integer >= 1; "
                                  r"got -1"),
    ({"model_config.d_model": "wide"}, r"field `model_config`: `d_model` must be an integer"),
    ({"ood_reference.covariance": [[1.0]]}, r"field `ood_reference` must hold the training-input"),
    ({"ood_reference.mean": [float("nan")] * 4}, r"field `ood_reference` must hold"),
    ({"status": 7}, r"field `status` must be one of 'running', 'finishing', 'finished'"),
    ({"task": "heat"}, r"field `task` must be one of 'burgers', 'darcy'"),
    ({"data.path": 5}, r"field `data\.path` must be a string or null; got 5"),
    ({"data.n_samples": -3}, r"field `data\.n_samples` must be an integer >= 0; got -3"),
    ({"model_family": "resnet"}, r"field `model_family` must be one of 'transformer1d'"),
    ({"format": "other/2"}, r"field `format` must be 'neuralop_fem\.training\.run/1'"),
    ({"best_val_rel_l2": "low"}, r"field `best_val_rel_l2` must be a number or null"),
    ({"rollbacks": [{"epoch": 3}]}, r"field `rollbacks` must be a list of \{epoch >= 1"),
    ({"rollbacks": [{"epoch": 3, "train_loss": 9.0, "val_rel_l2": None, "reason": "",
                     "lr_scale": 2.0}]}, r"field `rollbacks` must be a list of"),
    ({"model_family": "fno1d", "model_config": {}}, r"field `model_family` is 'fno1d' but .*best"
                                                    r"\.pt holds a 'transformer1d' model"),
]


@pytest.mark.parametrize(("changes", "match"), FIELD_DAMAGE, ids=lambda v: str(v)[:40])
def test_a_tampered_run_json_field_is_named(run, burgers_file, capsys, changes, match):
    _edit_json(run / "run.json", changes)
    with pytest.raises(RunDirectoryError, match=match):
        Surrogate.load(run, device="cpu")
    assert "run.json" in _evaluate_error(run, burgers_file, capsys)


def test_evaluate_needs_the_fields_it_uses(run, burgers_file, capsys):
    info = json.loads((run / "run.json").read_text())
    del info["train_config"]
    (run / "run.json").write_text(json.dumps(info))
    Surrogate.load(run, device="cpu")  # the surrogate does not need it
    assert "field `train_config` is missing" in _evaluate_error(run, burgers_file, capsys)


# -- best.pt contents ---------------------------------------------------------------------------


def _edit_best(path, edit):
    payload = torch.load(path, weights_only=True)
    edit(payload)
    torch.save(payload, path)


def _set(*keys, value):
    def edit(payload):
        target = payload
        for k in keys[:-1]:
            target = target[k]
        target[keys[-1]] = value
    return edit


W = "model.input_proj.weight"
BEST_DAMAGE = {
    "another format": (_set("format", value="x/1"), r"must be a best-model checkpoint"),
    "unknown family": (_set("family", value="resnet"),
                       r"best\.pt, field `family` must be one of transformer1d"),
    "too many parameters": (_set("model_config", "d_model", value=65536),
                            r"best\.pt, field `model_config` describes a model with at least "
                            r"[\d,]+ parameters; the limit is 200,000,000"),
    "too deep": (_set("model_config", "num_layers", value=10**6),
                 r"field `model_config` describes a model with 1,?000,?002 layers; the limit"),
    "invalid config": (_set("model_config", "num_heads", value=3),
                       r"field `model_config`: `d_model` must be divisible by `num_heads`=3"),
    "unknown config key": (_set("model_config", "widht", value=3),
                           r"field `model_config`: Unknown Transformer1dConfig key\(s\) "
                           r"\['widht'\]"),
    "missing weight": (lambda p: p["state_dict"].pop(W),
                       rf"field `state_dict` lacks '{W}' \(and 0 more\)"),
    "extra weight": (_set("state_dict", "model.extra", value=torch.zeros(2)),
                     r"field `state_dict` has 'model\.extra', which the model"),
    "wrong shape": (_set("state_dict", W, value=torch.zeros(3, 3)),
                    rf"field `state_dict`: '{W}' has shape \(3, 3\) and dtype torch\.float32; "
                    r"the model built from the file's config needs \(16, 1\)"),
    "wrong dtype": (_set("state_dict", W, value=torch.zeros(16, 1, dtype=torch.float64)),
                    r"has shape \(16, 1\) and dtype torch\.float64"),
    "NaN weights": (_set("state_dict", W, value=torch.full((16, 1), float("nan"))),
                    rf"'{W}' holds NaN or infinite values"),
    "not a state dict": (_set("state_dict", value=[1, 2]),
                         r"field `state_dict` must map parameter names to tensors; got list"),
    "bad normaliser": (_set("output_normalizer", value={"mean": torch.zeros(2)}),
                       r"field `output_normalizer` must be null or a normaliser state"),
    "bad dirichlet": (_set("dirichlet", value="yes"),
                      r"field `dirichlet` must be true or false; got 'yes'"),
}


@pytest.mark.parametrize("case", list(BEST_DAMAGE))
def test_a_tampered_best_checkpoint_is_refused_before_building(run, case):
    edit, match = BEST_DAMAGE[case]
    _edit_best(run / "best.pt", edit)
    t0 = time.perf_counter()
    with pytest.raises(RunDirectoryError, match=match):
        Surrogate.load(run, device="cpu")
    assert time.perf_counter() - t0 < 10  # nothing of the requested size was built


def _as_softmax(payload):
    """The same weights as a softmax-attention model (its head norms act on Q, K, not K, V)."""
    payload["model_config"]["attention"] = "softmax"
    payload["state_dict"] = {k.replace(".norms.v.", ".norms.q."): v
                             for k, v in payload["state_dict"].items()}


def test_activations_beyond_the_limit_at_the_recorded_resolution(run):
    _edit_best(run / "best.pt", _as_softmax)
    _edit_json(run / "run.json", {"resolution": 65536, "model_config.attention": "softmax"})
    with pytest.raises(RunDirectoryError, match=r"best\.pt, field `model_config` at resolution "
                                                r"65536 needs about \d+ GiB of activations per "
                                                r"sample; the limit is 32 GiB"):
        Surrogate.load(run, device="cpu")
    _edit_json(run / "run.json", {"resolution": 64})
    assert Surrogate.load(run, device="cpu").resolution == 64  # the same model at its grid


# -- the dataset path recorded in run.json ------------------------------------------------------


def _without_reference(run, path):
    _edit_json(run / "run.json", {"ood_reference": None, "data.path": str(path)})


def test_the_recorded_dataset_must_be_that_dataset_or_gone(run, burgers_file, tmp_path,
                                                           darcy_file):
    """run.json's data.path: the run's dataset (used for the OOD reference) or a file that no
    longer exists (a moved run); any other existing file is a tampered record, refused."""
    _without_reference(run, burgers_file)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Surrogate.load(run, device="cpu").ood_reference is not None
    _without_reference(run, tmp_path / "moved.nc")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Surrogate.load(run, device="cpu").ood_reference is None
    big = tmp_path / "big.bin"
    with big.open("wb") as fh:
        fh.truncate(2**33)  # 8 GiB, sparse: only its first bytes may be read
    fake = tmp_path / "fake.nc"
    fake.write_bytes(b"\x89HDF\r\n\x1a\n" + RANDOM)
    for target, why in ((big, "which is not a netCDF file"), ("/dev/zero", "is a device"),
                        (tmp_path, "is a directory"), (darcy_file, "a darcy dataset"),
                        (fake, r"fake\.nc.*cannot be read"), ("/etc/passwd", "not a netCDF")):
        _without_reference(run, target)
        t0 = time.perf_counter()
        with pytest.raises(RunDirectoryError, match=r"run\.json: field `data\.path` must name the "
                                                    rf"training data of this burgers run.*{why}"):
            Surrogate.load(run, device="cpu")
        assert time.perf_counter() - t0 < 10


def test_a_set_up_that_fails_leaves_no_new_run_directory(tmp_path, burgers_file):
    """A split the file cannot hold (40 samples asked of 24) is found after the run directory
    was locked: the error comes, and the directory this set-up created is gone again (an
    existing one is kept, with what it held)."""
    config = TrainConfig(task="burgers", epochs=1, batch_size=4, n_train=30, n_val=5, n_test=5,
                         resolution=64)
    fresh = tmp_path / "fresh"
    with pytest.raises(ValueError, match="30 \\+ 5 \\+ 5"):
        Trainer(fresh, burgers_file, model_config=MODEL, config=config, preset="burgers-galerkin")
    assert not fresh.exists()
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="30 \\+ 5 \\+ 5"):
        Trainer(kept, burgers_file, model_config=MODEL, config=config, preset="burgers-galerkin")
    assert [p.name for p in kept.iterdir()] == ["notes.txt"]
