"""Data imported from legacy .mat files: the physical parameters are recorded when given, and
the reference solver is never rebuilt with guessed defaults when they are not."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.io
import torch

from neuralop_fem import Surrogate
from neuralop_fem.cli import main
from neuralop_fem.data import load_dataset
from neuralop_fem.data.matlab import import_mat, read_mat
from neuralop_fem.data.provenance import solver_from_record, unknown_physics
from neuralop_fem.errors import DatasetError, InputError
from neuralop_fem.models import NormalizedOperator, build_model

from ._surrogate_fixtures import write_run_dir


def _burgers_mat(tmp_path, rng):
    src = tmp_path / "burgers_data.mat"
    scipy.io.savemat(src, {"a": rng.standard_normal((4, 16)), "u": rng.standard_normal((4, 16))})
    return src


def _darcy_mat(tmp_path, rng):
    src = tmp_path / "piececonst.mat"
    scipy.io.savemat(src, {"coeff": rng.random((3, 9, 9)) + 3, "sol": rng.random((3, 9, 9))})
    return src


def test_given_parameters_are_recorded_and_rebuild_the_solver(tmp_path, rng):
    out = import_mat(_burgers_mat(tmp_path, rng), tmp_path / "b.nc", problem="burgers",
                     viscosity=0.1, final_time=0.5)
    with load_dataset(out) as ds:
        attrs = dict(ds.attrs)
    assert attrs["viscosity"] == 0.1
    assert attrs["final_time"] == 0.5
    assert attrs["physics_known"] == 1
    assert json.loads(attrs["config_json"])["physics"] == {"viscosity": 0.1, "final_time": 0.5}
    assert unknown_physics(attrs, "burgers") == []
    solver = solver_from_record(attrs, "burgers")
    assert type(solver).__name__ == "BurgersSpectralSolver"
    assert (solver.viscosity, solver.final_time) == (0.1, 0.5)


def test_missing_parameters_are_unknown_and_refused(tmp_path, rng):
    out = import_mat(_burgers_mat(tmp_path, rng), tmp_path / "b.nc", problem="burgers")
    with load_dataset(out) as ds:
        attrs = dict(ds.attrs)
    assert attrs["viscosity"] == "unknown"
    assert attrs["final_time"] == "unknown"
    assert attrs["physics_known"] == 0
    assert unknown_physics(attrs, "burgers") == ["viscosity", "final_time"]
    match = (r"run\.json: the burgers data were imported from 'burgers_data\.mat' without "
             r"viscosity, final_time.*--viscosity VALUE --final-time VALUE")
    with pytest.raises(DatasetError, match=match):
        solver_from_record(attrs, "burgers", source="run.json")


@pytest.mark.parametrize(("problem", "cls"), [("darcy", "DarcyFDSolver"),
                                              ("darcy-inverse", "DarcyInverseSolver")])
def test_darcy_forcing(tmp_path, rng, problem, cls):
    src = _darcy_mat(tmp_path, rng)
    with_f = read_mat(src, problem="darcy", forcing=2.0).attrs
    solver = solver_from_record(with_f, problem)
    assert type(solver).__name__ == cls
    assert solver.forcing == 2.0
    without = read_mat(src, problem="darcy").attrs
    with pytest.raises(DatasetError, match=r"without forcing.*--forcing VALUE"):
        solver_from_record(without, problem)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"problem": "darcy", "viscosity": 0.1}, "`viscosity` applies to burgers files only"),
    ({"problem": "burgers", "forcing": 1.0}, "`forcing` applies to darcy files only"),
    ({"problem": "burgers", "viscosity": -0.1}, r"`viscosity` must be a finite number > 0"),
    ({"problem": "burgers", "final_time": float("nan")}, r"`final_time` must be a finite"),
])
def test_bad_parameters(tmp_path, rng, kwargs, match):
    if kwargs["problem"] == "burgers":
        src = _burgers_mat(tmp_path, rng)
    else:
        src = _darcy_mat(tmp_path, rng)
    with pytest.raises(InputError, match=match):
        read_mat(src, **kwargs)


def test_existing_output_is_refused_before_the_source_is_read(tmp_path):
    (tmp_path / "out.nc").write_text("keep me")
    with pytest.raises(InputError, match="overwrite=True"):
        import_mat(tmp_path / "missing.mat", tmp_path / "out.nc", problem="darcy")


def _run_on(data, tmp_path, problem, n):
    torch.manual_seed(0)
    if problem == "burgers":
        model = build_model("burgers-galerkin", d_model=8, num_layers=1, d_ff=8, modes=2,
                            freq_dim=4, decoder_ff=4)
    else:
        model = build_model("darcy-fno", width=4, modes=2, num_layers=1, projection=4)
    return write_run_dir(tmp_path / f"run_{data.stem}", NormalizedOperator(model),
                         data_path=data, task=problem, resolution=n, n_train=2)


def test_compare_refuses_imported_data_without_parameters(tmp_path, rng, capsys):
    src = _burgers_mat(tmp_path, rng)
    bare = import_mat(src, tmp_path / "bare.nc", problem="burgers")
    run = _run_on(bare, tmp_path, "burgers", 16)
    with pytest.raises(DatasetError, match="without viscosity, final_time"):
        Surrogate.load(run).reference_solver()
    argv = ["compare", str(run), "--data", str(bare), "--out", str(tmp_path / "report"),
            "--indices", "all", "--max-samples", "2", "--device", "cpu"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "--viscosity VALUE --final-time VALUE" in err

    full = import_mat(src, tmp_path / "full.nc", problem="burgers", viscosity=0.1,
                      final_time=0.25)
    sur = Surrogate.load(_run_on(full, tmp_path, "burgers", 16))
    assert sur.reference_solver().viscosity == 0.1


def test_surrogate_on_imported_darcy_data_without_forcing_still_solves(tmp_path, rng):
    data = import_mat(_darcy_mat(tmp_path, rng), tmp_path / "d.nc", problem="darcy")
    sur = Surrogate.load(_run_on(data, tmp_path, "darcy", 9))
    a = np.asarray(load_dataset(data)["a"].values[:2])
    pred, report = sur.solve_with_report(a)
    assert pred.shape == a.shape
    assert np.isnan(report.residual).all()  # the residual needs the forcing: unknown


def test_mesh_comparison_needs_the_forcing(tmp_path, rng):
    import skfem

    from neuralop_fem.surrogate.mesh import compare_on_mesh

    data = import_mat(_darcy_mat(tmp_path, rng), tmp_path / "d.nc", problem="darcy")
    sur = Surrogate.load(_run_on(data, tmp_path, "darcy", 9))
    mesh = skfem.MeshTri.init_sqsymmetric().refined(2)
    with pytest.raises(DatasetError, match=r"without forcing.*--forcing VALUE"):
        compare_on_mesh(sur, mesh, np.full(mesh.nelements, 3.0))


def test_generated_darcy_data_give_the_inverse_solver_their_forcing():
    from neuralop_fem.data.provenance import ATTR, generation_record

    record = generation_record(settings={"problem": "darcy", "forcing": 2.5}, n_samples=4,
                               chunk_size=4, solver_class="DarcyFDSolver",
                               solver_config={"forcing": 2.5}, version="test")
    solver = solver_from_record({ATTR: record}, "darcy-inverse")
    assert type(solver).__name__ == "DarcyInverseSolver"
    assert solver.forcing == 2.5
    assert solver_from_record({ATTR: record}, "darcy").forcing == 2.5
