"""The solver contract shared by every classical solver and by surrogates (public).

:class:`Solver` is the contract as a runtime-checkable protocol: ``solve(inputs)`` accepts
a numpy array or an :class:`xarray.DataArray` with a leading
``sample`` dimension (or a single sample without it) and returns the solution in the
same form: numpy in, numpy out; xarray in, xarray out with the same dims and coords.

:func:`as_batch` validates the input and turns it into a float64 array of shape
``(n_samples, *core_shape)``; the :class:`Batch` it returns knows how to put a result
back into the caller's form. A DataArray's spatial dimensions are matched by name, so
``(sample, y, x)`` (the order of files, as :func:`xarray.open_dataset` returns them) works as
well as ``(sample, x, y)``, and the result comes back in the caller's order; a numpy array has
no names and is taken as ``(sample, x, y)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeAlias, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .checks import check_real
from .errors import InputError, ShapeError

if TYPE_CHECKING:  # pragma: no cover
    import xarray as xr

__all__ = [
    "SAMPLE_DIM",
    "Batch",
    "Report",
    "SolveReport",
    "Solver",
    "SolverInput",
    "SolverOutput",
    "SupportsSolve",
    "as_batch",
    "check_finite",
    "check_positive",
    "ordered_values",
]

#: Name of the leading batch dimension of every solver input and output.
SAMPLE_DIM = "sample"

#: What ``solve`` accepts: an array (anything :func:`numpy.asarray` takes) or an
#: :class:`xarray.DataArray`, with a leading ``sample`` dimension or as one sample.
SolverInput: TypeAlias = "ArrayLike | xr.DataArray"
#: What ``solve`` returns: a numpy array for array input, a DataArray for DataArray input.
SolverOutput: TypeAlias = "NDArray[np.float64] | xr.DataArray"


@runtime_checkable
class Solver(Protocol):
    """What every classical solver and every surrogate answers (the solver contract).

    ``solve(inputs, *, initial_guess=None)`` takes a numpy array or an
    :class:`xarray.DataArray` with a leading ``sample`` dimension (or one sample without it)
    and returns the solution in the same form; ``solve_with_report`` returns
    ``(solution, report)`` with per-sample diagnostics (:class:`SolveReport` or a subclass
    with the same ``iterations``, ``residual`` and ``solve_time`` fields). Implementations
    also name their problem in a ``problem`` attribute (a key of
    :func:`solvers.problems.get_problem`), which generic code such as ``compare`` reads.

    ``isinstance(obj, Solver)`` checks that both methods exist (not their signatures).
    """

    def solve(
        self, inputs: SolverInput, /, *, initial_guess: SolverInput | None = None
    ) -> SolverOutput:
        """The solution for each input sample, in the form of ``inputs``."""
        ...

    def solve_with_report(
        self, inputs: SolverInput, /, *, initial_guess: SolverInput | None = None
    ) -> tuple[SolverOutput, Report]:
        """``(solution, report)``: :meth:`solve` plus per-sample diagnostics."""
        ...


class SupportsSolve(Protocol):
    """The least a solver-like object has: ``solve(inputs)`` (for type annotations; every
    :class:`Solver` is one)."""

    def solve(self, inputs: SolverInput, /) -> SolverOutput:
        """The solution for each input sample, in the form of ``inputs``."""
        ...


class Report(Protocol):
    """The per-sample diagnostics every solver reports: :class:`SolveReport`, or a class with
    the same fields such as :class:`~solvers.InverseSolveReport` (for type annotations)."""

    @property
    def iterations(self) -> NDArray[np.int64]: ...

    @property
    def residual(self) -> NDArray[np.float64]: ...

    @property
    def solve_time(self) -> NDArray[np.float64]: ...


@dataclass(frozen=True, kw_only=True)
class SolveReport:
    """Per-sample diagnostics of one ``solve`` call.

    Attributes
    ----------
    iterations : (n_samples,) int array
        Linear-solver iterations (Darcy; 1 for a direct solve) or time steps (Burgers).
    residual : (n_samples,) float array
        Final relative residual ``||b - A u|| / ||b||`` of the discrete system (Darcy), the
        final relative data misfit (inverse Darcy), or a spatial resolution indicator
        (Burgers spectral solver: the relative norm of the top fifth of the resolved spectrum
        at the final time, not an error bound; NaN where none is computed).
    solve_time : (n_samples,) float array
        Wall time in seconds attributed to each sample (batched work is split evenly).
    method : str
        Human-readable name of the discretisation and linear solver.
    """

    iterations: NDArray[np.int64]
    residual: NDArray[np.float64]
    solve_time: NDArray[np.float64]
    method: str = ""

    def __post_init__(self) -> None:
        n = len(self.iterations)
        if len(self.residual) != n or len(self.solve_time) != n:
            msg = (
                "SolveReport fields must have one entry per sample; got "
                f"{len(self.iterations)}, {len(self.residual)}, {len(self.solve_time)}."
            )
            raise ValueError(msg)

    @classmethod
    def concatenate(cls, reports: Sequence[SolveReport]) -> SolveReport:
        """Join the reports of consecutive chunks of samples."""
        if not reports:
            msg = "`reports` must hold at least one SolveReport; got none."
            raise InputError(msg)
        return cls(
            iterations=np.concatenate([r.iterations for r in reports]),
            residual=np.concatenate([r.residual for r in reports]),
            solve_time=np.concatenate([r.solve_time for r in reports]),
            method=reports[0].method,
        )


@dataclass(frozen=True)
class Batch:
    """A validated input batch and the recipe to return results in the caller's form.

    Attributes
    ----------
    values : (n_samples, *core_shape) float64 array
    single : bool
        True when the caller passed one sample without the ``sample`` dimension.
    template : xarray.DataArray or None
        The caller's DataArray (for dims, coords and attrs), None for numpy input.
    core_dims : tuple of str
        The spatial dims of ``values``, in its order (the caller's may differ).
    """

    values: NDArray[np.float64]
    single: bool
    template: xr.DataArray | None = field(default=None, repr=False)
    core_dims: tuple[str, ...] = ()

    def restore(
        self,
        result: NDArray[np.float64],
        *,
        name: str | None = None,
        extra_dims: Sequence[tuple[str, NDArray[np.float64]]] = (),
        attrs: Mapping[str, object] | None = None,
    ) -> SolverOutput:
        """Return ``result`` (shape ``(n_samples, *extra, *core)``) in the caller's form.

        Parameters
        ----------
        result
            Batched result; extra dimensions (e.g. ``time``) come right after ``sample``.
        name
            Name of the returned DataArray (xarray input only).
        extra_dims
            ``(dim_name, coordinate_values)`` for each extra dimension, in order.
        attrs
            Attributes of the returned DataArray (xarray input only).
        """
        out = result[0] if self.single else result
        if self.template is None:
            return out
        import xarray as xr

        tmpl = self.template
        core_dims = list(self.core_dims) or [d for d in tmpl.dims if d != SAMPLE_DIM]
        dims = ([] if self.single else [SAMPLE_DIM]) + [d for d, _ in extra_dims] + core_dims
        coords = {k: v for k, v in tmpl.coords.items() if set(v.dims) <= set(dims)}
        for d, values in extra_dims:
            coords[d] = values
        made = xr.DataArray(out, dims=dims, coords=coords, name=name, attrs=attrs or {})
        return self.in_caller_order(made)

    def in_caller_order(self, out: xr.DataArray) -> xr.DataArray:
        """``out`` (dims ``([sample,] [extra,] *core)``) with its spatial dims in the order of
        the caller's DataArray (unchanged for numpy input or other dims)."""
        if self.template is None:
            return out
        core = [d for d in self.template.dims if d != SAMPLE_DIM]
        if not set(core) <= set(out.dims):
            return out
        return out.transpose(*(d for d in out.dims if d not in core), *core)


def as_batch(
    inputs: SolverInput,
    *,
    name: str,
    core_dims: Sequence[str],
    core_shape: Sequence[int | None] | None = None,
) -> Batch:
    """Validate solver input and return it as a float64 batch.

    Parameters
    ----------
    inputs : array_like or xarray.DataArray
        Shape ``(n_samples, *core)`` or ``core`` for one sample. A DataArray must have dims
        ``("sample", *core_dims)`` or ``core_dims``, the spatial ones in any order (it is
        transposed by name to ``core_dims``' order).
    name
        Argument name used in error messages (e.g. ``"u0"`` or ``"a"``).
    core_dims
        Names of the spatial dimensions, e.g. ``("x",)`` or ``("x", "y")``.
    core_shape
        Required size of each spatial dimension, None for any size.

    Raises
    ------
    InputError
        For non-real or non-floating dtypes, NaN or infinite values, or empty input.
    ShapeError
        For the wrong number of dimensions, wrong dimension names, or wrong sizes.
    """
    core_dims = tuple(core_dims)
    ndim = len(core_dims)
    template = None
    if hasattr(inputs, "dims") and hasattr(inputs, "coords"):
        dims = tuple(inputs.dims)
        order = _core_order(dims, core_dims)
        if order is None:
            msg = (
                f"`{name}` must have dims {(SAMPLE_DIM, *core_dims)} or {core_dims} (the "
                f"spatial ones in any order); got {dims}. Use .rename(...) or "
                ".transpose(...) to match."
            )
            raise ShapeError(msg)
        template = inputs
        array = np.asarray(inputs.transpose(*order).values)
    else:
        array = np.asarray(inputs)
    if array.dtype.kind not in "f":
        msg = (
            f"`{name}` must be a real floating-point array; got dtype {array.dtype}. "
            "Convert explicitly, e.g. inputs.astype(np.float64)."
        )
        raise InputError(msg)
    if array.ndim not in (ndim, ndim + 1):
        msg = (
            f"`{name}` must have shape (n_samples, {', '.join(core_dims)}) or "
            f"({', '.join(core_dims)},) for one sample; got shape {array.shape}."
        )
        raise ShapeError(msg)
    single = array.ndim == ndim
    batch = array[None] if single else array
    if batch.shape[0] == 0:
        msg = f"`{name}` must hold at least one sample; got shape {array.shape}."
        raise InputError(msg)
    if core_shape is not None:
        for dim, want, got in zip(core_dims, core_shape, batch.shape[1:], strict=True):
            if want is not None and want != got:
                msg = (
                    f"`{name}` must have {want} points along '{dim}'; got {got} "
                    f"(shape {array.shape})."
                )
                raise ShapeError(msg)
    check_finite(batch, name=name)
    return Batch(np.ascontiguousarray(batch, dtype=np.float64), single, template, core_dims)


def _core_order(dims: tuple, core_dims: Sequence[str]) -> list | None:
    """``dims`` with the spatial ones in the order of ``core_dims`` (the leading ``sample``
    kept), or None when they are not ``core_dims`` in some order."""
    head = list(dims[:1]) if dims[:1] == (SAMPLE_DIM,) else []
    rest = list(dims[len(head):])
    if len(rest) != len(core_dims) or set(rest) != set(core_dims):
        return None
    return [*head, *core_dims]


def ordered_values(values: SolverInput, *, core_dims: Sequence[str],
                   name: str = "values") -> NDArray[np.generic]:
    """``values`` as a numpy array, a DataArray read by its dim names: the one reading of
    dims of the fields that go with a solver's input (starts, references, noise fields).

    A DataArray whose dims are ``("sample", *core_dims)`` or ``core_dims``, the spatial ones
    in any order, is transposed by name to that order; one with other dims is refused (its
    axes would otherwise be taken by position, ``(sample, y, x)`` as ``(x, y)``). An array is
    taken as it is.

    Raises
    ------
    ShapeError
        A DataArray with other dims; the message names ``name`` (the argument).

    >>> import xarray as xr
    >>> da = xr.DataArray(np.arange(6.0).reshape(2, 3), dims=("y", "x"))
    >>> ordered_values(da, core_dims=("x", "y")).shape
    (3, 2)
    """
    if hasattr(values, "dims") and hasattr(values, "transpose"):
        dims = tuple(values.dims)
        order = _core_order(dims, core_dims)
        if order is None:
            core = tuple(core_dims)
            msg = (f"`{name}` must have dims {(SAMPLE_DIM, *core)} or {core} (the spatial "
                   f"ones in any order); got {dims}. Use .rename(...) or .transpose(...) to "
                   "match.")
            raise ShapeError(msg)
        return np.asarray(values.transpose(*order).values)
    return np.asarray(values)


def check_finite(values: NDArray[np.generic], *, name: str) -> None:
    """Raise :class:`InputError` naming the first sample that holds NaN or inf."""
    bad = ~np.isfinite(values)
    if bad.any():
        first = np.argwhere(bad)[0]
        msg = (
            f"`{name}` must be finite; got {np.count_nonzero(bad)} NaN/inf value(s), "
            f"the first at index {tuple(int(i) for i in first)}."
        )
        raise InputError(msg)


def check_positive(value: float, *, name: str) -> float:
    """Return ``float(value)`` if it is a finite real number > 0 (not a bool or a string),
    else raise :class:`InputError` (:func:`solvers.checks.check_real`)."""
    return check_real(value, name=name, low=0.0)
