"""Figures of a few samples of a dataset (``neuralop-fem plot``; matplotlib).

* Burgers: one panel per sample with the input ``u0`` and the solution ``u`` over x.
* Darcy: the coefficient ``a`` (top row) and the solution ``u`` (bottom row) of each sample as
  maps with x horizontal and y up (the arrays are read as ``(sample, y, x)`` by dimension name,
  whichever order the dataset holds), one colour scale per field shared by all samples shown.

Labels come from the variables' ``long_name`` and ``units`` attributes, as xarray makes them.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import xarray as xr

from solvers.problems import PROBLEMS, get_problem

from ..errors import InputError
from ..plotting import save
from .io import read_values
from .schema import SAMPLE, X, Y

__all__ = ["field_label", "plot_samples"]


#: Longest ``long_name`` used as a label (files of earlier releases hold long descriptions).
_LABEL_MAX = 32


def field_label(ds: xr.Dataset, name: str) -> str:
    """``long_name [units]`` of variable ``name`` (its name when it has no short
    ``long_name``)."""
    attrs = ds[name].attrs
    label = str(attrs.get("long_name", name))
    if len(label) > _LABEL_MAX:
        label = name
    units = attrs.get("units")
    return f"{label} [{units}]" if units is not None else label


def _lines(ds: xr.Dataset, idx: np.ndarray, title: str, names: tuple[str, str]):
    """1D problems (Burgers): input and output of each sample as two lines."""
    import matplotlib.pyplot as plt

    x = np.asarray(ds[X].values)
    name_in, name_out = names
    u0 = read_values(ds, name_in, **{SAMPLE: idx})
    u = read_values(ds, name_out, **{SAMPLE: idx})
    k = len(idx)
    fig, axes = plt.subplots(1, k, figsize=(3.4 * k + 0.6, 3.2), sharey=True, squeeze=False)
    for j, ax in enumerate(axes[0]):
        ax.plot(x, u0[j], color="0.45", lw=1.2, label=field_label(ds, name_in))
        ax.plot(x, u[j], color="C0", lw=1.5, label=field_label(ds, name_out))
        ax.set_title(f"sample {int(ds[SAMPLE].values[idx[j]])}", fontsize=10)
        ax.set_xlabel(field_label(ds, X))
        ax.set_xlim(0, 1)
        ax.grid(alpha=0.3)
    axes[0, 0].set_ylabel(f"{name_out} [{ds[name_out].attrs.get('units', '1')}]")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="lower center", ncol=2, fontsize=8,
               frameon=False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


def _images(ds: xr.Dataset, idx: np.ndarray, title: str, names: tuple[str, str]):
    """2D problems (Darcy): one row of images per field."""
    import matplotlib.pyplot as plt

    x, y = np.asarray(ds[X].values), np.asarray(ds[Y].values)
    k = len(idx)
    fig, axes = plt.subplots(2, k, figsize=(3.0 * k + 1.2, 5.6), squeeze=False,
                             layout="constrained")
    maps = ds[list(names)].transpose(SAMPLE, Y, X)  # rows y, columns x (by name)
    for row, name in enumerate(names):
        values = read_values(maps, name, **{SAMPLE: idx})  # (k, y, x)
        lo, hi = float(np.nanmin(values)), float(np.nanmax(values))
        mesh = None
        for j in range(k):
            ax = axes[row, j]
            mesh = ax.pcolormesh(x, y, values[j], vmin=lo, vmax=hi, shading="nearest",
                                 cmap="viridis")
            ax.set_aspect("equal")
            ax.set_title(f"{name}, sample {int(ds[SAMPLE].values[idx[j]])}", fontsize=10)
            ax.set_xlabel(field_label(ds, X))
            if j == 0:
                ax.set_ylabel(field_label(ds, Y))
            else:
                ax.tick_params(labelleft=False)
        fig.colorbar(mesh, ax=axes[row, :].tolist(), shrink=0.9, label=field_label(ds, name))
    fig.suptitle(title, fontsize=10)
    return fig


def plot_samples(ds: xr.Dataset, out_dir: str | os.PathLike[str], *, n_samples: int = 3,
                 name: str = "samples") -> Path:
    """Plot the first ``n_samples`` samples of ``ds`` into ``out_dir/NAME.png``.

    Parameters
    ----------
    ds
        A Burgers or Darcy dataset (:func:`~neuralop_fem.data.load_dataset`).
    out_dir
        Existing directory for the PNG.
    n_samples
        Samples shown (the first ones; fewer when the file holds fewer), at least 1.
    name
        File name without ``.png``.

    Returns
    -------
    Path
        The PNG written.

    Raises
    ------
    InputError
        ``n_samples`` < 1 or a dataset of another problem.
    """
    if n_samples < 1:
        msg = f"`n_samples` must be an integer >= 1; got {n_samples!r}."
        raise InputError(msg)
    problem = ds.attrs.get("problem")
    idx = np.arange(min(n_samples, int(ds.sizes[SAMPLE])))
    source = ds.encoding.get("source")
    title = f"{problem} dataset" + (f" {Path(source).name}" if source else "") + \
        f", n = {ds.sizes[X]}"
    if problem not in PROBLEMS or get_problem(problem).ndim not in (1, 2):
        msg = (f"`ds` must be a dataset of a 1D or 2D problem ({', '.join(PROBLEMS)}); got "
               f"problem {problem!r}.")
        raise InputError(msg)
    spec = get_problem(problem)
    names = (spec.input_name, spec.output_name)
    fig = (_lines if spec.ndim == 1 else _images)(ds, idx, title, names)
    return save(fig, Path(out_dir) / f"{name}.png")
