"""Compare a training run's surrogate with the classical solver on a dataset file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..surrogate import Surrogate
from .comparison import compare
from .report import write_report

__all__ = ["compare_run", "reference_solver"]


def reference_solver(name: str, surrogate: Surrogate, *, linear_solver: str | None = None) -> Any:
    """The reference solver named ``name`` ("auto": the training data's solver)."""
    from solvers.burgers import BurgersFDSolver, BurgersSpectralSolver
    from solvers.darcy import DarcyFDSolver, DarcyFEMSolver

    if name == "auto":
        solver = surrogate.reference_solver()
    else:
        table = {"burgers-spectral": BurgersSpectralSolver, "burgers-fd": BurgersFDSolver,
                 "darcy-fd": DarcyFDSolver, "darcy-fem": DarcyFEMSolver}
        if name not in table:
            msg = f"`solver` must be one of 'auto', {', '.join(map(repr, table))}; got {name!r}."
            raise InputError(msg)
        if not name.startswith(surrogate.problem):
            msg = f"`solver` must solve {surrogate.problem} like the surrogate; got {name!r}."
            raise InputError(msg)
        solver = table[name]()
    if linear_solver is not None:
        if surrogate.problem != "darcy":
            msg = f"`linear_solver` applies to Darcy only; got {linear_solver!r} for burgers."
            raise InputError(msg)
        import dataclasses

        solver = dataclasses.replace(solver, linear_solver=linear_solver)
    return solver


def compare_run(run_dir: str | os.PathLike[str], *, data: str | os.PathLike[str],
                out: str | os.PathLike[str], indices: Any = "test", solver: str = "auto",
                linear_solver: str | None = None, max_samples: int | None = 64,
                warm_start: bool = True, device: Any = None) -> dict[str, Any]:
    """Load the run, select samples of ``data``, compare, and write the report into ``out``.

    The dataset's inputs are strided to the model grid when the file is finer (as in
    training); the stored solutions are not used, both sides solve.

    Returns
    -------
    dict from :func:`~neuralop_fem.evaluation.report.write_report` plus ``"dataset"`` (the comparison).
    """
    from ..data import load_dataset
    from ..data.subsample import subsample_stride
    from .run_evaluation import parse_indices

    sur = Surrogate.load(run_dir, device=device)
    ds = load_dataset(data)
    if ds.attrs.get("problem") != sur.problem:
        msg = (f"`data` must be a {sur.problem} dataset like the run's training data; got a "
               f"{ds.attrs.get('problem')} dataset ({os.fspath(data)}).")
        raise InputError(msg)
    test = list(sur.run_info.get("splits", {}).get("test", []))
    idx = parse_indices(indices, n_samples=int(ds.sizes["sample"]), test=test)
    if max_samples is not None:
        idx = idx[:max_samples]
    var = "u0" if sur.problem == "burgers" else "a"
    n_file = int(ds.sizes["x"])
    stride = subsample_stride(n_file, sur.resolution, periodic=sur.problem == "burgers")
    sel = {"x": slice(None, None, stride)}
    if sur.problem == "darcy":
        sel["y"] = slice(None, None, stride)
    inputs = ds[var].isel(sample=idx).isel(sel).load()
    reference = reference_solver(solver, sur, linear_solver=linear_solver)
    warm = warm_start and sur.problem == "darcy"
    result = compare(reference, sur, inputs, warm_start=warm, keep_fields=True)
    result.attrs.update(run_dir=os.fspath(Path(run_dir).resolve()), data=os.fspath(data),
                        model_resolution=sur.resolution, file_resolution=n_file,
                        validation_error=sur.validation_error, test_error=sur.test_error)
    notes = (f"Run `{os.fspath(run_dir)}` (validation rel. L2 {sur.validation_error:.3e}, test "
             f"{sur.test_error:.3e}); data `{os.fspath(data)}` strided {n_file} -> {sur.resolution}; "
             f"samples {idx[0]}..{idx[-1]} ({len(idx)}). Times: wall seconds per sample on "
             f"{sur.device} (surrogate) and one CPU process (solver).")
    report = write_report(result, out, title=f"{sur.problem}: surrogate vs {type(reference).__name__}",
                          notes=notes)
    report["dataset"] = result
    return report
