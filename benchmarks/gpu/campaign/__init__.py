"""The GPU campaign: what a GPU must show, measured in commands that fit a borrowed machine.

Each stage is one command that ends inside its wall-clock budget (default 8 minutes) and writes
``STAGE.json``, ``STAGE.md`` and ``STAGE.log`` (GPU, driver, torch, CUDA, the commands) and what
the next call needs into ``--out``: at most 8 files, each under 16 MiB, the limits of the device
machine (docs/training.md, "What has run on a GPU"):

- ``correctness`` (:mod:`.correctness`): the tests marked ``cuda`` (tests/gpu) on the GPU;
- ``throughput`` (:mod:`.throughput`): training it/s against the paper's RTX 3090, inference
  against the solver on all cores (trained Darcy weights from a ``darcy`` output given as
  ``--from``);
- ``darcy`` (:mod:`.darcy`): darcy-galerkin and darcy-inverse-galerkin (noise 0.01) for 100
  epochs of 1024 samples, resumed across calls (``--from`` the previous call's output);
- ``solvers`` (:mod:`.solvers`): the torch twins of the Burgers and Darcy solvers on the GPU
  against the numpy solvers on all cores (``benchmarks/bench_gpu_solvers.py``), in one call;
- ``inference`` (:mod:`.inference`): the zoo models' inference speed (``Surrogate.solve``
  against the bare forward pass, FLOPs, share of a matmul's rate) and each precision's
  accuracy cost, GPU and CPU (``benchmarks/bench_inference.py``), in one call;
- ``prepare`` (:mod:`.prepare`): install the wheels and generate the Darcy data only, the first
  of two calls on one warm machine when a ``darcy`` state and the wheels exceed one call's carry;
- ``wheels``: only install the wheels of ``--wheels`` into ``--out`` (a check of the folder;
  ``--python-version 3.12`` checks it for the device image from another interpreter);
- ``unpack``: extract the state parts and ``RUN.best.pt`` files of ``--from`` into ``--out``
  (the run directories, for ``neuralop-fem reproduce record``).

Data are generated on the machine from their seeds; packages the device image lacks are
installed offline from ``--wheels`` (:mod:`.machine`; ``benchmarks/gpu/fetch_wheels.sh``
downloads them). :mod:`.outputs` writes the results and carries the state between calls;
:mod:`.runner` is the command line, run from the repository root as
``python -m benchmarks.gpu.campaign`` (:mod:`.__main__`). Importing this package imports only
the standard library and :mod:`neuralop_fem.environment` (the stages import torch and the
solvers when they run).
"""

from __future__ import annotations

from .runner import main

__all__ = ["main"]
