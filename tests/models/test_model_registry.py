"""A new architecture is one module and one registration: ``tests/toy_model.py`` registered,
trained for two epochs through the command line, saved, loaded and used like a built-in."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import xarray as xr

from neuralop_fem import Surrogate
from neuralop_fem.cli import main
from neuralop_fem.errors import InputError
from neuralop_fem.models import (
    MODEL_FAMILIES,
    PRESETS,
    FNO1dConfig,
    build_model,
    register_model,
    unregister_model,
)
from tests import toy_model


@pytest.fixture(scope="module", autouse=True)
def toy():
    """Registered for this module's tests only (the others see the built-in families)."""
    toy_model.register()
    yield toy_model
    unregister_model("toy1d")
    assert "toy1d" not in MODEL_FAMILIES
    assert "burgers-toy" not in PRESETS


def test_a_registered_model_trains_through_the_command_line_and_loads(tmp_path, burgers_file,
                                                                       capsys):
    run = tmp_path / "run"
    assert main(["train", "--data", str(burgers_file), "--preset", "burgers-toy", "--out",
                 str(run), "--epochs", "2", "--n-train", "8", "--n-val", "2", "--n-test", "2",
                 "--resolution", "64", "--threads", "1", "--amp", "none"]) == 0, \
        capsys.readouterr().err
    info = json.loads((run / "run.json").read_text())
    assert info["status"] == "finished"
    assert info["epochs_completed"] == 2
    assert info["model_family"] == "toy1d"
    assert info["model_config"]["width"] == 8
    sur = Surrogate.load(run)
    assert isinstance(sur.operator.model, toy_model.ToyModel)
    with xr.open_dataset(burgers_file) as ds:  # a test sample, on the training grid
        u0 = ds["u0"].values[-1:, :: ds.sizes["x"] // 64]
    # the surrogate is the registered model behind the normalisers: its own forward agrees
    expected = sur.operator(torch.as_tensor(u0, dtype=torch.float32)[..., None])[..., 0]
    np.testing.assert_allclose(sur.solve(u0), expected.detach().numpy(), rtol=1e-6, atol=1e-7)
    assert build_model("burgers-toy", width=4).config.width == 4


def test_registration_refuses_what_cannot_work():
    with pytest.raises(InputError, match="`config_cls` must be a ModelConfigBase dataclass"):
        register_model(dict, toy_model.ToyModel)
    with pytest.raises(InputError, match="`model_cls` must be a torch.nn.Module class"):
        register_model(toy_model.ToyConfig, dict)
    other = type("Other", (FNO1dConfig,), {})  # family 'fno1d', another class
    with pytest.raises(InputError, match="model family 'fno1d' is registered already"):
        register_model(other, toy_model.ToyModel)
    with pytest.raises(InputError, match="preset 'burgers-toy2' must be a ToyConfig"):
        register_model(toy_model.ToyConfig, toy_model.ToyModel,
                       presets={"burgers-toy2": FNO1dConfig()})
    with pytest.raises(InputError, match="preset 'burgers-fno' is taken by another model"):
        register_model(toy_model.ToyConfig, toy_model.ToyModel,
                       presets={"burgers-fno": toy_model.ToyConfig(width=3)})
    unregister_model("fno1d")  # a built-in family stays
    assert "fno1d" in MODEL_FAMILIES
