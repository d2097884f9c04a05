"""
Train a tiny surrogate and compare it with the solver
=====================================================

A deliberately small Fourier neural operator (about 19 thousand parameters, a few epochs) trained
on 28 Darcy samples with a cosine schedule and linear warm-up, then compared with the
finite-difference solver on the held-out test samples. The numbers show the workflow, not what
the model can reach (see the training guide for the paper's settings).
"""

import csv
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt

from neuralop_fem import Surrogate, compare
from neuralop_fem.data import generate, load_dataset
from neuralop_fem.models import PRESETS
from neuralop_fem.training import TrainConfig, Trainer
from solvers import DarcyFDSolver

out = Path(tempfile.mkdtemp())
data = generate("darcy", n_samples=28, resolution=29, seed=7, out=out / "darcy.nc", workers=0,
                progress=False)
model = PRESETS["darcy-fno"].replace(width=8, modes=6, num_layers=2, projection=16)
config = TrainConfig(task="darcy", epochs=6, batch_size=4, n_train=20, n_val=4, n_test=4,
                     gamma=0.5, device="cpu", scheduler="cosine", warmup_epochs=1)
with Trainer(out / "run", data, model_config=model, config=config, preset="darcy-fno") as t:
    result = t.fit()
print({k: round(v, 4) if isinstance(v, float) else v for k, v in result.items()})

# %%
# The learning rate and losses of every epoch, from the run's ``metrics.csv``.
with (out / "run" / "metrics.csv").open() as fh:
    rows = list(csv.DictReader(fh))
epochs = [int(r["epoch"]) for r in rows]
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8, 3))
ax1.plot(epochs, [float(r["train_loss"]) for r in rows], "o-", label="training loss")
ax1.plot(epochs, [float(r["val_rel_l2"]) for r in rows], "s-", label="validation rel. L2")
ax1.set_xlabel("epoch")
ax1.legend()
ax2.plot(epochs, [float(r["lr"]) for r in rows], "o-")
ax2.set_xlabel("epoch")
ax2.set_ylabel("learning rate (last step)")
fig.tight_layout()
plt.show()

# %%
# The trained model behind the solver contract, compared with the classical solver.
surrogate = Surrogate.load(out / "run")
test = load_dataset(data)["a"].isel(sample=slice(24, 28)).load()
report = compare(DarcyFDSolver(), surrogate, test)
print(report)
