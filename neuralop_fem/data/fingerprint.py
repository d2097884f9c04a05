"""Fingerprints of a dataset's values that survive floating-point rounding.

:func:`~neuralop_fem.data.provenance.variables_checksum` identifies a file's values bit for
bit. Regenerating a dataset from its seed reproduces those bits only where the arithmetic
does: numpy picks its loops for ``exp``, ``sin``, ``cos``, ``log`` and friends, and OpenBLAS
its kernels, by the CPU at run time (:mod:`neuralop_fem.data.float_paths`), and kernels of
different instruction sets round the last bit differently. A dataset regenerated on another
CPU holds the same numbers to within a few units of the last place, yet its checksum differs
(measured on an AVX-512 CPU against data written on an AVX2 one: the seed-0 Burgers data of
the reproduction, n = 8192, differs by 6.4e-16 in relative Frobenius norm, the 800-sample
Darcy data at 421 x 421 by 3.1e-15).

The *sketch* settles that case without the original file. For a variable ``X`` seen as an
``(N, P)`` matrix (N samples of P values) and fixed Gaussian vectors ``w`` (length N) and
``r_1 .. r_k`` (length P), drawn from :data:`SKETCH_SEED`, it stores

    ``norm = ||X||_F``  and  ``s_j = w^T X r_j / ||X||_F``.

Each ``s_j`` has unit variance over the draw of ``w`` and ``r_j``, and ``s_j(X) - s_j(Y)``
has the size of ``||X - Y||_F / ||X||_F``: :func:`sketch_difference` is therefore an estimate
of the relative difference of two datasets' values, about 1e-15 for a regeneration on another
CPU and of order one for other data (another seed, viscosity or sample order).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .provenance import field_names

if TYPE_CHECKING:  # pragma: no cover
    import xarray as xr

__all__ = [
    "SKETCH_METHOD",
    "SKETCH_SEED",
    "SKETCH_SIZE",
    "SAME_VALUES_RTOL",
    "sketch_difference",
    "values_difference",
    "values_sketch",
]

#: Name and version of the sketch; a change of its definition must change this name.
SKETCH_METHOD = "gaussian-projection-v1"
#: Seed of the projection vectors (fixed: recorded sketches depend on it).
SKETCH_SEED = 20261124
#: Number k of projections.
SKETCH_SIZE = 8
#: Largest relative difference still called "the same values up to rounding".
SAME_VALUES_RTOL = 1e-9


def _matrix_rows(data: xr.Dataset, name: str, start: int, stop: int) -> np.ndarray:
    block = np.asarray(data[name].isel(sample=slice(start, stop)).values, dtype=np.float64)
    return block.reshape(block.shape[0], -1)


def values_sketch(data: xr.Dataset, names: Sequence[str] | None = None, *, chunk: int = 64,
                  on_block: Callable[[str, np.ndarray], None] | None = None) -> dict[str, Any]:
    """The rounding-tolerant fingerprint of a dataset's field values.

    Parameters
    ----------
    data : xarray.Dataset
        A dataset with a ``sample`` dimension (lazily opened files are read ``chunk`` samples
        at a time, never whole).
    names : sequence of str, optional
        Variables to sketch; default: the problem's fields, as for
        :func:`~neuralop_fem.data.provenance.variables_checksum`.
    chunk : int
        Samples read at a time.
    on_block : callable, optional
        ``on_block(name, values)`` sees each block read, variable by variable in the order of
        ``names`` and in sample order (e.g. a
        :class:`~neuralop_fem.data.provenance.ValuesDigest`, for the checksum in the same pass).

    Returns
    -------
    dict
        JSON-ready: ``{"method", "seed", "size", "n_samples", "variables": {name: {"norm",
        "shape", "projections"}}}`` with ``projections`` the k values ``s_j`` of the module
        docstring and ``shape`` the per-sample shape.
    """
    if chunk < 1:
        msg = f"`chunk` must be a positive number of samples; got {chunk!r}."
        raise ValueError(msg)
    names = list(field_names(data) if names is None else names)
    n = int(data.sizes["sample"])
    weights = np.random.default_rng([SKETCH_SEED, 0, n]).standard_normal(n)
    variables: dict[str, Any] = {}
    for name in names:
        shape = [int(data.sizes[d]) for d in data[name].dims if d != "sample"]
        p = int(np.prod(shape))
        vectors = np.random.default_rng([SKETCH_SEED, 1, p]).standard_normal((p, SKETCH_SIZE))
        acc = np.zeros(SKETCH_SIZE)
        sq = 0.0
        for start in range(0, n, chunk):
            rows = _matrix_rows(data, name, start, start + chunk)
            if on_block is not None:
                on_block(name, rows)
            acc += weights[start:start + rows.shape[0]] @ (rows @ vectors)
            sq += float(np.sum(rows * rows))
        norm = float(np.sqrt(sq))
        projections = acc / norm if norm > 0 else acc
        variables[name] = {"norm": norm, "shape": shape,
                           "projections": [float(v) for v in projections]}
    return {"method": SKETCH_METHOD, "seed": SKETCH_SEED, "size": SKETCH_SIZE,
            "n_samples": n, "variables": variables}


def sketch_difference(a: Mapping[str, object], b: Mapping[str, object]) -> float:
    """Estimated relative difference of the values behind two sketches.

    The largest, over the variables, of the relative difference of the norms and of the
    absolute differences of the projections (module docstring). 0 for identical values,
    about 1e-15 for a regeneration rounded differently, of order 1 for other data.

    Raises
    ------
    ValueError
        If the sketches cannot be compared: another method, seed or size, another number
        of samples, other variables or per-sample shapes; the message names what differs.
    """
    va, vb = _checked_variables(a), _checked_variables(b)
    for key in ("method", "seed", "size", "n_samples"):
        if a.get(key) != b.get(key):
            msg = f"the sketches differ in {key}: {a.get(key)!r} and {b.get(key)!r}."
            raise ValueError(msg)
    if sorted(va) != sorted(vb):
        msg = f"the sketches cover other variables: {sorted(va)} and {sorted(vb)}."
        raise ValueError(msg)
    worst = 0.0
    for name in va:
        x, y = va[name], vb[name]
        if list(x["shape"]) != list(y["shape"]):
            msg = (f"variable {name!r} has per-sample shape {x['shape']} in one sketch and "
                   f"{y['shape']} in the other.")
            raise ValueError(msg)
        scale = max(x["norm"], y["norm"])
        if scale > 0:
            worst = max(worst, abs(x["norm"] - y["norm"]) / scale)
        diffs = np.abs(np.subtract(x["projections"], y["projections"]))
        worst = max(worst, float(diffs.max(initial=0.0)))
    return worst


def _checked_variables(sketch: object) -> Mapping[str, Any]:
    """The ``variables`` of a sketch, checked to have the layout :func:`values_sketch` writes
    (a sketch read from a file may have been edited or truncated)."""
    variables = sketch.get("variables") if isinstance(sketch, Mapping) else None
    if not isinstance(variables, Mapping):
        msg = f"a sketch must be a mapping with `variables`; got {str(sketch)[:80]!r}."
        raise ValueError(msg)
    for name, entry in variables.items():
        ok = (isinstance(entry, Mapping) and isinstance(entry.get("norm"), int | float)
              and isinstance(entry.get("shape"), list)
              and isinstance(entry.get("projections"), list)
              and all(isinstance(v, int | float) for v in entry["projections"])
              and len(entry["projections"]) == sketch.get("size"))
        if not ok:
            msg = (f"the sketch of variable {name!r} must hold a number `norm`, a list `shape` "
                   f"and `size` numbers `projections`; got {str(entry)[:80]!r}.")
            raise ValueError(msg)
    return variables


def values_difference(a: xr.Dataset, b: xr.Dataset, names: Sequence[str] | None = None, *,
                      chunk: int = 64) -> float:
    """Exact relative difference ``max_v ||A_v - B_v||_F / ||A_v||_F`` of two datasets.

    For two files at hand (the sketch is for one file and a record). ``names`` defaults to
    the problem's fields of ``a``.

    Raises
    ------
    ValueError
        If the datasets differ in sample count or in a variable's shape, naming it.
    """
    names = list(field_names(a) if names is None else names)
    n = int(a.sizes["sample"])
    if int(b.sizes["sample"]) != n:
        msg = f"the datasets hold {n} and {int(b.sizes['sample'])} samples."
        raise ValueError(msg)
    worst = 0.0
    for name in names:
        if a[name].shape != b[name].shape:
            msg = f"variable {name!r} has shape {a[name].shape} and {b[name].shape}."
            raise ValueError(msg)
        num = den = 0.0
        for start in range(0, n, chunk):
            x = _matrix_rows(a, name, start, start + chunk)
            y = _matrix_rows(b, name, start, start + chunk)
            num += float(np.sum((x - y) ** 2))
            den += float(np.sum(x * x))
        if den > 0:
            worst = max(worst, float(np.sqrt(num / den)))
        elif num > 0:
            worst = float("inf")
    return worst
