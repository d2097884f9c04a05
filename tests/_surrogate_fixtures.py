"""Tiny run directories (the trainer's layout) for the surrogate / compare / warm-start tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from neuralop_fem.data import generate, load_dataset
from neuralop_fem.data.normalizer import UnitGaussianNormalizer
from neuralop_fem.data.provenance import dataset_provenance as provenance
from neuralop_fem.models import PRESETS, NormalizedOperator, build_model
from neuralop_fem.runs import write_json
from neuralop_fem.training import TrainConfig, Trainer
from neuralop_fem.training.checkpoint import operator_payload


def tiny_burgers_run(data: Path, run: Path, *, epochs: int = 1,
                     stop_after: int | None = None) -> Path:
    """A burgers-galerkin narrowed to d_model 8, one layer, trained by the trainer at n = 32 on
    the first 16 samples of ``data`` (8 training, 4 validation, 4 test); ``stop_after`` epochs
    in this call (None: all ``epochs``)."""
    model = PRESETS["burgers-galerkin"].replace(d_model=8, num_layers=1, d_ff=8, freq_dim=4,
                                                modes=2, decoder_ff=4)
    config = TrainConfig(task="burgers", epochs=epochs, batch_size=4, eval_batch_size=4,
                         n_train=8, n_val=4, n_test=4, device="cpu", resolution=32)
    with Trainer(run, data, model_config=model, config=config, preset="burgers-galerkin") as t:
        t.fit(max_epochs_this_call=stop_after)
    return run


def write_run_dir(run_dir: Path, operator: NormalizedOperator, *, data_path: Path, task: str,
                  resolution: int, n_train: int) -> Path:
    """best.pt + run.json as written by the trainer (only the keys Surrogate reads)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    torch.save(operator_payload(operator), run_dir / "best.pt")
    ds = load_dataset(data_path)
    info = {
        "format": "neuralop_fem.training.run/1", "status": "finished", "task": task,
        "data": provenance(ds, data_path), "resolution": resolution,
        "splits": {"train": list(range(n_train)), "val": [], "test": []},
        "best_val_rel_l2": 0.5, "test_rel_l2_best": 0.6,
    }
    write_json(info, run_dir / "run.json")
    return run_dir


def burgers_run(tmp: Path, *, n: int = 64, n_samples: int = 12) -> Path:
    data = generate("burgers", n_samples=n_samples, resolution=n, seed=3, out=tmp / "b.nc",
                    workers=0)
    torch.manual_seed(0)
    model = build_model("burgers-galerkin", d_model=16, num_layers=1, d_ff=16, modes=4,
                        freq_dim=8, decoder_ff=8)
    return write_run_dir(tmp / "run_b", NormalizedOperator(model), data_path=data, task="burgers",
                         resolution=n, n_train=n_samples)


def darcy_run(tmp: Path, *, n: int = 17, n_samples: int = 8) -> Path:
    data = generate("darcy", n_samples=n_samples, resolution=n, seed=3, out=tmp / "d.nc", workers=0)
    ds = load_dataset(data)
    a = torch.from_numpy(np.asarray(ds["a"].values)[..., None])
    u = torch.from_numpy(np.asarray(ds["u"].values)[..., None])
    torch.manual_seed(0)
    model = build_model("darcy-fno", width=4, modes=3, num_layers=1, projection=8)
    op = NormalizedOperator(model, input_normalizer=UnitGaussianNormalizer.fit(a.float()),
                            output_normalizer=UnitGaussianNormalizer.fit(u.float()), dirichlet=True)
    return write_run_dir(tmp / "run_d", op, data_path=data, task="darcy", resolution=n,
                         n_train=n_samples)


def inverse_run(tmp: Path, *, n: int = 29, n_samples: int = 20, epochs: int = 2,
                splits: tuple[int, int, int] = (12, 4, 4)) -> tuple[Path, Path, TrainConfig]:
    """A darcy-inverse-galerkin run (d_model 12, one layer, noise 0.01) trained for ``epochs``
    on Darcy samples at ``n`` (dataset seed 5) split ``(train, val, test)``: the run
    directory, the data file and the training config."""
    data = generate("darcy", n_samples=n_samples, resolution=n, seed=5, out=tmp / "d.nc",
                    workers=0, progress=False)
    model = PRESETS["darcy-inverse-galerkin"].replace(d_model=12, num_layers=1, d_ff=16)
    n_train, n_val, n_test = splits
    config = TrainConfig(task="darcy-inverse", resolution=n, epochs=epochs, batch_size=4,
                         gamma=0.0, noise=0.01, n_train=n_train, n_val=n_val, n_test=n_test,
                         seed=3)
    with Trainer(tmp / "run", data, model_config=model, config=config,
                 preset="darcy-inverse-galerkin") as trainer:
        trainer.fit()
    return tmp / "run", data, config
