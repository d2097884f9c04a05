"""Mesh <-> grid transfer, the mesh comparison and meshio export round trips."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import skfem

from neuralop_fem.errors import InputError, ShapeError
from neuralop_fem.surrogate.mesh import (
    coefficient_to_grid,
    compare_on_mesh,
    export_fields,
    grid_to_mesh,
    mesh_from_meshio,
    read_fields,
)
from solvers.darcy import DarcyFDSolver


def _importable(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


#: The export and reading of mesh files need the `mesh` extra (meshio); without it they raise
#: MissingExtraError (tests/test_optional_extras.py).
needs_meshio = pytest.mark.skipif(not _importable("skfem.io.meshio"),
                                  reason="needs the mesh extra (meshio)")


def _mesh(rng, refine=4, perturb=0.2):
    mesh = skfem.MeshTri.init_sqsymmetric().refined(refine)
    p = mesh.p.copy()
    h = 1.0 / 2**refine
    interior = (p > 1e-12).all(axis=0) & (p < 1 - 1e-12).all(axis=0)
    p[:, interior] += perturb * h * rng.uniform(-1, 1, size=(2, int(interior.sum())))
    return skfem.MeshTri(p, mesh.t)


def _two_phase(mesh):
    mid = mesh.p[:, mesh.t].mean(axis=1)
    return np.where((mid[0] - 0.5) ** 2 + (mid[1] - 0.4) ** 2 < 0.08, 12.0, 3.0)


class FDOnGrid:
    """A crafted 'surrogate': the FD solution on its node grid."""

    resolution = 65
    provenance = {"forcing": 1.0}

    def solve(self, a):
        return DarcyFDSolver().solve(a)


def test_coefficient_to_grid_takes_the_containing_element(rng):
    mesh = _mesh(rng)
    coef = _two_phase(mesh)
    grid = coefficient_to_grid(mesh, coef, 33)
    assert grid.shape == (33, 33)
    assert set(np.unique(grid)) <= {3.0, 12.0}
    x = np.linspace(0, 1, 33)
    finder = mesh.element_finder()
    # an interior node off element edges is given its element's value
    assert grid[10, 20] == coef[finder(np.array([x[10]]), np.array([x[20]]))[0]]


def test_grid_to_mesh_is_exact_for_bilinear_fields(rng):
    mesh = _mesh(rng)
    x = np.linspace(0, 1, 17)
    f = 1 + 2 * x[:, None] - x[None, :] + 3 * x[:, None] * x[None, :]
    want = 1 + 2 * mesh.p[0] - mesh.p[1] + 3 * mesh.p[0] * mesh.p[1]
    np.testing.assert_allclose(grid_to_mesh(f, mesh), want, atol=1e-13)


def test_compare_on_mesh_of_fd_grid_solution_is_close(rng):
    mesh = _mesh(rng)
    res = compare_on_mesh(FDOnGrid(), mesh, _two_phase(mesh))
    # FD on 65^2 vs P1 on a 16x16-cell perturbed mesh: both O(h) at the interface -> few %
    assert 1e-4 < res.rel_l2 < 0.05
    assert res.report.iterations[0] >= 1
    assert res.solution.shape == (mesh.nvertices,)


def _quad_mesh(rng):
    x = np.linspace(0, 1, 6)
    mesh = skfem.MeshQuad.init_tensor(x, x[:4])
    p = mesh.p.copy()
    interior = (p > 1e-12).all(axis=0) & (p < 1 - 1e-12).all(axis=0)
    p[:, interior] += 0.02 * rng.uniform(-1, 1, size=(2, int(interior.sum())))
    return skfem.MeshQuad(p, mesh.t)


@needs_meshio
@pytest.mark.parametrize("kind", ["tri", "quad"])
@pytest.mark.parametrize("suffix", ["vtu", "xdmf"])
def test_export_round_trip(tmp_path, rng, suffix, kind):
    mesh = _mesh(rng, refine=2) if kind == "tri" else _quad_mesh(rng)
    pdata = {"solution": rng.standard_normal(mesh.nvertices),
             "error": rng.standard_normal(mesh.nvertices)}
    cdata = {"coefficient": rng.uniform(3, 12, mesh.nelements)}
    path = tmp_path / f"fields.{suffix}"
    export_fields(path, mesh, point_data=pdata, cell_data=cdata)
    back, points, cells = read_fields(path)
    # Exact: float64 values are written and read back as they are (no arithmetic).
    assert type(back) is type(mesh)
    np.testing.assert_array_equal(back.p, mesh.p)
    np.testing.assert_array_equal(back.t, mesh.t)
    assert points.keys() == pdata.keys()
    assert cells.keys() == cdata.keys()
    for k, v in pdata.items():
        np.testing.assert_array_equal(points[k], v)
    np.testing.assert_array_equal(cells["coefficient"], cdata["coefficient"])


@needs_meshio
@pytest.mark.parametrize("kind", ["tri", "quad"])
def test_mesh_from_meshio_keeps_the_cell_type(tmp_path, rng, kind):
    import meshio

    mesh = _mesh(rng, refine=1) if kind == "tri" else _quad_mesh(rng)
    export_fields(tmp_path / "m.vtu", mesh)
    back = mesh_from_meshio(meshio.read(tmp_path / "m.vtu"))
    assert type(back) is type(mesh)
    np.testing.assert_array_equal(back.t, mesh.t)


@needs_meshio
def test_mesh_from_meshio_without_supported_cells():
    import meshio

    m = meshio.Mesh(np.zeros((3, 3)), [("vertex", np.array([[0], [1], [2]]))])
    with pytest.raises(InputError, match="must contain cells scikit-fem supports"):
        mesh_from_meshio(m)


@needs_meshio
def test_export_rejects_wrong_length(tmp_path, rng):
    mesh = _mesh(rng, refine=1)
    with pytest.raises(ShapeError, match=r"`point_data\['u'\]` must have shape"):
        export_fields(tmp_path / "f.vtu", mesh, point_data={"u": np.zeros(3)})


@needs_meshio
def test_export_rejects_unknown_suffix(tmp_path, rng):
    with pytest.raises(InputError, match="must end in .vtu or .xdmf"):
        export_fields(tmp_path / "f.txt", _mesh(rng, refine=1))


def test_coefficient_shape_is_checked(rng):
    mesh = _mesh(rng, refine=1)
    with pytest.raises(ShapeError, match="one value per element"):
        coefficient_to_grid(mesh, np.ones(3), 9)


def test_mesh_outside_unit_square_is_refused():
    mesh = skfem.MeshTri.init_sqsymmetric().scaled(2.0)
    with pytest.raises(InputError, match="inside the unit square"):
        coefficient_to_grid(mesh, np.ones(mesh.nelements), 9)
