"""The device of the tests marked ``cuda``, and tiny data and models for them.

The tests run on CUDA device 0. Without CUDA they are skipped, unless
``NEURALOP_FEM_CUDA_TESTS_ON_CPU=1`` (set by ``python -m benchmarks.gpu.campaign correctness
--rehearse``) runs them on the CPU, so that their code cannot rot before a GPU runs them.
"""

from __future__ import annotations

import pytest
import torch

#: Tiny model overrides: every test here trains in seconds on one CPU thread.
TINY_BURGERS = {"d_model": 16, "num_layers": 2, "d_ff": 32, "freq_dim": 8, "modes": 4,
                "decoder_ff": 8}
TINY_DARCY = {"d_model": 12, "num_layers": 1, "d_ff": 16, "freq_dim": 8, "modes": 4,
              "decoder_ff": 8}


@pytest.fixture(scope="session")
def device() -> torch.device:
    """CUDA device 0; the CPU only when the tests were asked to run there."""
    return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
