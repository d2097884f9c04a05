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

from neuralop_fem.data import generate  # noqa: E402

torch.set_num_threads(1)

#: A plugin module, not tests: importing it registers its problem, which only
#: tests/test_third_problem.py wants (its fixture imports it and unregisters it after).
collect_ignore = ["heat_problem.py"]


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


@pytest.fixture(scope="session")
def burgers_file(tmp_path_factory):
    """24 Burgers samples at n = 128 (spectral solver), dataset seed 1 (shared by the training
    and CUDA tests)."""
    path = tmp_path_factory.mktemp("data") / "burgers.nc"
    return generate("burgers", n_samples=24, resolution=128, seed=1, out=path, workers=0,
                    progress=False)


@pytest.fixture(scope="session")
def darcy_file(tmp_path_factory):
    """14 Darcy samples on the 29 x 29 node grid (FD), dataset seed 1."""
    path = tmp_path_factory.mktemp("data") / "darcy.nc"
    return generate("darcy", n_samples=14, resolution=29, seed=1, out=path, workers=0,
                    progress=False)
