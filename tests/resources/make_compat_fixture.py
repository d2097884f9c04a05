"""Write the backward-compatibility fixture with an earlier release.

Run from a checkout of that release (here 3ded0bf): ``git worktree add /tmp/old 3ded0bf &&
cd /tmp/old && python /path/to/make_compat_fixture.py OUT_DIR``; last.pt is then deleted (the
fixture keeps what loading needs: run.json, best.pt, metrics.csv, the loss curve).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np


def main(out: Path) -> None:
    from neuralop_fem import Surrogate
    from neuralop_fem.data import generate, load_dataset
    from neuralop_fem.models import PRESETS
    from neuralop_fem.training import TrainConfig, Trainer

    out.mkdir(parents=True, exist_ok=True)
    generate("burgers", n_samples=6, resolution=64, seed=7, out=out / "burgers_n64.nc",
             workers=0, progress=False)
    d = generate("darcy", n_samples=10, resolution=17, seed=7, out=out / "darcy_n17.nc",
                 workers=0, progress=False)
    model = PRESETS["darcy-fno"].replace(width=4, modes=3, num_layers=1, projection=8)
    cfg = TrainConfig(task="darcy", resolution=17, epochs=2, batch_size=2, n_train=6, n_val=2,
                      n_test=2, gamma=0.5, seed=1)
    with Trainer(out / "run_darcy_fno", d, model_config=model, config=cfg,
                 preset="darcy-fno") as trainer:
        trainer.fit()
    sur = Surrogate.load(out / "run_darcy_fno", device="cpu")
    a = load_dataset(d)["a"].values[:3]
    np.save(out / "expected_prediction.npy", sur.solve(a))
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    (out / "README.md").write_text(
        "# Backward-compatibility fixture\n\n"
        f"Written by neuralop_fem at commit {commit} (the release before the layout change) "
        "with `make_compat_fixture.py`: two small datasets (`generate`), one trained run "
        "directory (darcy-fno, 2 epochs) and the predictions of its selected model on the "
        "first 3 Darcy samples. tests/test_compatibility.py checks that the current code "
        "still reads all of them and reproduces the predictions: a change of a file format "
        "must be a decision (with a migration), never an accident.\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
