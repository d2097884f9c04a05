"""A trained operator learner behind the classical solver contract.

:class:`Surrogate` wraps a :class:`~neuralop_fem.models.NormalizedOperator` with the grid,
problem and provenance of its training run, so a simulation script can call
``surrogate.solve(inputs)`` exactly like ``BurgersSpectralSolver().solve(inputs)`` or
``DarcyFDSolver().solve(inputs)``: numpy or xarray in, the same form out, one sample or a
batch, float64 out. See ``docs/using_a_surrogate.md``.
"""

from __future__ import annotations

import os
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray
from scipy.ndimage import map_coordinates

from solvers.contract import SolveReport, as_batch
from solvers.problems import get_problem

from ..data.ood import OODReference, reference_from_dataset
from ..data.provenance import unknown_physics
from ..errors import InputError, ShapeError

__all__ = ["OODWarning", "Surrogate"]



class OODWarning(UserWarning):
    """Inputs look unlike the surrogate's training inputs (see :mod:`neuralop_fem.data.ood`)."""


def _default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


# -- resampling between grids ------------------------------------------------------------------


def resample_periodic(u: NDArray[np.float64], n: int) -> NDArray[np.float64]:
    """Resample ``(s, m)`` periodic samples on ``x_i = i/m`` to ``n`` points.

    Strided when ``m % n == 0``, otherwise periodic linear interpolation (second order).
    """
    m = u.shape[-1]
    if m == n:
        return u
    if m % n == 0:
        return np.ascontiguousarray(u[:, :: m // n])
    pos = np.arange(n) * (m / n)
    i0 = np.floor(pos).astype(np.int64)
    w = pos - i0
    return (1 - w) * u[:, i0 % m] + w * u[:, (i0 + 1) % m]


def resample_nodes(u: NDArray[np.float64], n: int, *, order: int = 1) -> NDArray[np.float64]:
    """Resample ``(s, m, m)`` node-grid samples (``x_i = i/(m-1)``) to ``n x n`` nodes.

    Strided when ``(m - 1) % (n - 1) == 0``, otherwise interpolation: ``order=1`` bilinear
    (second order for smooth fields), ``order=0`` nearest node (keeps the phase values of a
    piecewise-constant coefficient).
    """
    m = u.shape[-1]
    if m == n:
        return u
    if (m - 1) % (n - 1) == 0:
        step = (m - 1) // (n - 1)
        return np.ascontiguousarray(u[:, ::step, ::step])
    c = np.linspace(0.0, m - 1, n)
    ii, jj = np.meshgrid(c, c, indexing="ij")
    return np.stack([map_coordinates(s, [ii, jj], order=order, mode="nearest") for s in u])


class Surrogate:
    """A trained surrogate with the solver contract (``solve``, ``solve_with_report``).

    Parameters
    ----------
    operator : torch.nn.Module
        Maps (batch, *grid, 1) inputs in physical units to (batch, *grid, 1) predictions
        (e.g. a :class:`~neuralop_fem.models.NormalizedOperator`).
    problem : {"burgers", "darcy"}
    resolution : int
        The training grid: Burgers ``n`` points ``x_i = i/n``; Darcy ``n x n`` nodes.
    run_info : dict
        Contents of the run's ``run.json`` (provenance, errors, ...); may be empty.
    device : str or torch.device or None
        None: CUDA when available, else CPU.
    batch_size : int
        Samples per forward pass; bounds the memory (activations ~ batch_size * n^d * width).
    ood_reference : OODReference or None
        Training-input statistics for the out-of-distribution check (None: no check).
    """

    def __init__(self, operator: torch.nn.Module, *, problem: str, resolution: int,
                 run_info: dict[str, Any] | None = None, device: Any = None,
                 batch_size: int = 16, ood_reference: OODReference | None = None,
                 name: str = "surrogate") -> None:
        self.spec = get_problem(problem)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            msg = f"`batch_size` must be an int >= 1; got {batch_size!r}."
            raise InputError(msg)
        self.device = torch.device(device) if device is not None else _default_device()
        self.operator = operator.to(self.device).eval()
        self.problem = problem
        self.resolution = int(resolution)
        self.run_info = dict(run_info or {})
        self.batch_size = batch_size
        self.ood_reference = ood_reference
        self.name = name
        self.last_ood_score: NDArray[np.float64] | None = None

    # -- loading -----------------------------------------------------------------------------

    @classmethod
    def load(cls, run_dir: str | os.PathLike[str], *, device: Any = None,
             batch_size: int = 16) -> Surrogate:
        """Load the selected (best) model of a training run directory.

        Reads ``run_dir/run.json`` and ``run_dir/best.pt`` through
        :func:`neuralop_fem.training.load_trained`. The out-of-distribution reference is taken
        from ``run.json`` (``ood_reference``) or, failing that, computed from up to 256
        training inputs of the dataset named in the provenance, if that file still exists.

        Raises
        ------
        InputError
            If ``run_dir`` is not a run directory.
        """
        path = Path(run_dir)
        if not (path / "run.json").is_file():
            msg = f"`run_dir` must be a training run directory with run.json; got {os.fspath(path)!r}."
            raise InputError(msg)
        dev = torch.device(device) if device is not None else _default_device()
        operator, info = _load_operator(path, dev)
        if info.get("task", "") not in ("", "burgers", "darcy"):
            msg = (f"`run_dir` must hold a forward burgers/darcy model; got task "
                   f"{info.get('task')!r}, which Surrogate does not serve.")
            raise InputError(msg)
        problem = str(_lookup(info, "task", "problem"))
        resolution = int(_lookup(info, "resolution"))
        ood = None
        if isinstance(info.get("ood_reference"), dict):
            ood = OODReference.from_dict(info["ood_reference"])
        else:
            ood = _ood_from_provenance(info, problem)
        return cls(operator, problem=problem, resolution=resolution, run_info=info, device=dev,
                   batch_size=batch_size, ood_reference=ood, name=f"surrogate {path.name}")

    # -- properties --------------------------------------------------------------------------

    @property
    def grid(self) -> NDArray[np.float64]:
        """Grid coordinates: Burgers ``i/n`` (n,), Darcy ``i/(n-1)`` (n,) along each axis."""
        n = self.resolution
        return self.spec.coordinates(n)

    @property
    def provenance(self) -> dict[str, Any]:
        """Attributes of the training dataset (PDE, GRF, solver settings), as recorded."""
        data = self.run_info.get("data", self.run_info.get("dataset", {}))
        attrs = data.get("attrs", {}) if isinstance(data, dict) else {}
        return dict(attrs)

    @property
    def validation_error(self) -> float:
        """Mean relative L2 error on the validation split (NaN if not recorded)."""
        return float(_lookup(self.run_info, "best_val_rel_l2", "val_error", default=np.nan))

    @property
    def test_error(self) -> float:
        """Mean relative L2 error on the test split (NaN if not recorded)."""
        return float(_lookup(self.run_info, "test_rel_l2_best", "test_error", default=np.nan))

    @property
    def config(self) -> dict[str, Any]:
        """JSON-serialisable description (problem, resolution, batch size, device)."""
        return {"problem": self.problem, "resolution": self.resolution,
                "batch_size": self.batch_size, "device": str(self.device)}

    def reference_solver(self) -> Any:
        """The classical solver that produced the training labels, rebuilt from provenance.

        Falls back to the problem's default solver (:func:`solvers.problems.get_problem`)
        for data without a recorded solver (see
        :func:`~neuralop_fem.data.provenance.solver_from_record`).

        Raises
        ------
        DatasetError
            When the training data were imported without their physical parameters
            (viscosity, final time, forcing): no solver is picked with guessed values.
        """
        from ..data.provenance import solver_from_record

        solver = solver_from_record(self.provenance, self.problem, source="run.json")
        return self.spec.make_solver() if solver is None else solver

    # -- the solver contract -----------------------------------------------------------------

    def solve(self, inputs: Any, *, initial_guess: None = None, resample: bool = False) -> Any:
        """Predict the solution for each input sample; see :meth:`solve_with_report`."""
        return self.solve_with_report(inputs, initial_guess=initial_guess, resample=resample)[0]

    def solve_with_report(self, inputs: Any, *, initial_guess: None = None,
                          resample: bool = False) -> tuple[Any, SolveReport]:
        """Predict the solution for each input sample.

        Parameters
        ----------
        inputs : array or xarray.DataArray
            Burgers: ``u0`` of shape (n_samples, n) / (n,), dims ("sample", "x");
            Darcy: ``a`` of shape (n_samples, n, n) / (n, n), dims ("sample", "x", "y"), > 0.
        initial_guess
            Must be None (accepted for the solver contract).
        resample
            Accept inputs on another grid: resampled to the model grid (strided where
            possible; else linear for Burgers, nearest node for the Darcy coefficient) and
            the prediction back to the input grid (linear / bilinear). Off by default:
            a grid mismatch raises.

        Returns
        -------
        u
            Float64 prediction in the form of ``inputs`` (DataArray named ``"u"``).
        report : SolveReport
            ``iterations`` 0, ``residual`` NaN (Burgers) or the relative residual
            ``||b - A u||/||b||`` of the training solver's discrete Darcy system, and the
            wall time per sample (forward passes split evenly).

        Raises
        ------
        ShapeError
            Input dimensionality of another problem, or (without ``resample``) another grid.
        InputError
            NaN/inf, a non-positive coefficient, or an ``initial_guess``.

        Warns
        -----
        OODWarning
            When inputs look unlike the training inputs (see :mod:`neuralop_fem.data.ood`).
        """
        if initial_guess is not None:
            msg = f"`initial_guess` must be None for a surrogate; got {type(initial_guess).__name__}."
            raise InputError(msg)
        name, core = self.spec.input_name, self.spec.dims
        ndim = np.ndim(getattr(inputs, "values", inputs))
        if ndim not in (len(core), len(core) + 1):
            msg = (f"`{name}` must be {self.problem} input with shape (n_samples, "
                   f"{', '.join(core)}) or ({', '.join(core)},); got a {ndim}-D array (shape "
                   f"{np.shape(getattr(inputs, 'values', inputs))}), the input of another "
                   f"problem. This surrogate was trained on {self.problem} at resolution "
                   f"{self.resolution}.")
            raise ShapeError(msg)
        batch = as_batch(inputs, name=name, core_dims=core)
        values = batch.values
        if len(set(values.shape[1:])) > 1:
            msg = f"`{name}` must be on a square grid; got shape {values.shape[1:]}."
            raise ShapeError(msg)
        if self.spec.positive_input and (values <= 0).any():
            msg = f"`{name}` must be > 0 everywhere; got minimum {values.min()!r}."
            raise InputError(msg)
        n_in = values.shape[-1]
        if n_in != self.resolution and not resample:
            want = (self.resolution,) * len(core)
            msg = (f"`{name}` must be on the model grid {want} (the training resolution); got "
                   f"{values.shape[1:]}. Pass resample=True to resample to the model grid and back.")
            raise ShapeError(msg)
        t0 = time.perf_counter()
        model_in = self._to_model_grid(values)
        self._check_ood(model_in)
        pred = self._predict(model_in)
        pred = self._from_model_grid(pred, n_in)
        elapsed = time.perf_counter() - t0
        n_s = len(values)
        residual = np.full(n_s, np.nan)
        if self.spec.linear_system and not unknown_physics(self.provenance, self.problem):
            residual = _darcy_residual(self.reference_solver(), values, pred)
        report = SolveReport(iterations=np.zeros(n_s, dtype=np.int64), residual=residual,
                             solve_time=np.full(n_s, elapsed / n_s), method=self.name)
        return batch.restore(pred, name="u"), report

    def ood_score(self, inputs: Any) -> NDArray[np.float64]:
        """Squared Mahalanobis distance of each input's statistics (NaN without a reference)."""
        batch = as_batch(inputs, name=self.spec.input_name, core_dims=self.spec.dims)
        if self.ood_reference is None:
            return np.full(len(batch.values), np.nan)
        return self.ood_reference.score(batch.values)

    # -- internals ---------------------------------------------------------------------------

    def _to_model_grid(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        if self.spec.periodic:
            return resample_periodic(values, self.resolution)
        return resample_nodes(values, self.resolution, order=0)

    def _from_model_grid(self, pred: NDArray[np.float64], n: int) -> NDArray[np.float64]:
        if pred.shape[-1] == n:
            return pred
        if self.spec.periodic:
            return resample_periodic(pred, n)
        return resample_nodes(pred, n, order=1)

    def _check_ood(self, values: NDArray[np.float64]) -> None:
        if self.ood_reference is None:
            self.last_ood_score = None
            return
        score, flagged, message = self.ood_reference.flags(values)
        self.last_ood_score = score
        if flagged.any():
            warnings.warn(f"{self.name}: {message}; predictions may be unreliable.",
                          OODWarning, stacklevel=3)

    def _predict(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        dtype = next(self.operator.parameters()).dtype
        out = []
        with torch.no_grad():
            for start in range(0, len(values), self.batch_size):
                x = torch.from_numpy(values[start:start + self.batch_size, ..., None])
                y = self.operator(x.to(device=self.device, dtype=dtype))
                out.append(y[..., 0].to("cpu", torch.float64).numpy())
        return np.concatenate(out, axis=0)


def _darcy_residual(solver: Any, a: NDArray[np.float64], u: NDArray[np.float64]) -> NDArray[np.float64]:
    from .warmstart import relative_residual

    return relative_residual(solver, a, u)


_MISSING = object()


def _lookup(info: dict[str, Any], *keys: str, default: Any = _MISSING) -> Any:
    """First of ``keys`` found in ``info`` or its ``data``/``metrics``/``result`` sub-dicts."""
    places = [info] + [info[k] for k in ("data", "dataset", "metrics", "result", "results")
                       if isinstance(info.get(k), dict)]
    for key in keys:
        for place in places:
            if key in place and place[key] is not None:
                return place[key]
    if default is _MISSING:
        msg = f"run.json must record {keys[0]!r}; found keys {sorted(info)}."
        raise InputError(msg)
    return default


def _load_operator(path: Path, device: torch.device) -> tuple[torch.nn.Module, dict[str, Any]]:
    """(operator, run_info) through the trainer's :func:`~neuralop_fem.training.load_trained`."""
    from ..training.checkpoint import load_trained

    operator, info = load_trained(path, map_location=device)
    return operator, dict(info)


def _ood_from_provenance(info: dict[str, Any], problem: str) -> OODReference | None:
    """Fit the OOD reference on the training inputs of the recorded dataset, if present."""
    path = _lookup(info, "dataset_path", "path", default=None)
    if not isinstance(path, str) or not Path(path).is_file():
        return None
    from ..data import load_dataset

    split = _lookup(info, "splits", "split", default={})
    train = split.get("train") if isinstance(split, dict) else None
    return reference_from_dataset(load_dataset(path), train, problem)
