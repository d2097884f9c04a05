"""scikit-fem meshes <-> the surrogate's node grid, and meshio export of the fields.

A Darcy problem given on any triangulation of the unit square with an element-wise
coefficient (a scikit-fem ``MeshTri``, possibly refined or perturbed, or one read with meshio)
is handed to a grid surrogate as follows:

1. :func:`coefficient_to_grid`: the coefficient at each node ``(i/(n-1), j/(n-1))`` of the
   surrogate grid is the value of the element that contains the node (exact for a
   piecewise-constant coefficient away from element edges; on an edge one neighbour is taken).
2. the surrogate predicts ``u`` on the node grid;
3. :func:`grid_to_mesh`: bilinear interpolation of the grid values at the mesh nodes (the P1
   dofs); second order for smooth ``u``, and exact at nodes that lie on the grid;
4. :func:`compare_on_mesh` solves the same problem with ``DarcyFEMSolver.solve_mesh`` (P1)
   and reports the relative L2 error in the P1 mass-matrix norm ``sqrt(e^T M e / u^T M u)``.

:func:`export_fields` writes the mesh with point and cell data to VTU or XDMF (by suffix)
for ParaView and :func:`read_fields` reads it back, both through scikit-fem's meshio interface
(:mod:`skfem.io.meshio`, as :meth:`skfem.Mesh.save` / :meth:`skfem.Mesh.load`), so triangle
and quadrilateral meshes round-trip.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import skfem
from numpy.typing import ArrayLike, NDArray
from skfem.helpers import dot

from solvers.contract import SolveReport, SolverInput, SolverOutput, check_finite
from solvers.darcy import DarcyFEMSolver

from ..data.grids import bilinear_at_points, grid_coordinates
from ..data.provenance import require_physics
from ..errors import InputError, ShapeError
from ..extras import require
from ..files import atomic_path

if TYPE_CHECKING:  # pragma: no cover
    import meshio

__all__ = [
    "GridSurrogate",
    "MeshComparison",
    "coefficient_to_grid",
    "compare_on_mesh",
    "export_fields",
    "grid_to_mesh",
    "mesh_from_meshio",
    "read_fields",
]


def _check_unit_square(mesh: skfem.Mesh) -> None:
    lo, hi = mesh.p.min(axis=1), mesh.p.max(axis=1)
    if mesh.p.shape[0] != 2 or lo.min() < -1e-12 or hi.max() > 1 + 1e-12:
        msg = ("`mesh` must be a 2D mesh inside the unit square [0, 1]^2 "
               "(the surrogate's domain); "
               f"got a {mesh.p.shape[0]}D mesh with bounding box {lo.tolist()}..{hi.tolist()}.")
        raise InputError(msg)


def coefficient_to_grid(mesh: skfem.Mesh, coefficient: ArrayLike, n: int) -> NDArray[np.float64]:
    """Sample an element-wise coefficient at the ``n x n`` nodes ``x_i = i/(n-1)``.

    Parameters
    ----------
    mesh
        2D scikit-fem mesh covering the unit square.
    coefficient : (mesh.nelements,) array
        One value per element.
    n
        Node-grid size of the surrogate.

    Returns
    -------
    (n, n) array, axis 0 = x.

    Raises
    ------
    ShapeError
        If ``coefficient`` does not have one value per element.
    InputError
        If the mesh leaves the unit square or does not cover a grid node.
    """
    coef = np.asarray(coefficient, dtype=np.float64)
    if coef.shape != (mesh.nelements,):
        msg = (f"`coefficient` must have shape ({mesh.nelements},), one value per element; "
               f"got {coef.shape}.")
        raise ShapeError(msg)
    check_finite(coef, name="coefficient")
    _check_unit_square(mesh)
    x = grid_coordinates("nodes", n)
    xx, yy = np.meshgrid(x, x, indexing="ij")
    try:
        elems = mesh.element_finder()(xx.ravel(), yy.ravel())
    except ValueError:
        msg = "`mesh` must cover the whole unit square; a surrogate grid node lies outside it."
        raise InputError(msg) from None
    return coef[elems].reshape(n, n)


def grid_to_mesh(values: ArrayLike, mesh: skfem.Mesh) -> NDArray[np.float64]:
    """Bilinear interpolation of node-grid values at the mesh nodes.

    Parameters
    ----------
    values : (n, n) array
        Values at ``(i/(n-1), j/(n-1))``, axis 0 = x.
    mesh
        2D mesh inside the unit square.

    Returns
    -------
    (mesh.nvertices,) array in ``mesh.p`` order (the P1 dof order).
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 2 or v.shape[0] != v.shape[1] or v.shape[0] < 2:
        msg = f"`values` must be an (n, n) node-grid array with n >= 2; got shape {v.shape}."
        raise ShapeError(msg)
    _check_unit_square(mesh)
    return bilinear_at_points(v, mesh.p.T)


@skfem.BilinearForm
def _mass(u, v, w):  # noqa: ANN001, ANN202 (scikit-fem form signature)
    return u * v


@skfem.BilinearForm
def _laplace(u, v, w):  # noqa: ANN001, ANN202
    return dot(u.grad, v.grad)


@dataclass(frozen=True, kw_only=True)
class MeshComparison:
    """Fields and errors of a surrogate prediction against the FEM solve on one mesh.

    Attributes
    ----------
    coefficient : (nelements,) array
    grid_coefficient : (n, n) array
        The coefficient as the surrogate saw it.
    solution, prediction, error : (nvertices,) arrays
        P1 solution, surrogate prediction at the mesh nodes, ``prediction - solution``.
    rel_l2 : float
        ``sqrt(e^T M e / u^T M u)`` with the P1 mass matrix.
    rel_h1 : float
        Same with the P1 Laplace (H1-seminorm) matrix.
    report : SolveReport
        Of the FEM solve.
    surrogate_time : float
        Seconds for transfer + prediction + interpolation.
    """

    coefficient: NDArray[np.float64]
    grid_coefficient: NDArray[np.float64]
    solution: NDArray[np.float64]
    prediction: NDArray[np.float64]
    error: NDArray[np.float64]
    rel_l2: float
    rel_h1: float
    report: SolveReport
    surrogate_time: float


class GridSurrogate(Protocol):
    """What :func:`compare_on_mesh` needs of a surrogate: its node grid size ``resolution``
    and ``solve(a)`` for ``a`` of shape (n, n) on that grid."""

    @property
    def resolution(self) -> int: ...

    def solve(self, inputs: SolverInput, /) -> SolverOutput: ...


def compare_on_mesh(surrogate: GridSurrogate, mesh: skfem.Mesh, coefficient: ArrayLike, *,
                    solver: DarcyFEMSolver | None = None) -> MeshComparison:
    """Evaluate a grid surrogate on a mesh problem and compare with the P1 FEM solution.

    Parameters
    ----------
    surrogate
        A Darcy surrogate with ``resolution`` and ``solve(a)`` for ``a`` of shape (n, n).
    mesh
        ``MeshTri1`` of the unit square.
    coefficient : (nelements,) array
        Element-wise coefficient, > 0.
    solver
        A ``DarcyFEMSolver(element="P1", linear_solver=...)`` (not ``"gmg"``); default
        ``DarcyFEMSolver(linear_solver="amg", forcing=<surrogate's training forcing>)``.

    Raises
    ------
    DatasetError
        Without ``solver``, when the surrogate was trained on data imported without its
        forcing (no default is assumed).
    """
    if solver is None:
        provenance = getattr(surrogate, "provenance", {})
        require_physics(provenance, "darcy", source="the surrogate's training data")
        forcing = float(provenance.get("forcing", 1.0))
        solver = DarcyFEMSolver(linear_solver="amg", forcing=forcing)
    u, report = solver.solve_mesh(mesh, coefficient)
    t0 = time.perf_counter()
    grid_a = coefficient_to_grid(mesh, coefficient, int(surrogate.resolution))
    pred = grid_to_mesh(np.asarray(surrogate.solve(grid_a), dtype=np.float64), mesh)
    elapsed = time.perf_counter() - t0
    basis = skfem.Basis(mesh, skfem.ElementTriP1())
    m_mat, k_mat = _mass.assemble(basis), _laplace.assemble(basis)
    e = pred - u
    return MeshComparison(
        coefficient=np.asarray(coefficient, dtype=np.float64), grid_coefficient=grid_a,
        solution=u, prediction=pred, error=e,
        rel_l2=float(np.sqrt((e @ (m_mat @ e)) / (u @ (m_mat @ u)))),
        rel_h1=float(np.sqrt((e @ (k_mat @ e)) / (u @ (k_mat @ u)))),
        report=report, surrogate_time=elapsed,
    )


def export_fields(path: str | os.PathLike[str], mesh: skfem.Mesh, *,
                  point_data: dict[str, ArrayLike] | None = None,
                  cell_data: dict[str, ArrayLike] | None = None) -> None:
    """Write ``mesh`` with nodal and element fields for ParaView.

    The mesh goes through scikit-fem's own conversion (:func:`skfem.io.meshio.to_meshio`, as
    :meth:`skfem.Mesh.save` does), so every mesh type scikit-fem reads back is written
    (triangles, quadrilaterals, ...); 2D points get a zero z for VTU, which requires 3D points.
    A VTU file is written atomically (:mod:`neuralop_fem.files`); XDMF writes a companion
    ``.h5`` file that it names, so it is written in place.

    Parameters
    ----------
    path
        ``*.vtu`` or ``*.xdmf``.
    mesh
        Any scikit-fem mesh, e.g. ``MeshTri1`` or ``MeshQuad1``.
    point_data : {name: (nvertices,) array}
    cell_data : {name: (nelements,) array}

    Raises
    ------
    InputError
        Another suffix.
    ShapeError
        A field of the wrong length.
    """
    to_meshio = require("skfem.io.meshio", needed_for="export_fields").to_meshio

    suffix = os.fspath(path).rsplit(".", 1)[-1].lower()
    if suffix not in ("vtu", "xdmf"):
        msg = f"`path` must end in .vtu or .xdmf; got {os.fspath(path)!r}."
        raise InputError(msg)
    pdata = _fields(point_data, "point_data", mesh.nvertices)
    cdata = {k: [v] for k, v in _fields(cell_data, "cell_data", mesh.nelements).items()}
    out = to_meshio(mesh, pdata, cdata)
    if out.points.shape[1] == 2:
        out.points = np.column_stack([out.points, np.zeros(len(out.points))])
    if suffix == "xdmf":
        out.write(os.fspath(path))
        return
    with atomic_path(path) as tmp:
        out.write(os.fspath(tmp), file_format="vtu")


def _fields(data: dict[str, ArrayLike] | None, name: str, size: int) -> dict[str, Any]:
    fields = {}
    for k, v in (data or {}).items():
        arr = np.asarray(v, dtype=np.float64)
        if arr.shape != (size,):
            msg = f"`{name}[{k!r}]` must have shape ({size},); got {arr.shape}."
            raise ShapeError(msg)
        fields[k] = arr
    return fields


def read_fields(path: str | os.PathLike[str]) -> tuple[skfem.Mesh, dict[str, NDArray[np.float64]],
                                                       dict[str, NDArray[np.float64]]]:
    """Read a file written by :func:`export_fields` (or any file scikit-fem reads).

    Uses :meth:`skfem.Mesh.load`, so the mesh type is the file's (``MeshTri1``,
    ``MeshQuad1``, ...) and 2D points lose the zero z.

    Returns
    -------
    (skfem.Mesh, point_data, cell_data)
        The fields by name: ``(nvertices,)`` and ``(nelements,)`` arrays (scikit-fem's own
        ``skfem:`` boundary/subdomain encodings are decoded into the mesh, not returned).
    """
    require("skfem.io.meshio", needed_for="read_fields")
    out = ["point_data", "cell_data"]
    mesh = skfem.Mesh.load(os.fspath(path), out=out)
    points = {k: np.asarray(v) for k, v in out[0].items()}
    cells = {k: np.concatenate([np.asarray(b) for b in v]) for k, v in out[1].items()
             if not k.startswith("skfem:")}
    return mesh, points, cells


def mesh_from_meshio(m: meshio.Mesh) -> skfem.Mesh:
    """A scikit-fem mesh from a meshio mesh (:func:`skfem.io.meshio.from_meshio`).

    The type follows the cells (triangles -> ``MeshTri1``, quadrilaterals -> ``MeshQuad1``,
    ...); the z coordinate of a 2D mesh is dropped.

    Raises
    ------
    InputError
        If ``m`` holds no cell type scikit-fem supports.
    """
    from_meshio = require("skfem.io.meshio", needed_for="mesh_from_meshio").from_meshio
    try:
        return from_meshio(m)
    except NotImplementedError:
        msg = f"`m` must contain cells scikit-fem supports; got {[c.type for c in m.cells]}."
        raise InputError(msg) from None
