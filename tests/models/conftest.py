"""Model tests run torch single-threaded: the tensors are tiny, and with OpenMP threads on a
shared 2-core machine the barrier spinning made the suite 20x slower (7 min vs 20 s)."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(autouse=True)
def _single_thread_torch():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)
