"""Evaluate a trained run on a dataset at the training resolution or another reachable one.

Errors per sample: relative L2 ``||p - u|| / ||u||`` on the grid (the papers' metric, averaged
over samples) and the relative H1 seminorm error with both gradients by central differences
(:func:`neuralop_fem.metrics.relative_h1`). For Darcy the H1 error has a floor of
a few per cent even for the exact solution (the gradient jumps across interfaces;
docs/training.md, Evaluate). Beside them PDEBench's metrics: per-sample RMSE, maximum error and
boundary RMSE, and over the samples their table's numbers (``summary["pdebench"]``: RMSE,
nRMSE = our relative L2, max, bRMSE, fRMSE low / mid / high; :mod:`neuralop_fem.metrics`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, TypedDict

import numpy as np
import torch
import xarray as xr
from numpy.typing import NDArray

from solvers.problems import Problem, get_problem

from ..data.normalizer import UnitGaussianNormalizer
from ..errors import ConfigError
from ..metrics import (
    boundary_rmse,
    fourier_band_rmse,
    fourier_error_spectrum,
    max_error,
    relative_h1,
    relative_l2,
    rmse,
    summarize,
)
from ..problems import get_kit
from ..runs import RunDir
from ..runs.operator import load_run
from ..surrogate.resample import resample_nodes, resample_output, resample_periodic
from ..training.setup import check_problem, inverse_target_grid, make_dataset, open_data
from .training_overlap import seen_in_training, warn_if_seen

if TYPE_CHECKING:  # pragma: no cover
    from ..data.normalizer import UnitGaussianNormalizer
    from ..models import NormalizedOperator

__all__ = ["RunEvaluation", "evaluate_run", "parse_indices", "summarize"]  # summarize: ..metrics


class RunEvaluation(TypedDict):
    """What :func:`evaluate_run` returns (per-sample arrays, their summary, the grids)."""

    run_dir: str
    preset: str | None
    indices: NDArray[np.int64]
    rel_l2: NDArray[np.float64]
    rel_h1: NDArray[np.float64]
    rmse: NDArray[np.float64]
    max_error: NDArray[np.float64]
    boundary_rmse: NDArray[np.float64]
    summary: dict[str, dict[str, float]]
    resolution: int
    transfer: str
    output_resolution: int
    train_resolution: int
    n_samples: int
    seen_in_training: int
    seen_in_validation: int


def parse_indices(spec: str | Iterable[int], *, n_samples: int, test: list[int]) -> np.ndarray:
    """Sample positions from ``"test"`` (the run's test split), ``"all"``, ``"A:B"`` or a list.

    ``"A:B"`` selects positions ``A, ..., B-1`` (either may be left out: ``":8"``, ``"8:"``;
    negative values count from the end, as in Python); a range that reaches past the
    dataset is an error, not clipped.

    Raises
    ------
    ConfigError
        For an unparsable spec, an empty selection, or positions outside ``[0, n_samples)``.
    """
    if isinstance(spec, str):
        if spec == "test":
            idx = np.asarray(test, dtype=np.int64)
        elif spec == "all":
            idx = np.arange(n_samples, dtype=np.int64)
        elif spec.count(":") == 1:
            idx = _parse_range(spec, n_samples)
        else:
            msg = f"`indices` must be 'test', 'all' or 'A:B'; got {spec!r}."
            raise ConfigError(msg)
    else:
        idx = np.asarray(list(spec), dtype=np.int64)
    if idx.size == 0:
        msg = f"`indices` must select at least one sample; got {spec!r} for {n_samples} samples."
        raise ConfigError(msg)
    if isinstance(spec, str) and spec == "test" and idx.max() >= n_samples:
        msg = (f"`indices` 'test' (the default) selects the run's test split, positions "
               f"{int(idx.min())}..{int(idx.max())} of its training data; this dataset has "
               f"{n_samples} samples. Evaluate on the run's own data file (or its regeneration: "
               "run.json or the zoo card gives the command), or on data generated with another "
               "--seed with --indices all.")
        raise ConfigError(msg)
    if idx.min() < 0 or idx.max() >= n_samples:
        msg = (
            f"`indices` must be positions in [0, {n_samples}) of this dataset; got "
            f"{int(idx.min())}..{int(idx.max())} (the run's test split needs the training file "
            "or one at least as large)."
        )
        raise ConfigError(msg)
    return idx


def _parse_range(spec: str, n_samples: int) -> np.ndarray:
    a, b = spec.split(":")
    try:
        start = int(a) if a.strip() else 0
        stop = int(b) if b.strip() else n_samples
    except ValueError:
        msg = f"`indices` must be 'test', 'all' or 'A:B' with integers; got {spec!r}."
        raise ConfigError(msg) from None
    for value in (start, stop):
        if not -n_samples <= value <= n_samples:
            msg = (f"`indices` 'A:B' must have A and B in [{-n_samples}, {n_samples}] for this "
                   f"dataset of {n_samples} samples (positions 0..{n_samples - 1}, B exclusive); "
                   f"got {spec!r}.")
            raise ConfigError(msg)
    return np.arange(n_samples, dtype=np.int64)[start:stop]


def _inverse_normalizer(operator: NormalizedOperator, n: int) -> UnitGaussianNormalizer:
    """The training input normaliser resampled to ``n x n`` (for the inverse noise scale)."""

    norm = operator.input_normalizer
    zeros = torch.zeros(n, n, 1, dtype=norm.mean.dtype)
    mean = norm.decode(zeros)
    std = norm.decode(zeros + 1) - mean - norm.eps.to(mean.dtype)
    return UnitGaussianNormalizer(mean, std, eps=float(norm.eps))


@torch.no_grad()
def evaluate_run(
    run_dir: str | os.PathLike[str],
    data: str | os.PathLike[str] | xr.Dataset,
    *,
    resolution: int | None = None,
    indices: str | Iterable[int] = "test",
    batch_size: int | None = None,
    device: str | None = None,
    transfer: str = "auto",
) -> RunEvaluation:
    """Per-sample and summarised errors of the selected model of ``run_dir`` on ``data``.

    Parameters
    ----------
    run_dir : path
        A training run directory, or ``"zoo:NAME"`` (a model of :mod:`neuralop_fem.zoo`).
    data : path or xarray.Dataset
        A dataset of the run's problem (the training file or another one).
    resolution : int, optional
        Grid to evaluate on (Burgers n, Darcy n, inverse n_f); reachable from the file's grid.
        None: the training resolution.
    indices : "test", "all", "A:B" or sequence of int
        Samples to evaluate (positions in ``data``); "test" is the run's test split.
    batch_size : int, optional
        Default: the run's ``eval_batch_size``.
    device : str, optional
        Default: CPU, or CUDA when available.
    transfer : {"auto", "direct", "resample"}
        At a resolution other than the training one: ``"direct"`` feeds the model the data at
        that resolution; ``"resample"`` predicts on the training grid and interpolates (as
        ``Surrogate.solve(resample=True)``); ``"auto"``: direct for Burgers, resample for
        Darcy (whose models do not transfer directly; docs/training.md).

    Returns
    -------
    RunEvaluation
        A dict: ``indices``, ``rel_l2``, ``rel_h1``, ``rmse``, ``max_error`` and
        ``boundary_rmse`` (arrays, one value per sample), ``summary`` (``{"rel_l2": {...},
        "rel_h1": {...}, ...}`` from :func:`summarize`, and ``"pdebench"``: PDEBench's table
        numbers over the samples), ``resolution``,
        ``output_resolution`` and ``train_resolution``; ``seen_in_training`` and
        ``seen_in_validation``: how many of the samples the run has seen (data generated
        with its training data's settings and seeds,
        :mod:`~neuralop_fem.evaluation.training_overlap`;
        a :class:`~neuralop_fem.evaluation.training_overlap.SeenInTrainingWarning` says so).

    Raises
    ------
    ConfigError
        Problem mismatch or bad indices.
    InputError
        A resolution not reachable from the file's grid.
    """
    run = RunDir.resolve(run_dir)  # zoo:NAME -> the zoo entry's directory
    run_dir = run.path
    dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    operator, record = load_run(run, map_location=dev)
    record.require(("train_config", "resolution", "splits"),
                   source=str(run.run_json))
    config = record.config
    train_resolution = int(record.resolution)  # type: ignore[arg-type]  # required above
    ds = open_data(data)
    check_problem(ds, config, preset=record.preset)
    n = train_resolution if resolution is None else int(resolution)
    idx = parse_indices(indices, n_samples=int(ds.sizes["sample"]),
                        test=list(record.test_indices))
    seen = seen_in_training(record, ds, idx)
    coarse = None
    norm = None
    spec = get_problem(config.task)
    if spec.inverse:
        coarse = inverse_target_grid(operator.model, n, spec, int(ds.sizes["x"]))
        if config.noise > 0:
            norm = _inverse_normalizer(operator.cpu(), n)
            operator.to(dev)
    dataset = make_dataset(ds, config, indices=idx, resolution=n, coarse=coarse,
                           input_normalizer=norm, in_memory=False)
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size or config.eval_batch_size)
    mode = _transfer_mode(transfer, spec, n, train_resolution)
    l2, h1 = [], []
    peer: dict[str, list[np.ndarray]] = {"rmse": [], "max_error": [], "boundary_rmse": [],
                                         "spectra": []}
    grid: tuple[int, ...] = ()
    for batch in loader:
        if mode == "resample":
            pred = _through_training_grid(operator, batch["input"], train_resolution, spec, dev)
        else:
            pred = operator(batch["input"].to(dev))[..., 0].to("cpu", torch.float64).numpy()
        target = batch["target"][..., 0].to(torch.float64).numpy()
        l2.append(relative_l2(pred, target))
        h1.append(relative_h1(pred, target, grid=spec.grid))
        for name, metric in (("rmse", rmse), ("max_error", max_error),
                             ("boundary_rmse", boundary_rmse),
                             ("spectra", fourier_error_spectrum)):
            peer[name].append(metric(pred, target))
        grid = target.shape[1:]
    warn_if_seen(seen, int(idx.size))  # once the samples were read: an error comes alone
    rel_l2 = np.concatenate(l2)
    rel_h1 = np.concatenate(h1)
    per_sample = {k: np.concatenate(v) for k, v in peer.items()}
    spectra = per_sample.pop("spectra")
    pdebench = {"rmse": float(per_sample["rmse"].mean()),
                "nrmse": summarize(rel_l2)["mean"],
                "max_error": float(per_sample["max_error"].max()),
                "boundary_rmse": float(per_sample["boundary_rmse"].mean()),
                **{f"frmse_{k}": v for k, v in fourier_band_rmse(spectra, grid).items()}}
    return {
        "run_dir": os.fspath(run_dir),
        "preset": record.preset,
        "indices": idx,
        "rel_l2": rel_l2,
        "rel_h1": rel_h1,
        **per_sample,  # type: ignore[typeddict-item]
        "summary": {"rel_l2": summarize(rel_l2), "rel_h1": summarize(rel_h1),
                    **{k: summarize(v) for k, v in per_sample.items()},
                    "pdebench": pdebench},
        "resolution": n,
        "transfer": mode,
        "output_resolution": coarse or n,
        "train_resolution": train_resolution,
        "n_samples": int(idx.size),
        "seen_in_training": seen["train"],
        "seen_in_validation": seen["val"],
    }


def _transfer_mode(transfer: str, spec: Problem, n: int, n_train: int) -> str:
    if transfer not in ("auto", "direct", "resample"):
        msg = f"`transfer` must be 'auto', 'direct' or 'resample'; got {transfer!r}."
        raise ConfigError(msg)
    if n == n_train or spec.inverse:
        return "direct"
    if transfer == "auto":
        # The kit says whether the models transfer to other grids when fed directly
        # (docs/training.md, "Other resolutions").
        return "direct" if get_kit(spec.name).direct_transfer else "resample"
    return transfer


def _through_training_grid(operator: torch.nn.Module, x: torch.Tensor, n_train: int, spec: Problem,
                           device: torch.device) -> np.ndarray:
    """Predict on the training grid and interpolate back: inputs resampled like
    ``Surrogate(resample=True)`` does (nearest node for a coefficient, linear otherwise), the
    prediction as it does (Fourier on the periodic grid, bilinear on nodes)."""
    values = x[..., 0].to(torch.float64).numpy()
    n = values.shape[-1]
    if spec.periodic:
        coarse = resample_periodic(values, n_train)
    else:
        coarse = resample_nodes(values, n_train, order=0 if spec.positive_input else 1)
    t = torch.from_numpy(np.ascontiguousarray(coarse)[..., None]).to(device, torch.float32)
    pred = operator(t)[..., 0].to("cpu", torch.float64).numpy()
    if spec.periodic:  # Fourier, as Surrogate.solve(resample=True) and the solver ladder
        return resample_output(pred, n, grid="periodic")
    return resample_nodes(pred, n, order=1)
