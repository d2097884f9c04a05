"""From a dataset file and a :class:`TrainConfig` to splits, torch datasets and normalisers.

Splits (Cao 2021 with a validation split added; docs/training.md): for a dataset of N samples
the test set is the last ``n_test`` samples, validation the ``n_val`` samples just before them, and
training the first ``n_train``. Validation is carved from samples the reference used for
training, never from the test set. Normalisers (Darcy forward and inverse) are fitted on the
training split only.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import xarray as xr
from numpy.typing import NDArray
from torch import nn

from solvers.problems import Problem, get_problem

from ..data import load_dataset
from ..data.grids import dataset_grid, describe_grid, dirichlet_edges
from ..data.normalizer import UnitGaussianNormalizer
from ..data.ood import MAX_REFERENCE_SAMPLES, reference_from_inputs
from ..data.provenance import dataset_provenance
from ..errors import ConfigError, DatasetError
from ..problems import get_kit
from ..runs.train_config import TrainConfig

if TYPE_CHECKING:  # pragma: no cover
    from ..data.normalizer import UnitGaussianNormalizer

__all__ = ["TrainingData", "build_training_data", "inverse_target_grid", "make_dataset",
           "split_indices"]


def inverse_target_grid(model: Any, resolution: int, problem: Problem, n_full: int) -> int:
    """The coarse grid ``n_c`` an inverse model predicts the coefficient on for observations at
    ``resolution`` (``n_f``) of ``problem``; the true coefficient is pooled to it by striding,
    so ``(n_f - 1) % (n_c - 1)`` must be 0 (141 -> 36, 29 -> 8).

    Raises
    ------
    ConfigError
        When it is not; the message lists the resolutions reachable from the file's ``n_full``
        grid that do give a poolable target grid.
    """
    def pooled(n: int) -> int | None:  # the model's coarse grid at n, if a strided subgrid
        coarse = int(model.output_size(n))
        return coarse if coarse in problem.reachable(n) else None

    coarse = pooled(resolution)
    if coarse is not None:
        return coarse
    smallest = getattr(model, "min_resolution", 2)
    fits = [n for n in problem.reachable(n_full) if n >= smallest and pooled(n)]
    choose = (f"resolutions reachable from the file's {n_full} that do: {fits}" if fits else
              f"none of the resolutions reachable from the file's {n_full} does")
    msg = (f"`resolution` must give an inverse-problem target grid reachable by pooling: the "
           f"model maps n_f={resolution} to n_c={int(model.output_size(resolution))}, and "
           f"(n_f - 1) % (n_c - 1) must be 0 (e.g. 141 -> 36, 29 -> 8); {choose}; got "
           f"{resolution}.")
    raise ConfigError(msg)


def split_indices(n_samples: int, config: TrainConfig) -> dict[str, np.ndarray]:
    """Train / validation / test sample positions for a dataset of ``n_samples``.

    Returns
    -------
    dict
        ``{"train", "val", "test"}`` -> int64 arrays of positions.

    Raises
    ------
    ConfigError
        If the dataset is too small for the requested split (the message names the numbers)
        or explicit indices are out of range.
    """
    if config.train_indices is not None:
        out = {
            "train": np.asarray(config.train_indices, dtype=np.int64),
            "val": np.asarray(config.val_indices, dtype=np.int64),
            "test": np.asarray(config.test_indices, dtype=np.int64),
        }
        top = max(int(v.max()) for v in out.values())
        if top >= n_samples:
            msg = f"split indices must be < the dataset's {n_samples} samples; got index {top}."
            raise ConfigError(msg)
        return out
    need = config.n_train + config.n_val + config.n_test
    if need > n_samples:
        msg = (
            f"the dataset must have at least n_train + n_val + n_test = {config.n_train} + "
            f"{config.n_val} + {config.n_test} = {need} samples; got {n_samples}. Generate more "
            "(`neuralop-fem generate ... --append M`) or lower --n-train/--n-val/--n-test "
            "(Python: neuralop_fem.training.fit_to_data(config, data) fits them to the file)."
        )
        raise ConfigError(msg)
    test_start = n_samples - config.n_test
    val_start = test_start - config.n_val
    return {
        "train": np.arange(config.n_train, dtype=np.int64),
        "val": np.arange(val_start, test_start, dtype=np.int64),
        "test": np.arange(test_start, n_samples, dtype=np.int64),
    }


def open_data(data: xr.Dataset | str | os.PathLike[str]) -> xr.Dataset:
    """Load (lazily) a dataset file, or pass an ``xr.Dataset`` through."""
    if isinstance(data, xr.Dataset):
        return data

    return load_dataset(data)


def make_dataset(
    data: xr.Dataset,
    config: TrainConfig,
    *,
    indices: Sequence[int] | NDArray[np.integer] | slice | None,
    resolution: int,
    coarse: int | None = None,
    input_normalizer: UnitGaussianNormalizer | None = None,
    noisy: bool = True,
    in_memory: bool = True,
) -> torch.utils.data.Dataset:
    """The torch dataset of ``config.task`` at ``resolution`` for the samples ``indices``.

    For the inverse task ``coarse`` is the target grid, and the input gets the fixed noise of
    level ``config.noise`` (seeded by ``config.seed`` and the sample index) when ``noisy``.
    """
    cls = get_kit(config.task).dataset_class()
    if not get_problem(config.task).inverse:
        return cls(data, resolution=resolution, indices=indices, in_memory=in_memory)
    noise = config.noise if noisy else 0.0
    return cls(
        data, n_fine=resolution, n_coarse=int(coarse), noise=noise,
        noise_seed=config.seed if noise > 0 else None,
        input_normalizer=input_normalizer if noise > 0 else None,
        indices=indices, in_memory=in_memory,
    )


@dataclass
class TrainingData:
    """Datasets, normalisers and provenance of one training run."""

    train: torch.utils.data.Dataset
    val: torch.utils.data.Dataset
    test: torch.utils.data.Dataset
    splits: dict[str, np.ndarray]
    resolution: int
    coarse_resolution: int | None
    input_normalizer: nn.Module | None
    output_normalizer: nn.Module | None
    #: Pinned edges (first, last): :func:`~neuralop_fem.data.grids.dirichlet_edges`.
    dirichlet: tuple[bool, bool]
    provenance: dict[str, Any]
    ood_reference: dict[str, Any] | None = None
    #: The data's grid convention (:func:`~neuralop_fem.data.grids.dataset_grid`).
    grid: str = "nodes"


def check_problem(data: xr.Dataset, config: TrainConfig, *, preset: str | None = None,
                  source: str | os.PathLike[str] | None = None) -> None:
    """Refuse a dataset whose ``problem`` does not fit the task.

    Parameters
    ----------
    data : xarray.Dataset
    config : TrainConfig
    preset : str, optional
        Named in the message (else the task).
    source : path, optional
        The file ``data`` came from, named in the message (default: the file it was opened
        from, when known).

    Raises
    ------
    ConfigError
        A dataset of another problem; the message names the argument (``data``, on the
        command line ``--data``), the problem it must be, the problem it is and the file.
    """
    problem = data.attrs.get("problem")
    want = get_problem(config.task).data_problem
    if problem != want:
        who = f"preset {preset!r}" if preset else f"task {config.task!r}"
        got = f"a {problem} dataset" if problem else "a dataset that names no problem"
        source = source if source is not None else data.encoding.get("source")
        where = f" ({os.fspath(source)})" if source is not None else ""
        msg = f"`data` must be a {want} dataset for {who}; got {got}{where}."
        raise ConfigError(msg)


def check_model_fits(model: nn.Module, resolution: int) -> None:
    """Refuse a training grid below the model's smallest (before any epoch starts).

    Raises
    ------
    ConfigError
        Naming the model's smallest grid and the fix: for Fourier modes too many for the
        grid, the largest ``modes`` that fits (``--set modes=K``).
    """
    smallest = int(getattr(model, "min_resolution", 1))
    if resolution >= smallest:
        return
    hint = getattr(model, "resolution_hint", None)
    fix = hint(resolution) if hint is not None else "Use a finer grid."
    msg = (f"the training resolution must be n >= {smallest} for this model; got n={resolution}. "
           f"{fix}")
    raise ConfigError(msg)


def build_training_data(
    data: xr.Dataset | str | os.PathLike[str],
    config: TrainConfig,
    *,
    model: nn.Module,
    preset: str | None = None,
    path: str | os.PathLike[str] | None = None,
) -> TrainingData:
    """Split ``data``, build the three datasets and fit the normalisers on the training split.

    Parameters
    ----------
    data : xarray.Dataset or path
        An opened (validated) dataset is used as it is; a path is opened once.
    config : TrainConfig
    model : nn.Module
        The bare model (its ``output_size`` gives the inverse problem's coarse grid).
    preset : str, optional
        Named in error messages.
    path : path, optional
        The file ``data`` was opened from (recorded in the provenance); default: ``data``
        itself when it is a path.

    Raises
    ------
    ConfigError
        Problem mismatch, too few samples, bad indices, a grid too coarse for the model
        (the message names the largest Fourier ``modes`` that fits).
    InputError
        A resolution not reachable from the file's grid (the message lists the reachable ones).
    """

    if path is None and not isinstance(data, xr.Dataset):
        path = data
    ds = open_data(data)
    check_problem(ds, config, preset=preset, source=path)
    problem = get_problem(config.task)
    n_full = int(ds.sizes["x"])
    resolution = n_full if config.resolution is None else config.resolution
    splits = split_indices(int(ds.sizes["sample"]), config)
    check_model_fits(model, resolution)
    coarse = None
    grid = dataset_grid(ds.attrs, problem.data_problem, source=str(path or "`data`"))
    if problem.inverse and grid != "nodes":
        where = f" ({os.fspath(path)})" if path is not None else ""
        msg = (f"`data` must be Darcy data on the node grid for the inverse task; got a dataset "
               f"on the {grid} grid ({describe_grid(grid, n_full, problem.ndim)}){where}.")
        raise DatasetError(msg)
    if problem.inverse:
        coarse = inverse_target_grid(model, resolution, problem, n_full)
    make = dict(resolution=resolution, coarse=coarse)
    in_norm = out_norm = None
    pointwise = config.target_normalizer == "reference"
    if not problem.inverse:
        train = make_dataset(ds, config, indices=splits["train"], **make)
        if get_kit(config.task).normalise_input:
            in_norm = UnitGaussianNormalizer.fit(train.stacked("input"))
            out_norm = UnitGaussianNormalizer.fit(train.stacked("target"), pointwise=pointwise)
        elif not pointwise:  # raw inputs; a global target normaliser on request
            out_norm = UnitGaussianNormalizer.fit(
                train.stacked("target"), periodic=problem.periodic, pointwise=False
            )
        else:
            _warn_small_targets(train)
        val = make_dataset(ds, config, indices=splits["val"], **make)
        test = make_dataset(ds, config, indices=splits["test"], **make)
    else:
        clean = make_dataset(ds, config, indices=splits["train"], noisy=False, **make)
        in_norm = UnitGaussianNormalizer.fit(clean.stacked("input"))
        out_norm = UnitGaussianNormalizer.fit(clean.stacked("target"), pointwise=pointwise)
        kw = dict(input_normalizer=in_norm, **make)
        train = make_dataset(ds, config, indices=splits["train"], **kw) if config.noise else clean
        val = make_dataset(ds, config, indices=splits["val"], **kw)
        test = make_dataset(ds, config, indices=splits["test"], **kw)
    if len(train) < 1:
        msg = f"the training split must hold at least one sample; got {len(train)}."
        raise DatasetError(msg)
    return TrainingData(
        train=train, val=val, test=test, splits=splits, resolution=resolution,
        coarse_resolution=coarse, input_normalizer=in_norm, output_normalizer=out_norm,
        # The prediction is set to zero on the edge points that are Dirichlet nodes of the
        # data's points: all four edges on nodes, the first row and column on x_i = i/n
        # (an import of neuraloperator's files records them), none on cell centres.
        dirichlet=dirichlet_edges(problem.name, grid, ds.attrs),
        provenance=dataset_provenance(ds, path),
        ood_reference=_ood_reference(ds, splits["train"], resolution, train, problem),
        grid=grid,
    )


#: Burgers target/input RMS ratio below which training without a target normaliser is fragile.
SMALL_TARGET_RATIO = 0.1


def _warn_small_targets(train: Any) -> None:
    """Warn when Burgers targets are much smaller than the inputs (docs/training.md)."""
    rms_in = float(train.stacked("input").square().mean().sqrt())
    rms_out = float(train.stacked("target").square().mean().sqrt())
    if rms_in > 0 and rms_out < SMALL_TARGET_RATIO * rms_in:
        msg = (
            f"the training targets' RMS is {rms_out / rms_in:.3g} times the inputs' (below "
            f"{SMALL_TARGET_RATIO}); without a target normaliser such runs can diverge (seen at "
            "viscosity 0.1). Consider target_normalizer='global' (--set target_normalizer=global)."
        )
        warnings.warn(msg, UserWarning, stacklevel=3)


def _ood_reference(ds: xr.Dataset, train_indices: np.ndarray, resolution: int, train: Any,
                   problem: Problem) -> dict[str, Any] | None:
    """The surrogate's out-of-distribution reference of the training inputs (stored in run.json).

    Forward tasks use the training inputs already in memory; the inverse task the clean
    (noise-free) solutions of the training samples on the training grid.
    """

    if not problem.inverse:
        inputs = train.stacked("input")[..., 0].numpy()
    else:
        stride = problem.stride(int(ds.sizes["x"]), resolution)
        sel = {d: slice(None, None, stride) for d in problem.dims}
        idx = train_indices[:MAX_REFERENCE_SAMPLES]
        inputs = ds[problem.input_name].isel(sample=idx).isel(sel).values
    ref = reference_from_inputs(inputs, problem.name)
    return None if ref is None else ref.to_dict()
