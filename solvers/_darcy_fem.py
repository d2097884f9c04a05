"""P1 / Q1 finite-element assembly of the Darcy problem with scikit-fem.

Weak form: find ``u`` in ``V_h`` with ``u = 0`` on the boundary such that
``int a grad(u) . grad(v) dx = int f v dx`` for all ``v`` in ``V_h`` vanishing on the boundary.

On the node grid the coefficient given at the nodes is interpolated (P1 / Q1 interpolant) and
integrated with scikit-fem's default quadrature; for P1 this equals the element-wise mean of
the three vertex values, because the gradients are constant per triangle. On a general mesh
the coefficient is element-wise constant.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import scipy.sparse as sp
import skfem
from numpy.typing import NDArray
from skfem.helpers import dot, grad

from .errors import InputError

__all__ = ["ELEMENTS", "GridFEM", "assemble_mesh", "element_for", "grid_fem"]

ELEMENTS = ("P1", "Q1")

_ELEMENT_OF_MESH = {
    ("P1", skfem.MeshTri1): skfem.ElementTriP1,
    ("P1", skfem.MeshTet1): skfem.ElementTetP1,
    ("Q1", skfem.MeshQuad1): skfem.ElementQuad1,
    ("Q1", skfem.MeshHex1): skfem.ElementHex1,
}


@skfem.BilinearForm
def _diffusion(u, v, w):  # noqa: ANN001, ANN202 (scikit-fem form signature)
    return w.a * dot(grad(u), grad(v))


@skfem.LinearForm
def _load(v, w):  # noqa: ANN001, ANN202
    return w.f * v


def element_for(mesh: skfem.Mesh, element: str) -> skfem.Element:
    """The scikit-fem element named ``element`` (``"P1"``/``"Q1"``) for ``mesh``'s cell type.

    Raises
    ------
    InputError
        If the element does not fit the mesh (P1 needs triangles/tetrahedra, Q1 quads/hexes).
    """
    for (name, mesh_type), elem in _ELEMENT_OF_MESH.items():
        if name == element and isinstance(mesh, mesh_type):
            return elem()
    fits = sorted({m.__name__ for (name, m) in _ELEMENT_OF_MESH if name == element})
    msg = (
        f"`mesh` must be one of {fits} for element={element!r}; got {type(mesh).__name__}. "
        "Choose element='P1' for simplices or 'Q1' for quads/hexes."
    )
    raise InputError(msg)


class GridFEM:
    """P1 or Q1 discretisation on the ``n x n`` node grid of the unit square.

    Attributes
    ----------
    basis : skfem.CellBasis
    grid_of_dof : (n*n,) int array
        Flat grid index ``i * n + j`` of each scikit-fem dof (node).
    interior_dofs : ((n-2)**2,) int array
        scikit-fem dofs of the interior grid nodes in x-major grid order.
    """

    def __init__(self, n: int, element: str) -> None:
        x = np.linspace(0.0, 1.0, n)
        mesh_type = skfem.MeshTri if element == "P1" else skfem.MeshQuad
        mesh = mesh_type.init_tensor(x, x)
        self.basis = skfem.Basis(mesh, element_for(mesh, element))
        ij = np.rint(mesh.p * (n - 1)).astype(np.int64)
        self.grid_of_dof = ij[0] * n + ij[1]
        dof_of_grid = np.empty(n * n, dtype=np.int64)
        dof_of_grid[self.grid_of_dof] = np.arange(n * n)
        interior = np.arange(n * n).reshape(n, n)[1:-1, 1:-1].ravel()
        self.interior_dofs = dof_of_grid[interior]

    def stiffness(self, a: NDArray[np.float64]) -> sp.csr_matrix:
        """The full stiffness matrix (scikit-fem dof order, boundary included) for ``a`` (n, n)."""
        basis = self.basis
        return _diffusion.assemble(basis, a=basis.interpolate(a.ravel()[self.grid_of_dof]))

    def assemble(
        self, a: NDArray[np.float64], f: float | NDArray[np.float64]
    ) -> tuple[sp.csr_matrix, NDArray[np.float64]]:
        """Interior stiffness matrix (grid order) and load vector for one sample.

        Parameters
        ----------
        a : (n, n) array
            Nodal coefficient.
        f : float or (n, n) array
            Constant forcing, or nodal forcing values (interpolated).
        """
        basis = self.basis
        k_mat = self.stiffness(a)
        f_h = f if np.isscalar(f) else basis.interpolate(np.asarray(f).ravel()[self.grid_of_dof])
        load = _load.assemble(basis, f=f_h)
        idx = self.interior_dofs
        return k_mat[idx][:, idx].tocsr(), load[idx]


@lru_cache(maxsize=4)
def grid_fem(n: int, element: str) -> GridFEM:
    """Cached :class:`GridFEM` (mesh and basis are reused across samples)."""
    return GridFEM(n, element)


def assemble_mesh(
    basis: skfem.CellBasis, coefficient: NDArray[np.float64], forcing: float
) -> tuple[sp.csr_matrix, NDArray[np.float64], NDArray[np.int64]]:
    """Stiffness matrix, load vector and interior dofs on a general mesh.

    Parameters
    ----------
    basis
        P1/Q1 basis on the mesh.
    coefficient : (n_elements,) array
        Element-wise constant coefficient.
    forcing
        Constant right-hand side ``f``.

    Returns
    -------
    A : (n_interior, n_interior) CSR matrix
    b : (n_interior,) array
    interior : (n_interior,) int array
        Dofs not on the boundary, the unknowns of ``A``.
    """
    a_q = np.repeat(coefficient[:, None], basis.X.shape[-1], axis=1)
    k_mat = _diffusion.assemble(basis, a=a_q)
    load = _load.assemble(basis, f=forcing)
    boundary = basis.get_dofs().all()
    interior = np.setdiff1d(np.arange(basis.N), boundary)
    return k_mat[interior][:, interior].tocsr(), load[interior], interior
