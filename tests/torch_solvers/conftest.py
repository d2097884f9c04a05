"""The device of the torch-solver tests: each test runs on the CPU and, marked ``cuda``, on a GPU.

Without CUDA the ``cuda`` runs are skipped, unless ``NEURALOP_FEM_CUDA_TESTS_ON_CPU=1`` (the GPU
campaign's rehearsal) runs them on the CPU.
"""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.cuda)])
def device(request: pytest.FixtureRequest) -> str:
    """``"cpu"``, or ``"cuda:0"`` (the CPU when the cuda tests were asked to run there)."""
    if request.param == "cuda" and torch.cuda.is_available():
        return "cuda:0"
    return "cpu"
