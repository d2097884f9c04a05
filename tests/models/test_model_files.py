"""Model files as untrusted input: size limits before building, damaged and hostile files."""

from __future__ import annotations

import os
import time
import zipfile

import numpy as np
import pytest
import torch

from neuralop_fem.models import PRESETS, build_model, load_model, save_model
from neuralop_fem.models.size import (
    MAX_ACTIVATION_BYTES,
    MAX_PARAMETERS,
    activation_bytes,
    check_model_size,
    count_parameters,
    parameter_lower_bound,
)
from solvers.errors import InputError

BENCHMARK_N = {"burgers": 8192, "darcy": 421}


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_presets_are_far_inside_the_limits(name):
    config = PRESETS[name]
    real = sum(p.numel() for p in build_model(name).parameters())
    assert count_parameters(config) == real  # the meta-device count is exact
    assert parameter_lower_bound(config) <= real
    n = BENCHMARK_N[name.split("-")[0]]
    assert check_model_size(config, source="preset", resolution=n) == real
    assert real < MAX_PARAMETERS / 50
    assert activation_bytes(config, n) < MAX_ACTIVATION_BYTES / 3


@pytest.mark.parametrize(
    ("changes", "resolution", "match"),
    [
        ({"d_model": 65536}, None,
         r"describes a model with at least [\d,]+ parameters; the limit is 200,000,000"),
        ({"d_model": 3300, "d_ff": 3300, "num_layers": 1}, None,
         r"describes a model with 2\d\d,\d{3},\d{3} parameters; the limit"),
        ({"num_layers": 300}, None, r"describes a model with 302 layers; the limit is 256"),
        ({}, 65536, r"at resolution 65536 needs about [\d,]+ GiB of activations per sample"),
    ],
)
def test_configs_beyond_the_limits_are_refused_before_building(changes, resolution, match):
    config = PRESETS["darcy-galerkin"].replace(**changes)
    t0 = time.perf_counter()
    with pytest.raises(InputError, match=rf"model\.pt, field `config` {match}"):
        check_model_size(config, source="model.pt, field `config`", resolution=resolution,
                         error=InputError)
    assert time.perf_counter() - t0 < 20  # meta device: nothing is allocated


def _saved(tmp_path):
    torch.manual_seed(0)
    model = build_model("burgers-fno", width=4, num_layers=2, modes=4, projection=8)
    path = tmp_path / "model.pt"
    save_model(model, path)
    return path


def _edit(path, edit):
    payload = torch.load(path, weights_only=True)
    edit(payload)
    torch.save(payload, path)


class _Code:
    def __reduce__(self):
        return (print, ("executed",))


DAMAGE = {
    "truncated": (lambda p: p.write_bytes(p.read_bytes()[:200]),
                  r"model\.pt: cannot be read as a model file written by save_model"),
    "empty": (lambda p: p.write_bytes(b""), r"model\.pt: is empty"),
    "random bytes": (lambda p: p.write_bytes(np.random.default_rng(0).bytes(999)),
                     r"model\.pt: cannot be read as"),
    "a directory": (lambda p: (p.unlink(), p.mkdir()), r"model\.pt: is a directory"),
    "missing": (lambda p: p.unlink(), r"model\.pt: no such file"),
    "pickled code": (lambda p: torch.save({"x": _Code()}, p), r"\(UnpicklingError\)"),
    "huge config": (lambda p: _edit(p, lambda d: d["config"].update(width=100_000)),
                    r"model\.pt, field `config` describes a model with at least"),
    "bad config": (lambda p: _edit(p, lambda d: d["config"].update(modes=-1)),
                   r"model\.pt, field `config`: `modes` must be an integer >= 1; got -1"),
    "family": (lambda p: _edit(p, lambda d: d.update(family=3)),
               r"model\.pt, field `family` must be one of"),
    "weights": (lambda p: _edit(p, lambda d: d["state_dict"].update(
        {"lift.weight": torch.ones(1)})),
                r"field `state_dict`: 'lift\.weight' has shape \(1,\)"),
}


def _deflate(path):
    """The same archive with compressed entries: torch.load would inflate them."""
    with zipfile.ZipFile(path) as src:
        entries = [(i.filename, src.read(i.filename)) for i in src.infolist()]
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as dst:
        for name, data in entries:
            dst.writestr(name, data)


DAMAGE["compressed"] = (_deflate, r"model\.pt: cannot be read as .*: it holds compressed entries, "
                                  r"which torch\.save never writes")
DAMAGE["legacy format"] = (
    lambda p: torch.save(torch.load(p, weights_only=True), p, _use_new_zipfile_serialization=False),
    r"model\.pt: cannot be read as .*\(BadZipFile\)")


@pytest.mark.parametrize("case", list(DAMAGE))
def test_a_damaged_model_file_is_one_clear_error(tmp_path, case):
    damage, match = DAMAGE[case]
    path = _saved(tmp_path)
    damage(path)
    with pytest.raises(InputError, match=match) as info:
        load_model(path)
    assert "weights_only" not in str(info.value)


def test_save_model_replaces_a_link_instead_of_writing_through(tmp_path):
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me")
    link = tmp_path / "model.pt"
    link.symlink_to(precious)
    save_model(build_model("burgers-fno", width=4, num_layers=1, modes=4, projection=8), link)
    assert precious.read_text() == "keep me"
    assert not os.path.islink(link)
    assert load_model(link).config.width == 4
