"""Darcy-galerkin training speed with the data read per sample and kept on the device.

A short check of ``TrainConfig.data_on_device`` on a GPU, small enough for the last minutes of
a borrowed machine: 140 Darcy samples generated at 421 (seed 0), darcy-galerkin at 141, batch 4,
32 steps per epoch, float32, the campaign's ``train_rate`` (one warm-up epoch, then the median
of two; validation and checkpoints included), alternating ``off`` and ``auto`` twice.

    python3 -m benchmarks.gpu.data_path cuda [--out FILE.json]
    python3 -m benchmarks.gpu.data_path cpu      # a rehearsal with a tiny model at 15

On the device machine install the wheels first (docs/training.md, the campaign).
"""

import argparse
import json
import time
from pathlib import Path

import torch

from benchmarks.gpu.campaign.throughput import train_rate
from neuralop_fem import generate


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("device", help="cuda, or cpu for a rehearsal")
    p.add_argument("--out", type=Path, help="also write the rows as JSON")
    p.add_argument("--work", type=Path, default=Path("/tmp/neuralop_fem_data_path"))
    cli = p.parse_args()
    rehearse = cli.device == "cpu"
    n_full, n, batch = (29, 15, 2) if rehearse else (421, 141, 4)
    t = time.time()
    data = cli.work / f"darcy_n{n_full}_N140.nc"
    if not data.is_file():
        data.parent.mkdir(parents=True, exist_ok=True)
        generate("darcy", n_samples=140, resolution=n_full, seed=0, out=data, workers=16,
                 progress=False)
    print(f"data ready in {time.time() - t:.1f} s; torch {torch.__version__}", flush=True)
    args = argparse.Namespace(rehearse=rehearse, device=cli.device, work=cli.work / "runs")
    case = ("darcy-galerkin", n, batch, 32, 19.4, "Table 6")
    rows = []
    for where in ("off", "auto", "off", "auto"):
        r = train_rate(case, "none", data, args, data_on_device=where)
        rows.append(r)
        print(f"{where:5s} {r['data_path']:14s} {r['it_per_s']:6.1f} it/s epochs "
              f"{r['epoch_times_s']} resident-step {r.get('steps_per_s_read_each_step')}",
              flush=True)
    if cli.out is not None:
        cli.out.write_text(json.dumps({"torch": torch.__version__, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
