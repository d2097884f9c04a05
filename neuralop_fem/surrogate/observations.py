"""Observations and test samples of a training run, made the way its training made them.

The noise convention of the inverse problem, stated once (the paper's, Cao 2021): a training
input, the Darcy solution ``u`` on the model's ``n x n`` node grid, gets

.. math::

    u_{obs}(x) = u(x) + \\varepsilon\\,(\\sigma(x) + 10^{-5})\\, z(x), \\qquad z \\sim N(0, 1)
    \\text{ i.i.d. over the nodes},

with ``epsilon`` the run's ``noise`` (``neuralop-fem train --noise``, :attr:`Surrogate.noise`)
and ``sigma`` the pointwise standard deviation of the noise-free training inputs (the input
normaliser's; ``Surrogate.noise_std()`` is ``sigma + 1e-5``); that is, ``epsilon * z`` added to
the normalised input. The draw of dataset sample ``k`` comes from
``np.random.default_rng(np.random.SeedSequence([seed, k]))``, ``seed`` the run's training
seed, so it is the same in every epoch, in ``evaluate`` and in ``compare``.

The classical inversion (:class:`solvers.DarcyInverseSolver`) takes the *relative* level
``noise_level = ||eta|| / ||u||`` over the interior nodes instead; the one converter is
:func:`solvers.darcy_inverse.paper_noise_to_relative` (``Surrogate.relative_noise_level`` applies
it with the run's ``epsilon`` and ``sigma``).
"""

from __future__ import annotations

import numbers
import os
import warnings
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from solvers.checks import plain
from solvers.contract import SolverInput, SolverOutput, as_batch
from solvers.darcy_inverse import paper_noise_to_relative, wrong_sign_note

from ..data import load_dataset
from ..data.io import reading
from ..errors import DatasetError, InputError, RunDirectoryError, ShapeError
from ..runs import RunRecord
from .resample import resample_nodes

if TYPE_CHECKING:  # pragma: no cover
    import xarray as xr

    from solvers.problems import Problem


class Surrogate(Protocol):
    """What these functions read of a :class:`~neuralop_fem.surrogate.Surrogate` (a protocol, so
    that this module, which the Surrogate's methods call, does not import it back)."""

    problem: str
    resolution: int
    spec: Problem
    record: RunRecord

    @property
    def noise(self) -> float: ...

    def noise_std(self) -> NDArray[np.float64] | None: ...

    def reference_solver(self) -> Any: ...

__all__ = ["load_test_split", "noisy_observations", "relative_noise_level", "sample_fields",
           "warn_if_sign_flipped"]


def relative_noise_level(sur: Surrogate, inputs: SolverInput) -> NDArray[np.float64]:
    """:meth:`Surrogate.relative_noise_level`: the run's ``epsilon`` and ``sigma`` through the
    one converter, :func:`solvers.darcy_inverse.paper_noise_to_relative` (``sigma``
    interpolated bilinearly to another square node grid)."""
    batch = as_batch(inputs, name=sur.spec.input_name, core_dims=sur.spec.dims)
    u = batch.values
    std = sur.noise_std()
    if sur.noise == 0 or std is None:
        return np.zeros(len(u))
    if u.shape[1:] != std.shape:
        if u.ndim != 3 or u.shape[1] != u.shape[2] or u.shape[1] < 3:
            msg = (f"`{sur.spec.input_name}` must be square node grids (n, n), n >= 3, "
                   f"to convert the noise level; got {u.shape[1:]}.")
            raise ShapeError(msg)
        std = resample_nodes(std[None], u.shape[1], order=1)[0]
    # std already holds sigma + 1e-5: the converter's offset is 0 here
    levels = paper_noise_to_relative(sur.noise, std, observed=u, std_offset=0.0)
    return np.atleast_1d(np.asarray(levels, dtype=np.float64))


def warn_if_sign_flipped(sur: Surrogate, values: NDArray[np.float64]) -> None:
    """Warn when observations given to an inverse surrogate have, on more of the interior
    than their noise explains, the sign opposite to the training data's forcing (the rule of
    the classical inversion, :func:`solvers._inverse_checks.wrong_sign_note`): the model
    would answer them with a confident coefficient. Data imported without their forcing are
    not checked (the sign is unknown).

    Parameters
    ----------
    sur
        An inverse surrogate.
    values : (n_samples, n, n) array
        Its checked inputs, the observed solutions.
    """
    try:
        forcing = getattr(sur.reference_solver(), "forcing", None)
    except DatasetError:  # imported without the forcing: nothing to compare the sign with
        return
    if not isinstance(forcing, numbers.Real) or forcing == 0:
        return
    note = wrong_sign_note(values, forcing=float(forcing),
                           noise_levels=relative_noise_level(sur, values),
                           name=sur.spec.input_name)
    if note is not None:
        warnings.warn(f"{sur.problem} surrogate: {note}", UserWarning, stacklevel=4)


def _run_seed(sur: Surrogate) -> int:
    seed = sur.record.train_setting.get("seed")
    if not isinstance(seed, numbers.Integral) or isinstance(seed, bool) or seed < 0:
        msg = (f"run.json must record the training seed (`train_config.seed`, an int >= 0) to "
               f"repeat the run's noise draws; got {seed!r}.")
        raise RunDirectoryError(msg)
    return int(seed)


def _sample_ids(sample_ids: ArrayLike, n_samples: int) -> NDArray[np.int64]:
    ids = np.asarray(sample_ids)
    if ids.ndim == 0:
        ids = ids[None]
    if ids.dtype.kind not in "iu" or ids.shape != (n_samples,) or (ids < 0).any():
        msg = (f"`sample_ids` must be {n_samples} dataset sample indices (ints >= 0), one per "
               f"observation; got {np.asarray(sample_ids).tolist()!r}.")
        raise InputError(msg)
    return ids.astype(np.int64)


def noisy_observations(sur: Surrogate, u: SolverInput, *, sample_ids: ArrayLike | None = None,
                       rng: np.random.Generator | None = None) -> SolverOutput:
    """Noise-free solutions made into observations with the run's training noise.

    Parameters
    ----------
    sur
        An inverse surrogate (``darcy-inverse`` run).
    u : (n_samples, n, n) or (n, n) array, or DataArray
        Clean Darcy solutions on a square node grid: the model grid (the training draws are
        defined there), or another one (``sigma`` is then interpolated bilinearly to it).
    sample_ids : (n_samples,) ints, optional
        The dataset indices of the samples: the noise is then the run's own draw for each
        (what training, ``evaluate`` and ``compare`` use).
    rng
        A ``numpy.random.Generator`` for new draws instead. Give exactly one of the two.

    Returns
    -------
    Observations in the form of ``u`` (float64): ``u + noise * (sigma + 1e-5) * z`` at every
    node (see the module notes); ``u`` itself for a run trained without noise.

    Raises
    ------
    InputError
        Not an inverse run, both or neither of ``sample_ids`` and ``rng``, bad ids.
    ShapeError
        ``u`` not on a square node grid.
    """
    if not sur.spec.inverse:
        msg = (f"`noisy_observations` applies to inverse runs (observed solutions); got a "
               f"{sur.problem} run.")
        raise InputError(msg)
    if (sample_ids is None) == (rng is None):
        msg = ("Give exactly one of `sample_ids` (the run's own noise draw of each dataset "
               "sample) and `rng` (new draws); got "
               f"{'both' if sample_ids is not None else 'neither'}.")
        raise InputError(msg)
    if rng is not None and not isinstance(rng, np.random.Generator):
        msg = f"`rng` must be a numpy.random.Generator; got {type(rng).__name__}."
        raise InputError(msg)
    batch = as_batch(u, name="u", core_dims=sur.spec.dims)
    values = batch.values.astype(np.float64)
    n = values.shape[-1]
    if values.shape[1:] != (n, n) or n < 3:
        msg = f"`u` must be on a square n x n node grid, n >= 3; got shape {values.shape[1:]}."
        raise ShapeError(msg)
    std = sur.noise_std()
    if sur.noise == 0 or std is None:
        return batch.restore(values.copy(), name="u")
    if std.shape != (n, n):
        std = resample_nodes(std[None], n, order=1)[0]
    if sample_ids is not None:
        seed = _run_seed(sur)
        ids = _sample_ids(sample_ids, len(values))
        z = np.stack([np.random.default_rng(np.random.SeedSequence([seed, int(k)]))
                      .standard_normal((n, n)) for k in ids])
    else:
        assert rng is not None  # one of the two, checked above
        z = rng.standard_normal(values.shape)
    return batch.restore(values + sur.noise * std * z, name="u")


def sample_fields(sur: Surrogate, ds: xr.Dataset,
                  idx: ArrayLike) -> tuple[xr.DataArray, xr.DataArray]:
    """Inputs and true outputs of dataset positions ``idx`` on the model grid (strided from
    the file), as a run's evaluation sees them: for an inverse run the observations carry the
    run's noise draws (:func:`noisy_observations` with the samples' ids)."""

    spec = sur.spec
    positions = np.asarray(idx, dtype=np.int64)
    stride = spec.stride(int(ds.sizes[spec.dims[0]]), sur.resolution)
    sel = {dim: slice(None, None, stride) for dim in spec.dims}
    what = f"samples {positions[0]}..{positions[-1]}" if positions.size else "no samples"
    with reading(ds, spec.input_name, what):
        inputs = ds[spec.input_name].isel(sample=positions).isel(sel).load()
    with reading(ds, spec.output_name, what):
        outputs = ds[spec.output_name].isel(sample=positions).isel(sel).load()
    if spec.inverse:
        inputs = noisy_observations(sur, inputs, sample_ids=ds["sample"].values[positions])
    return inputs, outputs


def load_test_split(sur: Surrogate, data: str | os.PathLike[str] | None = None, *,
               max_samples: int | None = None) -> tuple[xr.DataArray, xr.DataArray]:
    """The run's test samples: ``(inputs, outputs)`` on the model grid.

    Parameters
    ----------
    sur
        A loaded run.
    data
        The dataset file the run was trained on; None: the file run.json records.
    max_samples
        Keep the first ``max_samples`` test samples (None: all).

    Returns
    -------
    inputs, outputs : DataArrays (sample, x[, y])
        Forward runs: the stored inputs and solutions. Inverse runs: the observations with the
        run's noise draws (as in training, ``evaluate`` and ``compare``) and the true
        coefficient on the observation grid.
    """
    test = None if sur.record.splits is None else list(sur.record.splits.test)
    if not isinstance(test, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in test):
        msg = ("run.json must record the test split (`splits.test`, sample positions); got "
               f"{test!r}.")
        raise RunDirectoryError(msg)
    if data is None:
        data = sur.record.data_path
        if not isinstance(data, str):
            msg = "run.json records no dataset path (`data.path`); pass `data`."
            raise RunDirectoryError(msg)
    if max_samples is not None and (not isinstance(max_samples, numbers.Integral)
                                    or isinstance(max_samples, bool) or max_samples < 1):
        msg = f"`max_samples` must be None or an int >= 1; got {plain(max_samples)}."
        raise InputError(msg)
    ds = load_dataset(data)
    if ds.attrs.get("problem") != sur.spec.data_problem:
        msg = (f"`data` must be a {sur.spec.data_problem} dataset like the run's training data; "
               f"got a {ds.attrs.get('problem')} dataset ({os.fspath(data)}).")
        raise InputError(msg)
    if test and max(test) >= ds.sizes["sample"]:
        msg = (f"`data` ({os.fspath(data)}) holds {ds.sizes['sample']} samples, fewer than the "
               f"run's test split needs (position {max(test)}).")
        raise InputError(msg)
    idx = test[:max_samples] if max_samples is not None else test
    return sample_fields(sur, ds, idx)
