"""A trained operator learner behind the classical solver contract.

:class:`Surrogate` wraps a :class:`~neuralop_fem.models.NormalizedOperator` with the grid,
problem and provenance of its training run, so a simulation script can call
``surrogate.solve(inputs)`` exactly like ``BurgersSpectralSolver().solve(inputs)``,
``DarcyFDSolver().solve(inputs)`` or ``DarcyInverseSolver().solve(u_obs)``: numpy or xarray
in, the same form out, one sample or a batch, float64 out. Forward runs (Burgers, Darcy)
predict the solution on the input grid; inverse runs (``darcy-inverse``) predict the
coefficient on the model's coarse grid, or interpolated to the input grid with
``resample=True``. See ``docs/using_a_surrogate.md``.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from solvers.checks import check_int, plain
from solvers.contract import Batch, Solver, SolveReport, SolverInput, SolverOutput, as_batch
from solvers.problems import get_problem

from ..data.ood import OODReference
from ..data.provenance import solver_from_record
from ..errors import InputError, RunDirectoryError
from ..models.size import check_resolution
from ..runs import RunDir, RunRecord
from ..zoo_entries import PREFIX, entry_dir
from .diagnostics import prediction_residual
from .inference import (
    CPU_BATCH,
    check_finite_prediction,
    check_precision,
    cuda_batch_size,
    inference_forward,
    predict,
)
from .input_shape import InputShape
from .module_adapter import surrogate_from_module
from .observations import (
    load_test_split,
    noisy_observations,
    relative_noise_level,
    warn_if_sign_flipped,
)
from .resample import resample_nodes, resample_output, resample_periodic
from .run_record import as_record, load_operator, ood_from_provenance, required

__all__ = ["OODWarning", "Surrogate", "resample_nodes", "resample_periodic"]


class OODWarning(UserWarning):
    """Inputs look unlike the surrogate's training inputs (see :mod:`neuralop_fem.data.ood`)."""


def _default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Surrogate:
    """A trained surrogate with the solver contract (``solve``, ``solve_with_report``).

    Parameters
    ----------
    operator : torch.nn.Module
        Maps ``(batch, *grid, 1)`` inputs in physical units to ``(batch, *grid, 1)``
        predictions (e.g. a :class:`~neuralop_fem.models.NormalizedOperator`).
    problem : str
        A problem of :func:`solvers.problems.get_problem`: ``"burgers"``, ``"darcy"``,
        ``"darcy-inverse"``.
    resolution : int
        The training (input) grid: Burgers ``n`` points ``x_i = i/n``; Darcy and the inverse
        problem ``n x n`` nodes.
    output_resolution : int or None
        The grid of the model's output: the input grid for forward problems (None), the
        coarse ``n_c x n_c`` node grid of an inverse model (36 for 141 in the paper).
    run_info : RunRecord or dict
        The run's record (provenance, errors, ...; a dict: the contents of a ``run.json``);
        may be empty. Kept as :attr:`record`; :attr:`run_info` gives it as a dict.
    device : str or torch.device or None
        None: CUDA when available, else CPU.
    batch_size : int or None
        Samples per forward pass; bounds the memory (activations ~ batch_size * n^d * width).
        None: follow the device's memory (CUDA: the largest power of two up to 1024 whose
        activations, measured on a probe pass, fill at most half the free memory; the CPU:
        :data:`~neuralop_fem.surrogate.inference.CPU_BATCH`, 16).
    precision : {"float32", "bf16", "tf32"}
        Arithmetic of the forward pass (:mod:`neuralop_fem.surrogate.inference`): the model's
        own float32 (default), bfloat16 autocast with the float32 parts kept, or (CUDA only)
        TF32 matrix products. Each one's accuracy cost on the zoo's models is in
        ``benchmarks/results/inference.md``.
    ood_reference : OODReference or None
        Training-input statistics for the out-of-distribution check (None: no check).

    Inputs of any real dtype are taken as float64 (the solver contract), cast to the model's
    :attr:`dtype` for the forward pass, and predictions come back as float64.
    """

    def __init__(self, operator: torch.nn.Module, *, problem: str, resolution: int,
                 run_info: RunRecord | Mapping[str, object] | None = None,
                 device: str | torch.device | None = None,
                 batch_size: int | None = None, ood_reference: OODReference | None = None,
                 name: str = "surrogate", output_resolution: int | None = None,
                 precision: str = "float32") -> None:
        self.spec = get_problem(problem)
        self.output_resolution = int(resolution if output_resolution is None
                                     else output_resolution)
        self.device = torch.device(device) if device is not None else _default_device()
        self.operator = operator.to(self.device).eval()
        self.problem = problem
        self.resolution = int(resolution)
        #: The run's record (``run.json``; empty for a model not trained here).
        self.record: RunRecord = as_record(run_info)
        self._batch_size: int | None = None
        self.batch_size = batch_size  # type: ignore[assignment]
        self._precision = "float32"
        self._forward: torch.nn.Module = self.operator
        self.precision = precision
        self.ood_reference = ood_reference
        self.name = name
        self.last_ood_score: NDArray[np.float64] | None = None
        #: The model card of a zoo model (``card.json``, :mod:`neuralop_fem.zoo`); else None.
        self.card: dict[str, Any] | None = None

    # -- loading -----------------------------------------------------------------------------

    @classmethod
    def load(cls, run_dir: str | os.PathLike[str], *, device: str | torch.device | None = None,
             batch_size: int | None = None, precision: str = "float32") -> Surrogate:
        """Load the selected (best) model of a training run directory (or ``"zoo:NAME"``).

        Reads ``run_dir/run.json`` and ``run_dir/best.pt`` through
        :func:`neuralop_fem.training.load_trained`. The out-of-distribution reference is taken
        from ``run.json`` (``ood_reference``) or, failing that, computed from up to 256
        training inputs of the dataset named in the provenance, if that file still exists.

        Raises
        ------
        InputError
            If ``run_dir`` is not a run directory or holds the model of another task.
        RunDirectoryError
            (an InputError) If ``run.json`` or ``best.pt`` is missing, unreadable, damaged or
            holds values out of range; the message names the file and the field.
        """
        run = RunDir.resolve(run_dir)  # zoo:NAME -> the zoo entry's directory
        path = run.path
        dev = torch.device(device) if device is not None else _default_device()
        operator, record = load_operator(run, dev)
        problem = str(required(record, record.task, "task"))
        get_problem(problem)  # a registered problem, else a clear error
        resolution = check_resolution(required(record, record.resolution, "resolution"),
                                      error=RunDirectoryError,
                                      source=f"{run.run_json}: field `resolution`")
        output = check_resolution(record.output_resolution or resolution,
                                  error=RunDirectoryError,
                                  source=f"{run.run_json}: field `output_resolution`")
        ood = (OODReference.from_dict(dict(record.ood_reference))
               if record.ood_reference is not None else ood_from_provenance(record, problem))
        sur = cls(operator, problem=problem, resolution=resolution, run_info=record, device=dev,
                  batch_size=batch_size, ood_reference=ood,
                  name=f"{record.preset or problem} surrogate ({path.name})",
                  output_resolution=int(output), precision=precision)
        sur.card = run.card()
        return sur

    @classmethod
    def pretrained(cls, name: str, *, zoo_dir: str | os.PathLike[str] | None = None,
                   device: str | torch.device | None = None, batch_size: int | None = None,
                   precision: str = "float32") -> Surrogate:
        """A model of the zoo shipped with the package (``neuralop-fem zoo`` lists them), or
        of the zoo directory ``zoo_dir`` (``neuralop-fem zoo add --zoo-dir DIR``).

        ``Surrogate.pretrained("burgers-fno")`` (or ``"zoo:burgers-fno"``) is
        ``Surrogate.load("zoo:burgers-fno")``; its model card is :attr:`card` (how the data
        and the model were made, the test errors).

        Raises
        ------
        InputError
            For an unknown name; the message lists the available models.
        """
        name = name.removeprefix(PREFIX) if isinstance(name, str) else name
        sur = cls.load(entry_dir(name, zoo_dir), device=device, batch_size=batch_size,
                       precision=precision)
        sur.name = f"{name} (zoo)"
        return sur

    #: ``Surrogate.from_module(module, *, problem, resolution, layout, ...)``: any torch module.
    from_module = classmethod(surrogate_from_module)

    # -- properties --------------------------------------------------------------------------

    @property
    def grid(self) -> NDArray[np.float64]:
        """Input grid coordinates: Burgers ``i/n`` (n,), Darcy ``i/(n-1)`` (n,) along each axis."""
        return self.spec.coordinates(self.resolution)

    @property
    def output_grid(self) -> NDArray[np.float64]:
        """Coordinates of the model's output grid along each axis (the input grid, or the
        coarse grid of an inverse model)."""
        return self.spec.coordinates(self.output_resolution)

    @property
    def noise(self) -> float:
        """The run's training noise factor ``epsilon`` (inverse problem; the paper's
        convention: the input gets ``noise * (sigma(x) + 1e-5) * N(0, 1)``, ``sigma`` the
        pointwise training std; :mod:`neuralop_fem.surrogate.observations`)."""
        value = self.record.train_setting.get("noise", 0.0)
        return float(value) if isinstance(value, int | float) else 0.0

    def noise_std(self) -> NDArray[np.float64] | None:
        """The pointwise training standard deviation ``sigma(x) + eps`` of the inputs on the
        model grid, from the run's input normaliser (None when the model has none)."""
        norm = getattr(self.operator, "input_normalizer", None)
        if norm is None:
            return None
        std = norm.std.detach().to("cpu", torch.float64).numpy()[..., 0]
        return std + float(norm.eps)

    def relative_noise_level(self, inputs: SolverInput) -> NDArray[np.float64]:
        """Per-sample relative noise level ``||noise|| / ||u||`` (interior nodes) that the run's
        training noise (:attr:`noise`, paper convention) corresponds to for ``inputs``.

        This is the level a classical inversion's discrepancy principle needs
        (:class:`solvers.DarcyInverseSolver`, ``noise_level``). Inputs on another square node
        grid use ``sigma`` interpolated bilinearly to it (both norms are over that grid's
        interior nodes, so the ratio does not depend on the grid).
        """
        return relative_noise_level(self, inputs)

    def noisy_observations(self, u: SolverInput, *, sample_ids: object = None,
                           rng: np.random.Generator | None = None) -> SolverOutput:
        """``u`` with this run's training noise: :func:`.observations.noisy_observations`."""
        return noisy_observations(self, u, sample_ids=sample_ids, rng=rng)  # type: ignore[arg-type]

    def test_split(self, data: str | os.PathLike[str] | None = None, *,
                   max_samples: int | None = None) -> tuple[Any, Any]:
        """The run's test samples on the model grid: :func:`.observations.load_test_split`."""
        return load_test_split(self, data, max_samples=max_samples)

    @property
    def provenance(self) -> dict[str, Any]:
        """Attributes of the training dataset (PDE, GRF, solver settings), as recorded."""
        data = self.record.data
        return {} if data is None or data.attrs is None else dict(data.attrs)

    @property
    def validation_error(self) -> float:
        """Mean relative L2 error on the validation split (NaN if not recorded)."""
        value = self.record.best_val_rel_l2
        return float(np.nan if value is None else value)

    @property
    def test_error(self) -> float:
        """Mean relative L2 error on the test split (NaN if not recorded)."""
        value = self.record.test_rel_l2_best
        return float(np.nan if value is None else value)

    @property
    def run_info(self) -> dict[str, Any]:
        """The run's record as the contents of a ``run.json`` (a fresh dict)."""
        return self.record.to_dict()

    @property
    def config(self) -> dict[str, Any]:
        """JSON-serialisable description (problem, resolution, batch size, device, precision)."""
        return {"problem": self.problem, "resolution": self.resolution,
                "batch_size": self.batch_size, "device": str(self.device),
                "precision": self.precision}

    @property
    def batch_size(self) -> int:
        """Samples per forward pass: the one set, else the device's automatic one (computed
        on first use; see the class's ``batch_size``)."""
        if self._batch_size is None:
            if self.device.type == "cuda":
                sample = torch.ones((1, *[self.resolution] * len(self.spec.dims), 1),
                                    dtype=self.dtype, device=self.device)
                self._batch_size = cuda_batch_size(self._forward, sample, self.device)
            else:
                self._batch_size = CPU_BATCH
        return self._batch_size

    @batch_size.setter
    def batch_size(self, value: int | None) -> None:
        self._batch_size = None if value is None else check_int(value, name="batch_size",
                                                                  minimum=1)

    @property
    def precision(self) -> str:
        """Arithmetic of the forward pass: ``"float32"``, ``"bf16"`` or ``"tf32"`` (CUDA)."""
        return self._precision

    @precision.setter
    def precision(self, value: str) -> None:
        self._precision = check_precision(value, self.device)
        self._forward = inference_forward(self.operator, value, self.device)

    def reference_solver(self) -> Solver:
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
        if self.spec.inverse:
            return self._inverse_solver()
        solver = solver_from_record(self.provenance, self.problem, source="run.json")
        return self.spec.make_solver() if solver is None else solver

    def _inverse_solver(self) -> Solver:
        """A classical inversion with the forward settings of the training data's solver."""
        forward = solver_from_record(self.provenance, self.spec.data_problem, source="run.json")
        cls = self.spec.solver_class()
        if forward is None:
            return cls()
        options = {"forcing": forward.forcing, "linear_solver": forward.linear_solver}
        if hasattr(forward, "averaging"):
            options["averaging"] = forward.averaging
        return cls(**options)

    # -- the solver contract -----------------------------------------------------------------

    def solve(self, inputs: SolverInput, *, initial_guess: object = None,
              resample: bool = False) -> SolverOutput:
        """Predict the solution for each input sample; see :meth:`solve_with_report`.

        The fast path: the checks of the inputs, the forward pass and the transfers, no
        diagnostics (:meth:`solve_with_report` adds the report, :meth:`residual` the residual
        of a prediction).
        """
        batch, values = self._checked(inputs, initial_guess, resample)
        return self._restore(batch, self._infer(values, resample))

    def solve_with_report(self, inputs: SolverInput, *, initial_guess: object = None,
                          resample: bool = False) -> tuple[SolverOutput, SolveReport]:
        """Predict the solution for each input sample.

        Parameters
        ----------
        inputs : array or xarray.DataArray
            Burgers: ``u0`` of shape (n_samples, n) / (n,), dims ("sample", "x");
            Darcy: ``a`` of shape (n_samples, n, n) / (n, n), dims ("sample", "x", "y"), > 0;
            inverse Darcy: the observed solution ``u`` (n_samples, n, n) / (n, n) with the
            same dims (noisy observations are expected; the model was trained with the run's
            noise level, :attr:`noise`).
        initial_guess
            Must be None (accepted for the solver contract).
        resample
            Accept inputs on another grid: resampled to the model grid (strided where
            possible; else linear for Burgers, nearest node for the Darcy coefficient,
            bilinear for an observed solution) and the prediction back to the input grid
            (linear / bilinear; for an inverse model from its coarse output grid). Off by
            default: a grid mismatch raises, and an inverse model returns its coarse grid.

        Returns
        -------
        prediction
            Float64 prediction in the form of ``inputs`` (a DataArray named after the problem's
            output, ``"u"`` or ``"a"``, with the coordinates of its grid).
        report : SolveReport
            ``iterations`` 0, ``residual`` NaN (Burgers, inverse) or the relative residual
            ``||b - A u||/||b||`` of the training solver's discrete Darcy system
            (:meth:`residual`, computed after the timed part), and the wall time per sample of
            :meth:`solve`'s work (forward passes split evenly).

        Raises
        ------
        ShapeError
            Input dimensionality of another problem (the message says whose input it looks
            like), a grid that is not square, or (without ``resample``) another grid.
        InputError
            NaN/inf, a non-positive coefficient, an ``initial_guess``, or inputs for which the
            model returns non-finite values (far outside its training distribution).

        Warns
        -----
        OODWarning
            When inputs look unlike the training inputs (see :mod:`neuralop_fem.data.ood`).
        """
        batch, values = self._checked(inputs, initial_guess, resample)
        t0 = time.perf_counter()
        pred = self._infer(values, resample)
        elapsed = time.perf_counter() - t0
        n_s = len(values)
        report = SolveReport(iterations=np.zeros(n_s, dtype=np.int64),
                             residual=self.residual(values, pred),
                             solve_time=np.full(n_s, elapsed / n_s), method=self.name)
        return self._restore(batch, pred), report

    def residual(self, inputs: SolverInput, prediction: SolverInput) -> NDArray[np.float64]:
        """Relative residual ``||b - A u|| / ||b||`` of each prediction ``u`` in the discrete
        Darcy system of the training data's solver with coefficient ``inputs``, on this
        surrogate's device where it can be (:func:`.diagnostics.prediction_residual`)."""
        return prediction_residual(self, inputs, prediction)

    def _checked(self, inputs: SolverInput, initial_guess: object,
                 resample: bool) -> tuple[Batch, NDArray[np.float64]]:
        """The inputs as a batch and its float64 values, after the contract's checks."""
        if initial_guess is not None:
            msg = ("`initial_guess` must be None for a surrogate; "
                   f"got {type(initial_guess).__name__}.")
            raise InputError(msg)
        name = self.spec.input_name
        shape = np.shape(getattr(inputs, "values", inputs))
        taken = InputShape(name=name, problem=self.problem, ndim=len(self.spec.dims),
                           resolution=self.resolution)
        taken.check_dims(shape)
        batch = as_batch(inputs, name=name, core_dims=self.spec.dims)
        values = batch.values
        taken.check_grid(values.shape[1:], shape, resample=resample)
        if self.spec.positive_input and (values <= 0).any():
            msg = f"`{name}` must be > 0 everywhere; got minimum {plain(values.min())}."
            raise InputError(msg)
        if self.spec.inverse:
            warn_if_sign_flipped(self, values)
        return batch, values

    def _infer(self, values: NDArray[np.float64], resample: bool) -> NDArray[np.float64]:
        """The prediction for checked inputs: to the model grid, the out-of-distribution
        check, the forward pass (:func:`~neuralop_fem.surrogate.inference.predict`), the
        finiteness check and (``resample``) back to the input grid."""
        model_in = self._to_model_grid(values)
        self._check_ood(model_in)
        pred = predict(self._forward, model_in, device=self.device, dtype=self.dtype,
                       batch_size=self.batch_size, precision=self.precision)
        check_finite_prediction(pred, self.name, self.last_ood_score)
        if resample:
            pred = self._from_model_grid(pred, values.shape[-1])
        return pred

    def _restore(self, batch: Batch, pred: NDArray[np.float64]) -> SolverOutput:
        """The prediction in the caller's form; an output on another grid than the input (an
        inverse model's coarse grid) gets that grid's coordinates."""
        name = self.spec.output_name
        if pred.shape[1:] == batch.values.shape[1:] or batch.template is None:
            return batch.restore(pred, name=name)
        import xarray as xr

        dims = list(self.spec.dims) if batch.single else ["sample", *self.spec.dims]
        coords: dict[str, Any] = {d: self.spec.coordinates(pred.shape[-1]) for d in self.spec.dims}
        if not batch.single and "sample" in batch.template.coords:
            coords["sample"] = batch.template["sample"].values
        return batch.in_caller_order(
            xr.DataArray(pred[0] if batch.single else pred, dims=dims, coords=coords, name=name))

    def ood_score(self, inputs: SolverInput) -> NDArray[np.float64]:
        """Squared Mahalanobis distance of each input's statistics (NaN without a reference)."""
        batch = as_batch(inputs, name=self.spec.input_name, core_dims=self.spec.dims)
        if self.ood_reference is None:
            return np.full(len(batch.values), np.nan)
        return self.ood_reference.score(batch.values)

    # -- internals ---------------------------------------------------------------------------

    def _to_model_grid(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        if self.spec.periodic:
            return resample_periodic(values, self.resolution)
        # nearest node keeps a coefficient's phase values; a solution is interpolated
        return resample_nodes(values, self.resolution, order=0 if self.spec.positive_input else 1)

    def _from_model_grid(self, pred: NDArray[np.float64], n: int) -> NDArray[np.float64]:
        if pred.shape[-1] == n:
            return pred
        if self.spec.periodic:
            return resample_output(pred, n, grid="periodic")  # as the ladder's answers
        return resample_nodes(pred, n, order=1)

    def _check_ood(self, values: NDArray[np.float64]) -> None:
        if self.ood_reference is None:
            self.last_ood_score = None
            return
        score, flagged, message = self.ood_reference.flags(values)
        self.last_ood_score = score
        if flagged.any():
            warnings.warn(f"{self.name}: {message}; predictions may be unreliable.",
                          OODWarning, stacklevel=4)

    @property
    def dtype(self) -> torch.dtype:
        """The floating-point dtype the model computes in (inputs are cast to it): the module's
        ``input_dtype`` where it declares one, else its parameters' (float32 without any)."""
        param = next(self.operator.parameters(), None)
        return getattr(self.operator, "input_dtype", None) or (
            torch.float32 if param is None else param.dtype)
