"""Small schema-conforming datasets shared by the data-layer tests."""

from __future__ import annotations

import numpy as np
import pytest

from neuralop_fem.data import schema


def make_burgers(rng: np.random.Generator, *, n_samples: int = 6, n: int = 32, times: int = 0):
    u0 = rng.standard_normal((n_samples, n))
    u = rng.standard_normal((n_samples, n))
    extra = {}
    if times:
        extra = {"u_t": rng.standard_normal((n_samples, times, n)),
                 "time": np.linspace(0, 1, times)}
    return schema.burgers_dataset(
        u0,
        u,
        seed=rng.integers(0, 2**63, n_samples, dtype=np.uint64),
        iterations=rng.integers(1, 100, n_samples),
        residual=rng.random(n_samples),
        solve_time=rng.random(n_samples),
        attrs={
            "dataset_seed": 7,
            "source": "neuralop_fem generate",
            "viscosity": 0.1 / (2 * np.pi),
            "final_time": 1.0,
            "grf_sigma": 25.0,
            "grf_tau": 5.0,
            "grf_alpha": 2.0,
            "solver": "BurgersSpectralSolver",
        },
        **extra,
    )


def make_darcy(rng: np.random.Generator, *, n_samples: int = 4, n: int = 17):
    a = np.where(rng.standard_normal((n_samples, n, n)) > 0, 12.0, 3.0)
    u = rng.standard_normal((n_samples, n, n))
    return schema.darcy_dataset(
        a,
        u,
        seed=np.arange(n_samples, dtype=np.uint64),
        iterations=np.ones(n_samples, dtype=np.int64),
        residual=rng.random(n_samples) * 1e-10,
        solve_time=rng.random(n_samples),
        attrs={
            "dataset_seed": 3,
            "source": "neuralop_fem generate",
            "forcing": 1.0,
            "contrast_high": 12.0,
            "contrast_low": 3.0,
            "solver": "DarcyFDSolver",
            "linear_solver": "direct",
            "tol": 1e-10,
        },
    )


@pytest.fixture
def burgers_ds(rng):
    return make_burgers(rng, times=3)


@pytest.fixture
def darcy_ds(rng):
    return make_darcy(rng)
