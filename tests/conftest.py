"""Shared fixtures: a seeded rng, strict floating-point errors, the `slow` and `cuda` markers,
one thread.

Tests run single-threaded (torch, OpenMP, BLAS; subprocesses inherit the variables): the arrays
are tiny, and on a shared 2-core machine thread spinning made the model tests 30x slower
(7 min instead of 13 s).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False, help="run tests marked slow")


#: Set to 1 to run the tests marked ``cuda`` on the CPU (the GPU campaign's rehearsal does).
CUDA_TESTS_ON_CPU = "NEURALOP_FEM_CUDA_TESTS_ON_CPU"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not torch.cuda.is_available() and os.environ.get(CUDA_TESTS_ON_CPU) != "1":
        skip_cuda = pytest.mark.skip(reason=f"needs CUDA (or {CUDA_TESTS_ON_CPU}=1 for the CPU)")
        for item in items:
            if item.get_closest_marker("cuda") is not None:
                item.add_marker(skip_cuda)
    if config.getoption("--runslow"):
        return
    skip_slow = pytest.mark.skip(reason="slow test: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _strict_floating_point():
    old = np.seterr(all="raise", under="ignore")
    yield
    np.seterr(**old)
