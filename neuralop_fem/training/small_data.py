"""Fit a training preset's sample split and grid to a dataset file (small files included).

The training presets carry the paper's settings: 1024 / 100 / 100 training / validation / test
samples, Burgers at n = 512, Darcy at 141 x 141. :func:`fit_to_data` keeps every setting named
in ``keep`` (the ones the user chose; they are checked against the file) and replaces the
others only when the file cannot provide them:

* **split**: the preset's when the file holds enough samples; otherwise about 80 / 10 / 10 %:
  :data:`EVAL_FRACTION` of the samples each for validation and test (at least one, at most the
  preset's size), the rest for training; sizes that were chosen are kept and the others share
  what they leave;
* **resolution**: the preset's when the file's grid reaches it by striding
  (:meth:`solvers.problems.Problem.reachable`); otherwise the largest reachable grid below it
  (and, for the inverse problem, one whose coarse target grid is reachable by pooling).

Each replacement comes back as a one-line note saying what was chosen, why and how to choose
otherwise (``neuralop-fem train`` prints them)::

    >>> from neuralop_fem.training import training_preset
    >>> sizes, note = fit_split(64, training_preset("burgers-galerkin"))
    >>> sizes
    {'n_train': 52, 'n_val': 6, 'n_test': 6}
    >>> print(note)  # doctest: +NORMALIZE_WHITESPACE
    split: 52 training / 6 validation / 6 test samples (about 10 % each for validation and test):
    the dataset holds 64 samples, fewer than the preset's 1024 + 100 + 100 = 1224; set
    `n_train`/`n_val`/`n_test` to choose another.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping

import xarray as xr

from solvers.problems import Problem, get_problem

from ..errors import ConfigError
from ..models import coarse_size
from ..runs.train_config import TrainConfig
from .setup import check_problem, open_data

__all__ = ["EVAL_FRACTION", "MIN_POINTS", "SPLIT_FIELDS", "fit_resolution", "fit_split",
           "fit_to_data"]

#: The TrainConfig fields of the sample split, in the order train, validation, test.
SPLIT_FIELDS = ("n_train", "n_val", "n_test")
#: Fraction of the samples given to validation, and to test, in a split chosen for a small file.
EVAL_FRACTION = 0.1
#: Fewest grid points per dimension of a resolution chosen for a file.
MIN_POINTS = 3

_ROLES = {"n_train": "training", "n_val": "validation", "n_test": "test"}


def _name(names: Mapping[str, str] | None, field: str) -> str:
    return (names or {}).get(field, f"`{field}`")


def _who(names: Mapping[str, str] | None, fields: Collection[str]) -> str:
    joined = "/".join(_name(names, f) for f in fields)
    return f"argument {joined}" if joined.startswith("-") else joined


def fit_split(
    n_samples: int, config: TrainConfig, *, keep: Collection[str] = (),
    names: Mapping[str, str] | None = None, where: str = "the dataset",
) -> tuple[dict[str, int], str | None]:
    """The split sizes for a dataset of ``n_samples`` and the note explaining a change.

    Parameters
    ----------
    n_samples
        Samples in the dataset.
    config
        Its ``n_train``, ``n_val``, ``n_test`` are the wanted sizes.
    keep
        Fields of :data:`SPLIT_FIELDS` chosen by the user: kept, and refused if they do not fit.
    names
        How to name a field in messages and notes (the command line: ``{"n_train":
        "--n-train", ...}``); default ```n_train``` etc.
    where
        The dataset, as named in messages (e.g. its file name).

    Returns
    -------
    sizes : dict
        ``{"n_train", "n_val", "n_test"}`` -> int, disjoint within ``n_samples``.
    note : str or None
        One line when the sizes differ from ``config``'s, else None.

    Raises
    ------
    ConfigError
        Fewer than 3 samples (one per split), or chosen sizes that leave no room for the
        others (the message names the fields, the requested and the available counts).
    """
    wanted = {f: int(getattr(config, f)) for f in SPLIT_FIELDS}
    if config.train_indices is not None:  # explicit positions: split_indices checks them
        return wanted, None
    given = {f: wanted[f] for f in SPLIT_FIELDS if f in keep}
    free = [f for f in SPLIT_FIELDS if f not in given]
    if n_samples < len(SPLIT_FIELDS):
        msg = (f"the dataset must hold at least 3 samples to train (one each for training, "
               f"validation and test); got {n_samples} in {where}. Generate more "
               "(`neuralop-fem generate ... --append M`).")
        raise ConfigError(msg)
    requested = sum(given.values())
    if requested + len(free) > n_samples:
        room = f"the {n_samples} samples of {where}"
        if free:
            each = " each" if len(free) > 1 else ""
            room += f" less one{each} for {' and '.join(_ROLES[f] for f in free)}"
        got = " + ".join(map(str, given.values()))
        if len(given) > 1:
            got += f" = {requested}"
        verb = "add up to" if len(given) > 1 else "be"
        msg = (f"{_who(names, given)}: must {verb} at most {n_samples - len(free)} ({room}); "
               f"got {got}.")
        raise ConfigError(msg)
    if requested + sum(wanted[f] for f in free) <= n_samples:
        return wanted, None
    sizes = dict(given)
    target = max(1, round(EVAL_FRACTION * n_samples))
    left = n_samples - requested
    evals = [f for f in free if f != "n_train"]
    if "n_train" in free:  # validation and test first, at least one sample left to train on
        for f in evals:
            sizes[f] = max(1, min(target, wanted[f], (left - 1) // len(evals)))
        sizes["n_train"] = left - sum(sizes[f] for f in evals)
    else:  # training size chosen: validation and test share what it leaves
        for f in evals:
            sizes[f] = max(1, min(target, wanted[f], left // len(evals)))
    sizes = {f: sizes[f] for f in SPLIT_FIELDS}
    preset = " + ".join(str(wanted[f]) for f in free)
    if given:
        chosen = " + ".join(str(v) for v in given.values())
        need = f"{chosen} ({'/'.join(_name(names, f) for f in given)}) + the preset's {preset}"
    else:
        need = f"the preset's {preset}"
    fields = "/".join(_name(names, f) for f in SPLIT_FIELDS)
    note = (f"split: {sizes['n_train']} training / {sizes['n_val']} validation / "
            f"{sizes['n_test']} test samples (about 10 % each for validation and test): {where} "
            f"holds {n_samples} samples, fewer than {need} = {sum(wanted.values())}; set "
            f"{fields} to choose another.")
    return sizes, note


def _usable(problem: Problem, model_config: object) -> Callable[[int], bool]:
    """Whether a resolution can be trained on: enough points, and for the inverse problem a
    coarse target grid reachable from it by pooling."""

    ratio = getattr(model_config, "coarse_ratio", None)
    coarse = getattr(model_config, "output_grid", None) == "coarse" and ratio is not None

    def usable(n: int) -> bool:
        if n < MIN_POINTS:
            return False
        if problem.inverse and coarse:
            return coarse_size(n, float(ratio)) in problem.reachable(n)
        return True

    return usable


def fit_resolution(
    n_full: int, config: TrainConfig, *, model_config: object = None, keep: Collection[str] = (),
    names: Mapping[str, str] | None = None, where: str = "the dataset",
) -> tuple[int | None, str | None]:
    """The training resolution for a file whose grid has ``n_full`` points per dimension.

    ``config.resolution`` is kept when it is in ``keep``, None (the file's grid) or reachable
    from ``n_full``; otherwise it becomes the largest usable reachable resolution below it.

    Returns
    -------
    resolution : int or None
    note : str or None
        One line when the resolution differs from ``config``'s, else None.

    Raises
    ------
    ConfigError
        When a kept resolution is not reachable, or no reachable resolution of at least
        :data:`MIN_POINTS` points lies below the wanted one (the message lists the reachable
        resolutions).
    """
    wanted = config.resolution
    problem = get_problem(config.task)
    reachable = problem.reachable(n_full)
    if "resolution" in keep and wanted is not None and wanted not in reachable:
        msg = (f"{_name(names, 'resolution')} must be reachable from {n_full} by striding (the "
               f"grid of {where}): one of {reachable}; got {wanted}.")
        raise ConfigError(msg)
    if "resolution" in keep or wanted is None or wanted in reachable:
        return wanted, None
    usable = _usable(problem, model_config)
    below = [n for n in reachable if n <= wanted and usable(n)]
    flag = _name(names, "resolution")
    if not below:
        msg = (f"{_who(names, ['resolution'])}: the preset's n={wanted} is not reachable from the "
               f"n={n_full} grid of {where} by striding, nor is any usable grid below it; choose "
               f"one of the reachable {reachable} with {flag}, or generate data on a grid that "
               f"reaches {wanted}.")
        raise ConfigError(msg)
    chosen = max(below)
    which = "the file's grid" if chosen == n_full else "the largest reachable grid below it"
    note = (f"resolution: n={chosen} ({which}) instead of the preset's {wanted}, which the "
            f"n={n_full} grid of {where} does not reach by striding; set {flag} to choose "
            "another.")
    return chosen, note


def fit_to_data(
    config: TrainConfig, data: xr.Dataset | str | os.PathLike[str], *, model_config: object = None,
    keep: Collection[str] = (), names: Mapping[str, str] | None = None,
    preset: str | None = None,
) -> tuple[TrainConfig, list[str]]:
    """``config`` with its split and resolution fitted to the dataset ``data``.

    Parameters
    ----------
    config
        A training preset, possibly with user changes.
    data
        The dataset (path or opened); only its sizes are read.
    model_config
        The model's config (for the inverse problem's coarse grid rule).
    keep
        TrainConfig fields the user chose (kept; checked against the file).
    names
        How to name fields in messages and notes (the command line passes its options).
    preset
        Named in the error of a dataset of another problem.

    Returns
    -------
    config : TrainConfig
        With ``n_train``/``n_val``/``n_test`` and ``resolution`` fitted.
    notes : list of str
        One line per change: what was chosen, why, and how to choose otherwise.

    Raises
    ------
    ConfigError
        A dataset of another problem, too few samples, chosen split sizes larger than the file,
        or no usable resolution (see :func:`fit_split`, :func:`fit_resolution`).

    Examples
    --------
    ``config, notes = fit_to_data(training_preset("burgers-galerkin"), "small.nc")``
    """
    ds = open_data(data)
    where = "the dataset" if isinstance(data, xr.Dataset) else os.fspath(data)
    check_problem(ds, config, preset=preset, source=None if isinstance(data, xr.Dataset) else where)
    kw = {"keep": keep, "names": names, "where": where}
    sizes, split_note = fit_split(int(ds.sizes["sample"]), config, **kw)
    resolution, res_note = fit_resolution(int(ds.sizes["x"]), config, model_config=model_config,
                                          **kw)
    notes = [n for n in (split_note, res_note) if n is not None]
    if notes:
        config = config.replace(**sizes, resolution=resolution)
    return config, notes
