"""The observations of the inverse-Darcy benchmark (Cao 2021, ex3), as the paper makes them.

The test samples of a run are read on an observation grid ``n`` strided from the dataset's
grid; the observations are the solutions plus the paper's noise
``epsilon (sigma(x) + 1e-5) N(0, 1)``, ``sigma`` the pointwise standard deviation of (up to
256) training solutions on that grid, and each sample's relative noise level (what the
inversion's discrepancy principle needs) follows from
:func:`solvers.darcy_inverse.paper_noise_to_relative`. ``benchmarks/bench_inverse.py`` and
``benchmarks/inverse_warm_variants.py`` compare answers on them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from solvers.darcy_inverse import add_noise, paper_noise_to_relative
from solvers.problems import get_problem

__all__ = ["grid_data", "paper_observations"]


def grid_data(ds: Any, train: NDArray[np.int64], test: NDArray[np.int64],
              n: int) -> dict[str, NDArray[np.float64]]:
    """The test solutions ``u`` and coefficients ``a`` of a Darcy dataset ``ds`` at positions
    ``test`` on the ``n x n`` grid strided from the dataset's, and up to 256 training solutions
    ``u_train`` there (for the noise's pointwise spread); each read once, as (sample, x, y)
    arrays whatever the order of the dataset's dims.

    Raises
    ------
    InputError
        ``n`` is not reachable from the dataset's grid by striding.
    """
    stride = get_problem("darcy").stride(int(ds.sizes["x"]), n)
    sel = {"x": slice(None, None, stride), "y": slice(None, None, stride)}

    def read(name: str, positions: NDArray[np.int64]) -> NDArray[np.float64]:
        # by dim name: a file opened with plain xarray stores (sample, y, x)
        field = ds[name].isel(sample=positions).isel(sel)
        return field.transpose("sample", "x", "y").values

    return {"u_train": read("u", train[:256]), "u": read("u", test), "a": read("a", test)}


def paper_observations(grid: dict[str, NDArray[np.float64]], epsilon: float,
                       seed: int) -> dict[str, NDArray[np.float64]]:
    """Clean (``clean``) and noisy (``noisy``) solutions, the true coefficient (``truth``) and
    per-sample relative noise levels (``levels``, shape (n_samples,)) of :func:`grid_data` at
    the paper's noise ``epsilon`` (draws from ``seed``; ``epsilon = 0``: exact data).

    >>> u = np.ones((3, 5, 5)); grid = {"u_train": u, "u": u[:2], "a": u[:2]}
    >>> obs = paper_observations(grid, 0.0, seed=0)
    >>> obs["levels"].tolist(), bool((obs["noisy"] == obs["clean"]).all())
    ([0.0, 0.0], True)
    """
    u_train, u = grid["u_train"], grid["u"]
    if epsilon <= 0:
        return {"clean": u, "noisy": u.copy(), "truth": grid["a"], "levels": np.zeros(len(u))}
    sigma = u_train.std(axis=0) + 1e-5
    noisy = add_noise(u, epsilon, rng=np.random.default_rng(seed), std_field=sigma)
    levels = paper_noise_to_relative(epsilon, u_train, observed=u)
    return {"clean": u, "noisy": noisy, "truth": grid["a"], "levels": np.atleast_1d(levels)}
