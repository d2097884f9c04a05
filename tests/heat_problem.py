"""A third problem, defined outside the packages: the 1D periodic heat equation.

.. math:: u_t = \\kappa u_{xx}, \\quad x \\in [0, 1) \\text{ periodic}, \\quad u_0 \\sim
          N(0, \\sigma^2 (-\\Delta + \\tau^2 I)^{-\\alpha}) \\text{ (zero mean)},

mapping ``u0 -> u(., T)``. Its exact solution multiplies Fourier mode ``k`` by
``exp(-kappa (2 pi k)^2 T)``; :class:`HeatSolver` evaluates it with the FFT, so it is exact up
to round-off on the grid ``x_i = i/n`` (for the trigonometric interpolant of ``u0``).

Everything a new problem provides is here and nowhere else: the solver (the solver contract of
``solvers.contract``), its two registry entries (:class:`solvers.problems.Problem` for the
numerics, :class:`neuralop_fem.problems.ProblemKit` for the data and learning side), the data
config of ``generate``, a torch dataset (the 1D periodic one, reused) and a model preset.
Importing the module registers the problem (:func:`register` does it again after
:func:`neuralop_fem.problems.unregister_problem`); ``neuralop-fem --plugin tests.heat_problem
...`` does so on the command line.
"""

from __future__ import annotations

import functools
import time
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from neuralop_fem.config_base import choice, positive_float
from neuralop_fem.data.datasets import BurgersDataset
from neuralop_fem.data.generation import DataConfig
from neuralop_fem.data.schema import field_dataset
from neuralop_fem.errors import ConfigError
from neuralop_fem.models.config import FNO1dConfig
from neuralop_fem.problems import ProblemKit, register_problem
from solvers.contract import SolveReport, as_batch, check_positive
from solvers.errors import InputError
from solvers.grf import PeriodicGRF
from solvers.problems import Problem

NAME = "heat1d"


# -- the solver -------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class HeatSolver:
    """Exact solution of ``u_t = kappa u_xx`` on the periodic grid ``x_i = i/n`` at ``t = T``:
    mode ``k`` of the FFT of ``u0`` times ``exp(-kappa (2 pi k)^2 T)``."""

    problem: ClassVar[str] = NAME
    kappa: float = 0.01
    final_time: float = 0.1

    def __post_init__(self) -> None:
        object.__setattr__(self, "kappa", check_positive(self.kappa, name="kappa"))
        object.__setattr__(self, "final_time", check_positive(self.final_time, name="final_time"))

    @property
    def config(self) -> dict[str, Any]:
        """Every setting, JSON-serialisable; ``HeatSolver(**config)`` rebuilds the solver."""
        return asdict(self)

    def solve(self, inputs: Any, *, initial_guess: object = None) -> Any:
        """``u(., T)`` for each ``u0`` in ``inputs`` (the solver contract)."""
        return self.solve_with_report(inputs, initial_guess=initial_guess)[0]

    def solve_with_report(self, inputs: Any, *, initial_guess: object = None
                          ) -> tuple[Any, SolveReport]:
        """``(u(., T), report)``; ``report.iterations`` is 1 (one evaluation)."""
        if initial_guess is not None:
            msg = f"`initial_guess` must be None for HeatSolver; got {type(initial_guess)}."
            raise InputError(msg)
        batch = as_batch(inputs, name="inputs", core_dims=("x",))
        n = batch.values.shape[-1]
        start = time.perf_counter()
        k = np.fft.rfftfreq(n, d=1.0 / n)
        decay = np.exp(-self.kappa * (2.0 * np.pi * k) ** 2 * self.final_time)
        u = np.fft.irfft(np.fft.rfft(batch.values, axis=-1) * decay, n=n, axis=-1)
        elapsed = time.perf_counter() - start
        ns = len(u)
        report = SolveReport(iterations=np.ones(ns, dtype=np.int64),
                             residual=np.full(ns, np.nan), solve_time=np.full(ns, elapsed / ns),
                             method="exact Fourier solution")
        return batch.restore(u, name="u"), report


# -- generation ------------------------------------------------------------------------------
def _opt(default: Any, text: str) -> Any:
    return field(default=default, metadata={"help": text})


@dataclass(frozen=True, kw_only=True)
class HeatDataConfig(DataConfig):
    """Physics and numerics of a heat dataset: ``u0`` from a periodic GRF, ``u`` exact."""

    problem: ClassVar[str] = NAME
    solver_field: ClassVar[str] = "solver"
    solver_options: ClassVar[dict[str, dict[str, Any]]] = {"fourier": {}}

    kappa: float = _opt(HeatSolver.kappa, "diffusivity kappa > 0 (default 0.01)")
    final_time: float = _opt(HeatSolver.final_time, "final time T > 0 (default 0.1)")
    grf_sigma: float = _opt(25.0, "initial-condition GRF amplitude sigma (default 25)")
    grf_tau: float = _opt(5.0, "initial-condition GRF inverse length scale tau (default 5)")
    grf_alpha: float = _opt(2.0, "initial-condition GRF smoothness exponent alpha (default 2)")
    solver: str = _opt("fourier", "'fourier' (the exact solution, the only one)")

    def __post_init__(self) -> None:
        object.__setattr__(self, "solver", choice(self.solver, "solver", self.solver_names()))
        for name in ("kappa", "final_time", "grf_sigma", "grf_tau", "grf_alpha"):
            object.__setattr__(self, name, positive_float(getattr(self, name), name))

    def check_resolution(self, resolution: int) -> int:
        """``resolution`` if it is an integer >= 4."""
        if isinstance(resolution, bool) or not isinstance(resolution, int) or resolution < 4:
            msg = f"`resolution` must be an integer >= 4; got {resolution!r}."
            raise ConfigError(msg)
        return resolution

    def solver_settings(self) -> dict[str, Any]:
        """The constructor arguments of :class:`HeatSolver`."""
        return {"kappa": self.kappa, "final_time": self.final_time}

    def solve_chunk(self, resolution: int, seeds: NDArray[np.uint64]) -> dict[str, NDArray[Any]]:
        """Sample ``u0`` with the per-sample ``seeds`` and solve."""
        grf = PeriodicGRF(resolution, sigma=self.grf_sigma, tau=self.grf_tau,
                          alpha=self.grf_alpha)
        u0 = grf.sample(len(seeds), seeds=seeds)
        u, report = self.make_solver().solve_with_report(u0)
        return {"u0": u0, "u": u, "iterations": report.iterations,
                "residual": report.residual, "solve_time": report.solve_time}


# -- learning --------------------------------------------------------------------------------
class HeatDataset(BurgersDataset):
    """Training items of the heat problem: the 1D periodic dataset of the package."""

    problem = NAME


#: Its model preset: a small FNO (the problem is linear and smooth).
PRESETS = {"heat1d-fno": FNO1dConfig(width=8, num_layers=2, modes=4, projection=16)}


# -- the two entries -------------------------------------------------------------------------
PROBLEM = Problem(
    name=NAME, summary="u0 -> u(., T) of u_t = kappa u_xx, periodic on [0, 1)",
    input_name="u0", output_name="u", dims=("x",), grid="periodic", data_problem=NAME,
    solvers={"fourier": HeatSolver}, default_solver="fourier", positive_input=False,
    zero_boundary_output=False, benchmark_resolution=64, physics=("kappa", "final_time"),
)
KIT = ProblemKit(
    name=NAME,
    fields={"u0": ("sample", "x"), "u": ("sample", "x")},
    variable_attrs={
        "u0": {"units": "1", "long_name": "initial temperature u(x, 0)"},
        "u": {"units": "1", "long_name": "temperature u(x, T)"},
        "x": {"units": "1", "long_name": "position x", "axis": "X"},
        "iterations": {"units": "1", "long_name": "evaluations of the exact solution"},
        "residual": {"units": "1", "long_name": "not computed (NaN)"},
    },
    dataset_builder=functools.partial(field_dataset, NAME),
    data_config=HeatDataConfig,
    chunk_size=8,
    generate_help="1D periodic heat equation: u0 -> u(., T)",
    generate_description="u_t = kappa u_xx on [0, 1) periodic; exact Fourier solution.",
    physics=("kappa", "final_time"),
    dataset=HeatDataset,
    normalise_input=False,
    direct_transfer=True,
    train_defaults={"resolution": 32, "batch_size": 4, "gamma": 0.0},
    presets=PRESETS,
)



def register() -> None:
    """Register the problem (again, after :func:`neuralop_fem.problems.unregister_problem`)."""
    register_problem(PROBLEM, KIT)


register()

