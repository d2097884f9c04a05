"""A model trained on an imported neuraloperator file pins only the edges on the boundary of
their points x_i = i/n (the first row and column), a node-grid model all four."""

from __future__ import annotations

import numpy as np
import torch

from neuralop_fem.data.peers import import_neuralop
from neuralop_fem.models import PRESETS
from neuralop_fem.training import TrainConfig, Trainer, load_trained, read_run_info

from .conftest import write_neuralop_darcy

CONFIG = TrainConfig(task="darcy", epochs=2, batch_size=2, n_train=6, n_val=1, n_test=1,
                     device="cpu")
MODEL = PRESETS["darcy-fno"].replace(modes=2, width=4, projection=8)


def _trained(tmp_path, data, name):
    Trainer(tmp_path / name, data, model_config=MODEL, config=CONFIG).fit()
    operator, _ = load_trained(tmp_path / name)
    return operator, read_run_info(tmp_path / name)


def _predict(operator, a):
    with torch.no_grad():
        return operator(torch.as_tensor(a, dtype=torch.float32)[..., None])[..., 0].numpy()


def test_imported_neuralop_model_leaves_their_last_row_and_column_free(tmp_path, rng):
    # Labels nonzero everywhere: nothing but the pinning makes a prediction exactly 0.
    x, _ = write_neuralop_darcy(tmp_path / "darcy_train_8.pt", rng, n_samples=8, n=8)
    data = import_neuralop(tmp_path / "darcy_train_8.pt", tmp_path / "d.nc", forcing=1.0)
    operator, info = _trained(tmp_path, data, "run")
    assert operator.dirichlet_edges == (True, False)
    assert info["normalizers"]["dirichlet_edges"] == [True, False]
    pred = _predict(operator, np.where(x, 1.0, 0.05))
    assert (pred[:, 0, :] == 0).all()
    assert (pred[:, :, 0] == 0).all()
    assert (pred[:, -1, 1:] != 0).all()
    assert (pred[:, 1:, -1] != 0).all()
    assert (pred[:, 1:, 1:] != 0).all()


def test_node_grid_model_still_pins_all_four_edges(tmp_path, darcy_file):
    operator, info = _trained(tmp_path, darcy_file, "run")
    assert operator.dirichlet_edges == (True, True)
    assert info["normalizers"]["dirichlet"] is True
    pred = _predict(operator, np.random.default_rng(0).uniform(3.0, 12.0, (2, 29, 29)))
    ring = np.ones((29, 29), dtype=bool)
    ring[1:-1, 1:-1] = False
    assert (pred[:, ring] == 0).all()
    assert (pred[:, ~ring] != 0).all()
