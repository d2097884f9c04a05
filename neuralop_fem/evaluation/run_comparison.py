"""Compare a training run's surrogate with the classical solver on a dataset file."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from solvers.checks import check_optional_int
from solvers.problems import PROBLEMS, get_problem

from ..errors import InputError
from ..surrogate import Surrogate
from .comparison import compare
from .report import write_report

if TYPE_CHECKING:  # pragma: no cover
    import torch
    import xarray as xr

    from solvers.contract import Solver

__all__ = ["compare_run", "reference_solver", "solver_names"]


def solver_names() -> list[str]:
    """Every ``PROBLEM-SOLVER`` name :func:`reference_solver` accepts, e.g. ``"darcy-fem"``."""
    return [f"{p.name}-{short}" for p in PROBLEMS.values() for short in p.solvers]


def reference_solver(name: str, surrogate: Surrogate, *,
                     linear_solver: str | None = None) -> Solver:
    """The reference solver named ``name`` (``"PROBLEM-SOLVER"``, or "auto": the training
    data's solver, rebuilt from the run's provenance)."""
    problem = get_problem(surrogate.problem)
    if name == "auto":
        solver = surrogate.reference_solver()
    else:
        valid = solver_names()
        if name not in valid:
            msg = f"`solver` must be one of 'auto', {', '.join(map(repr, valid))}; got {name!r}."
            raise InputError(msg)
        prefix = f"{problem.name}-"
        short = name.removeprefix(prefix)
        if not name.startswith(prefix) or short not in problem.solvers:
            msg = f"`solver` must solve {problem.name} like the surrogate; got {name!r}."
            raise InputError(msg)
        solver = problem.make_solver(short)
    if linear_solver is not None:
        if not problem.linear_system:
            msg = (f"`linear_solver` applies to problems with a linear solve (darcy); got "
                   f"{linear_solver!r} for {problem.name}.")
            raise InputError(msg)
        import dataclasses

        solver = dataclasses.replace(solver, linear_solver=linear_solver)
    return solver


def _phase_values(ds: Any, data: str | os.PathLike[str]) -> tuple[float, float]:
    """The two phase values a Darcy dataset records, else an InputError naming the file."""
    from ..data.provenance import generation_settings

    record = generation_settings(ds.attrs, source=os.fspath(data)) or {}
    settings = record.get("settings", {})
    low, high = settings.get("contrast_low"), settings.get("contrast_high")
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (low, high)):
        msg = (f"`snap_warm_start` (--snap-warm-start) needs the two phase values of the "
               f"coefficient; {os.fspath(data)} does not record them (contrast_low / "
               f"contrast_high of `neuralop-fem generate darcy`).")
        raise InputError(msg)
    return float(low), float(high)


def compare_run(run_dir: str | os.PathLike[str], *, data: str | os.PathLike[str],
                out: str | os.PathLike[str], indices: str | Iterable[int] = "test",
                solver: str = "auto", linear_solver: str | None = None,
                max_samples: int | None = 64, warm_start: bool = True,
                snap_warm_start: bool = False,
                device: str | torch.device | None = None) -> dict[str, Any]:
    """Load the run, select samples of ``data``, compare, and write the report into ``out``.

    The dataset's inputs are strided to the model grid when the file is finer (as in
    training); the stored solutions are not used, both sides solve. For an inverse run the
    observations are the dataset's solutions with the run's training noise (the same fixed
    draws as its evaluation) and the true coefficient is the dataset's, on the same grid; the
    reference is the classical inversion, also warm-started from the surrogate; with
    ``snap_warm_start`` from the surrogate's coefficient snapped to the two phase values the
    dataset records (``contrast_low`` / ``contrast_high`` of ``generate``).

    Returns
    -------
    dict from :func:`~neuralop_fem.evaluation.report.write_report` plus ``"dataset"``
    (the comparison).
    """
    from ..data import load_dataset
    from ..data.io import reading
    from .run_evaluation import parse_indices

    max_samples = check_optional_int(max_samples, name="max_samples", minimum=1)
    sur = Surrogate.load(run_dir, device=device)
    problem = get_problem(sur.problem)
    if snap_warm_start and not problem.inverse:
        msg = (f"`snap_warm_start` (--snap-warm-start) applies to inverse runs only; got a "
               f"{sur.problem} run ({os.fspath(run_dir)}).")
        raise InputError(msg)
    ds = load_dataset(data)
    if ds.attrs.get("problem") != problem.data_problem:
        msg = (f"`data` must be a {problem.data_problem} dataset like the run's training data; "
               f"got a {ds.attrs.get('problem')} dataset ({os.fspath(data)}).")
        raise InputError(msg)
    test = list(sur.run_info.get("splits", {}).get("test", []))
    idx = parse_indices(indices, n_samples=int(ds.sizes["sample"]), test=test)
    if max_samples is not None:
        idx = idx[:max_samples]
    n_file = int(ds.sizes["x"])
    stride = problem.stride(n_file, sur.resolution)
    sel = {dim: slice(None, None, stride) for dim in problem.dims}
    reference = reference_solver(solver, sur, linear_solver=linear_solver)
    if problem.inverse:
        phases = _phase_values(ds, data) if snap_warm_start else None
        inputs, truth = _inverse_observations(sur, ds, idx)
        result = compare(reference, sur, inputs, reference_solution=truth,
                         warm_start=warm_start, keep_fields=True, warm_phases=phases)
    else:
        with reading(ds, problem.input_name, f"samples {idx[0]}..{idx[-1]}"):
            inputs = ds[problem.input_name].isel(sample=idx).isel(sel).load()
        warm = warm_start and problem.linear_system
        result = compare(reference, sur, inputs, warm_start=warm, keep_fields=True)
    result.attrs.update(run_dir=os.fspath(Path(run_dir).resolve()), data=os.fspath(data),
                        model_resolution=sur.resolution, file_resolution=n_file,
                        validation_error=sur.validation_error, test_error=sur.test_error)
    notes = (f"Run `{os.fspath(run_dir)}` (validation rel. L2 {sur.validation_error:.3e}, test "
             f"{sur.test_error:.3e}); data `{os.fspath(data)}` strided {n_file} -> "
             f"{sur.resolution}; "
             f"samples {idx[0]}..{idx[-1]} ({len(idx)}). Times: wall seconds per sample on "
             f"{sur.device} (surrogate) and one CPU process (solver).")
    title = f"{sur.problem}: surrogate vs {type(reference).__name__}"
    report = write_report(result, out, title=title, notes=notes)
    report["dataset"] = result
    return report


def _inverse_observations(sur: Surrogate, ds: xr.Dataset,
                          idx: NDArray[np.int64]) -> tuple[xr.DataArray, xr.DataArray]:
    """The noisy observations of an inverse run's evaluation (the same fixed noise draws) and
    the true coefficient, both on the model's input grid, as DataArrays."""
    import xarray as xr

    from ..training.config import TrainConfig
    from ..training.setup import make_dataset

    config = TrainConfig.from_dict(sur.run_info["train_config"])
    items = make_dataset(ds, config, indices=idx, resolution=sur.resolution,
                         coarse=sur.output_resolution,
                         input_normalizer=getattr(sur.operator, "input_normalizer", None),
                         in_memory=False)
    u = np.stack([items[i]["input"][..., 0].numpy() for i in range(len(items))])
    stride = get_problem(sur.problem).stride(int(ds.sizes["x"]), sur.resolution)
    a = ds["a"].isel(sample=idx).isel(x=slice(None, None, stride), y=slice(None, None, stride))
    coords = {"sample": ds["sample"].values[idx], "x": sur.grid, "y": sur.grid}
    obs = xr.DataArray(u.astype(np.float64), dims=("sample", "x", "y"), coords=coords, name="u")
    return obs, a.load()
