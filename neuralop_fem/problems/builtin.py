"""The kits of the built-in problems: Burgers, Darcy and the inverse Darcy problem.

Each fact is written here once; the schema, ``generate``, the provenance record, training,
the surrogate and the evaluation read it through :func:`neuralop_fem.problems.get_kit`.
"""

from __future__ import annotations

import math

from .kit import ProblemKit
from .names import ITERATIONS, RESIDUAL, SAMPLE, TIME, U0, U_T, A, U, X, Y
from .peer_formats import NeuralopFormat, PDEBenchFormat, PeerTrajectory
from .peer_presets import NEURALOP_PHASE_VALUES
from .reproduction import DataVariant, QuickScale, ReproductionSpec

__all__ = ["BURGERS", "DARCY", "DARCY_INVERSE", "KITS"]

#: The Burgers trajectory of both peers: u0 first, u(., T) last, kept as u_t.
_BURGERS_TRAJECTORY = PeerTrajectory(field=U_T, final_time="final_time")

_BURGERS_U = "velocity u of the viscous Burgers equation u_t + u u_x = nu u_xx"

BURGERS = ProblemKit(
    name="burgers",
    # periodic and free of x; u_t + u u_x = nu u_xx keeps its form under u(x) -> -u(-x)
    symmetries=("shift", "reflect-negate"),
    fields={U0: (SAMPLE, X), U: (SAMPLE, X)},
    optional_fields={U_T: (SAMPLE, TIME, X)},
    variable_attrs={
        U0: {"units": "1", "long_name": "initial condition u(x, 0)",
             "comment": "nondimensional " + _BURGERS_U + " at t = 0"},
        U: {"units": "1", "long_name": "solution u(x, T)",
            "comment": "nondimensional " + _BURGERS_U + " at t = T = final_time"},
        U_T: {"units": "1", "long_name": "solution u(x, t)",
              "comment": "nondimensional " + _BURGERS_U + " at the output times"},
        X: {
            "units": "1",
            "long_name": "position x",
            "comment": "periodic unit interval [0, 1), x_i = i/n (no duplicated endpoint)",
            "axis": "X",
        },
        # No axis="T": CF reserves it for time coordinates whose units are a time unit with a
        # reference date ("s since ..."); this nondimensional time has units "1".
        TIME: {"units": "1", "long_name": "time (nondimensional)"},
        ITERATIONS: {"units": "1", "long_name": "solver time steps",
                     "comment": "number of time steps of the solver"},
        RESIDUAL: {
            "units": "1",
            "long_name": "resolution indicator",
            "comment": "spatial resolution indicator (not an error bound): relative l2 norm of "
            "the top fifth of the resolved spectrum at the final time; 0 when those modes "
            "decayed below the solver's mode truncation; NaN for the FD solver",
        },
    },
    dataset_builder="neuralop_fem.data.schema:burgers_dataset",
    data_config="neuralop_fem.data.generation.config:BurgersDataConfig",
    chunk_size=16,
    generate_help="1D periodic viscous Burgers: u0 -> u(., T)",
    generate_description="u_t + u u_x = nu u_xx on [0, 1) periodic; u0 ~ N(0, sigma^2 "
    "(-Laplacian + tau^2)^-alpha) with zero mean; grid x_i = i/n.",
    physics=("viscosity", "final_time"),
    mat_keys=("a", "u"),
    # burgers_{train,test}_16.pt: x (N, n), y (N, T, n) from x, visc (1, 1).
    neuralop_format=NeuralopFormat(trajectory=_BURGERS_TRAJECTORY,
                                   scalars={"visc": "viscosity"}),
    # 1D_Burgers_Sols_Nu{nu}.hdf5: tensor (N, T, n); their u_t + (u^2/2)_x = (nu/pi) u_xx.
    pdebench_format=PDEBenchFormat(trajectory=_BURGERS_TRAJECTORY, parameter="viscosity",
                                   name_tag="Nu", factor=1.0 / math.pi),
    dataset="neuralop_fem.data.datasets:BurgersDataset",
    # The paper's point: its layer normalisation copes with raw Burgers inputs.
    normalise_input=False,
    ood_features=("log_rms", "spectrum_slope"),
    ood_statistics="neuralop_fem.data.ood:burgers_statistics",
    # Measured: the Burgers transformers and FNO give the same error at 512, 2048 and 8192.
    direct_transfer=True,
    # The paper (docs/training.md): n = 512 (8192 / 16), batch 8, 128 steps per epoch.
    train_defaults={"resolution": 512, "batch_size": 8, "gamma": 0.1},
    # Cao 2021, Table 2a: trained at 512, evaluated zero-shot at 2048 and 8192.
    reproduction=ReproductionSpec(
        quick=QuickScale(data_n=256, samples=40, train_n=64, eval_n=(64, 128, 256)),
        samples=1224,
        # gt: 0.1/(2 pi), the value the paper states; fno: 0.1, the FNO paper's.
        data_variant=DataVariant(parameter="viscosity", tag="nu",
                                 values={"gt": 0.1 / (2 * math.pi), "fno": 0.1}),
        eval_grids=(512, 2048, 8192),
        paper_row="burgers n={n}",
        paper={
            "burgers n=512": {"fourier": 1.135e-3, "galerkin": 1.203e-3, "softmax": 1.271e-3,
                              "linear": 1.139e-3, "galerkin-postln": 2.181e-3,
                              "fno": 4.373e-3},
            "burgers n=2048": {"fourier": 1.123e-3, "galerkin": 1.150e-3, "softmax": 1.266e-3,
                               "linear": 1.149e-3, "galerkin-postln": 1.512e-3,
                               "fno": 4.126e-3},
            "burgers n=8192": {"fourier": 1.071e-3, "galerkin": 1.025e-3, "softmax": 1.330e-3,
                               "linear": 1.221e-3, "galerkin-postln": 2.747e-3,
                               "fno": 4.151e-3},
        },
        epoch_budget=True,
    ),
    torch_solvers={"spectral": "neuralop_fem.torch_solvers:TorchBurgersSpectralSolver"},
)

DARCY = ProblemKit(
    name="darcy",
    # constant forcing, u = 0 on the whole boundary, isotropic coefficients
    symmetries=("d4",),
    fields={A: (SAMPLE, X, Y), U: (SAMPLE, X, Y)},
    variable_attrs={
        A: {"units": "1", "long_name": "coefficient a(x, y)",
            "comment": "coefficient a of -div(a grad u) = f on [0, 1]^2"},
        U: {"units": "1", "long_name": "solution u(x, y)",
            "comment": "solution u of -div(a grad u) = f on [0, 1]^2, u = 0 on the boundary"},
        X: {
            "units": "1",
            "long_name": "position x",
            "comment": "node grid on [0, 1] including the boundary, x_i = i/(n-1)",
            "axis": "X",
        },
        Y: {
            "units": "1",
            "long_name": "position y",
            "comment": "node grid on [0, 1] including the boundary, y_j = j/(n-1)",
            "axis": "Y",
        },
        ITERATIONS: {"units": "1", "long_name": "solver iterations",
                     "comment": "linear-solver iterations (1 for a direct solve)"},
        RESIDUAL: {"units": "1", "long_name": "relative residual",
                   "comment": "final relative residual ||b - A u|| / ||b||"},
    },
    dataset_builder="neuralop_fem.data.schema:darcy_dataset",
    data_config="neuralop_fem.data.generation.config:DarcyDataConfig",
    chunk_size=4,
    generate_help="2D Darcy flow: a -> u",
    generate_description="-div(a grad u) = f on [0, 1]^2, u = 0 on the boundary; a = high "
    "where a Neumann GRF ~ N(0, (-Laplacian + tau^2)^-alpha) is > 0, low elsewhere; n x n nodes "
    "x_i = i/(n-1).",
    physics=("forcing",),
    mat_keys=("coeff", "sol"),
    # darcy_{train,test}_{16,32}.pt: x (N, n, n) boolean phases, y (N, n, n).
    neuralop_format=NeuralopFormat(phase_values=NEURALOP_PHASE_VALUES,
                                   phase_attrs=("contrast_high", "contrast_low")),
    # 2D_DarcyFlow_beta{beta}_Train.hdf5: nu (N, n, n), tensor (N, 1, n, n), attribute beta.
    pdebench_format=PDEBenchFormat(input_key="nu", parameter="forcing", name_tag="beta",
                                   attribute="beta"),
    dataset="neuralop_fem.data.datasets:DarcyDataset",
    ood_features=("mean_log_a", "interface_density"),
    ood_statistics="neuralop_fem.data.ood:darcy_statistics",
    # The Darcy models' attention / convolution grids change with n: evaluated through their
    # training grid by default (docs/training.md, "Other resolutions").
    direct_transfer=False,
    # 141 x 141 (421 strided by 3), batch 4, attention grid 43 by the model's rule.
    train_defaults={"resolution": 141, "batch_size": 4, "gamma": 0.5},
    half_lr_attentions=frozenset({"fourier", "softmax"}),
    # Cao 2021, Table 2b: 141 x 141 (421 strided by 3), attention grid 43.
    reproduction=ReproductionSpec(
        quick=QuickScale(data_n=29, samples=30, train_n=15),
        samples=1224,
        reduced=True,
        paper_row="darcy 141/43",
        paper={"darcy 141/43": {"fourier": 0.873e-2, "galerkin": 0.839e-2, "fno": 1.419e-2}},
    ),
    torch_solvers={"fd": "neuralop_fem.torch_solvers:TorchDarcyFDSolver"},
)

DARCY_INVERSE = ProblemKit(
    name="darcy-inverse",
    symmetries=("d4",),  # u -> a commutes with the square's rotations and reflections
    dataset="neuralop_fem.data.datasets:DarcyInverseDataset",
    ood_features=("log_rms", "log_gradient_ratio"),
    ood_statistics="neuralop_fem.data.ood:solution_statistics",
    # u at 141 -> the coefficient on the 36 x 36 grid, noise 1 % (the paper's epsilon).
    train_defaults={"resolution": 141, "batch_size": 4, "gamma": 0.0, "noise": 0.01},
    # Cao 2021, Table 3: u at 141 -> a at 36, by the paper's noise epsilon.
    reproduction=ReproductionSpec(
        # 29 -> 8 (the 141 -> 36 rule), reachable by pooling; the data are Darcy's.
        quick=QuickScale(train_n=29),
        reduced=True,
        paper_row="inverse 141/36 eps={noise:g}",
        paper={
            "inverse 141/36 eps=0": {"fourier": 1.921e-2, "galerkin": 1.944e-2},
            "inverse 141/36 eps=0.01": {"fourier": 2.717e-2, "galerkin": 2.552e-2},
            "inverse 141/36 eps=0.1": {"fourier": 6.725e-2, "galerkin": 6.689e-2},
        },
    ),
)

KITS = (BURGERS, DARCY, DARCY_INVERSE)
