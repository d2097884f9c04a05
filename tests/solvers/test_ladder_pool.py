"""All-core timing of ladder rungs: the pool holds the inputs and times every rung."""

from __future__ import annotations

import numpy as np
import pytest

from solvers import DarcyFDSolver, NeumannGRF, threshold
from solvers.ladder import Rung, pool_times
from solvers.problems import get_problem


@pytest.mark.slow  # two spawned processes import the solvers: 3-8 s
def test_pool_times_every_rung_with_inputs_sent_once():
    a = threshold(NeumannGRF(29).sample(5, rng=np.random.default_rng(0)))
    rungs = [Rung(solver=DarcyFDSolver(linear_solver="banded"), resolution=15, label="15"),
             Rung(solver=DarcyFDSolver(linear_solver="dst-cg", tol=1e-8), label="29")]
    times = pool_times(rungs, a, 29, problem=get_problem("darcy"), workers=2)
    assert times.shape == (2,)
    assert np.isfinite(times).all()
    assert (times > 0).all()
