"""A few samples of a seeded dataset, by index, in memory (:func:`generate_samples`).

Sample ``k`` of a dataset depends on (dataset seed, ``k``) alone
(:func:`solvers.grf.sample_seeds`), so any subset of a dataset that :func:`generate` would
write can be drawn and solved without the others: the test samples of a trained model, say,
to check its recorded errors without regenerating the whole file.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import xarray as xr
from numpy.typing import ArrayLike

from solvers.grf import sample_seeds
from solvers.problems import get_problem

from ..._version import __version__
from ...errors import ConfigError
from ...problems import get_kit
from ..float_paths import float_paths_json
from .api import _SOURCE, BENCHMARK_RESOLUTION, MAX_SEED, _int_arg, _settings
from .assemble import _file_attrs
from .config import DataConfig, config_class

__all__ = ["generate_samples"]


def _check_indices(indices: ArrayLike) -> np.ndarray:
    idx = np.asarray(indices)
    ok = idx.ndim == 1 and idx.size > 0 and idx.dtype.kind in "iu" and bool((idx >= 0).all())
    if not ok or np.unique(idx).size != idx.size:
        msg = ("`indices` must be a non-empty 1-D sequence of distinct sample indices >= 0; "
               f"got {np.asarray(indices).tolist()!r}.")
        raise ConfigError(msg)
    return idx.astype(np.int64)


def generate_samples(
    problem: str,
    indices: ArrayLike,
    *,
    resolution: int | None = None,
    seed: int = 0,
    config: DataConfig | None = None,
    dtype: str = "float64",
) -> xr.Dataset:
    """The samples ``indices`` of the dataset :func:`generate` writes with these settings.

    Parameters
    ----------
    problem : {"burgers", "darcy"}
    indices : sequence of int
        Global sample indices (distinct, >= 0); they become the ``sample`` coordinate.
    resolution, seed, config, dtype
        As in :func:`generate` (``dtype``: the storage type, ``"float64"`` or ``"float32"``;
        the fields are rounded to it as the file stores them).

    Returns
    -------
    xarray.Dataset
        Validated against the schema, with the generation record of the file (``n_samples``
        in it: ``max(indices) + 1``). The samples equal the file's to round-off: they are
        drawn from the same per-sample seeds, and solved in one batch here where the file
        solved them in chunks (batched solves agree with other batchings to round-off, about
        1e-15 relative).

    Examples
    --------
    >>> ds = generate_samples("burgers", [5, 2], resolution=64, seed=3)
    >>> ds["sample"].values.tolist(), ds["u"].shape
    ([5, 2], (2, 64))
    """
    cls = config_class(problem)
    config = cls() if config is None else config
    if type(config) is not cls:
        msg = f"`config` must be a {cls.__name__} for {problem!r}; got {type(config).__name__}."
        raise ConfigError(msg)
    if dtype not in ("float64", "float32"):
        msg = f"`dtype` must be 'float64' or 'float32'; got {dtype!r}."
        raise ConfigError(msg)
    resolution = config.check_resolution(
        BENCHMARK_RESOLUTION[problem] if resolution is None else resolution)
    seed = _int_arg(seed, "seed", minimum=0, maximum=MAX_SEED)
    idx = _check_indices(indices)
    seeds = np.asarray(sample_seeds(seed, idx), dtype=np.uint64)
    arrays = config.solve_chunk(resolution, seeds)
    solver = config.make_solver()
    manifest: dict[str, Any] = {
        "settings": _settings(problem, config, resolution=resolution, seed=seed, dtype=dtype),
        "chunk_size": idx.size, "stop": int(idx.max()) + 1,
        "solver_class": type(solver).__name__, "solver_config": solver.config,
        "neuralop_fem_version": __version__,
    }
    attrs = _file_attrs(manifest, _SOURCE, [json.loads(float_paths_json())])  # type: ignore[arg-type]
    spec = get_problem(problem)
    extra = {}
    if "u_t" in arrays:
        extra = {"u_t": arrays["u_t"].astype(dtype),
                 "time": np.asarray(config.output_times, dtype=np.float64)}
    return get_kit(problem).builder()(
        arrays[spec.input_name].astype(dtype), arrays[spec.output_name].astype(dtype), sample=idx,
        seed=seeds, iterations=arrays["iterations"], residual=arrays["residual"],
        solve_time=arrays["solve_time"], attrs=attrs, **extra)
