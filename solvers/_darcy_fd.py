"""Vectorised assembly of the 5-point finite-difference Darcy operator on the node grid.

Unknowns are the interior nodes ``(i, j)``, ``1 <= i, j <= n - 2``, of the ``n x n`` grid
``x_i = i / (n - 1)``, numbered x-major: ``k = (i - 1) * (n - 2) + (j - 1)`` (the order of
``u[1:-1, 1:-1].ravel()``). The scaled system is

.. math::

    \\sum_{\\text{faces } f \\ni k} a_f\\,(u_k - u_{k_f}) = h^2 f_k ,

i.e. ``h^2`` times the 5-point discretisation of :math:`-\\nabla\\cdot(a\\nabla u) = f`, where
``a_f`` is the harmonic (default) or arithmetic mean of the two nodal coefficients on either
side of the face. The sparsity pattern is built once per ``n``; each sample only fills in the
CSR ``data`` array with array operations.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

__all__ = ["AVERAGINGS", "assemble_fd", "face_coefficients"]

AVERAGINGS = ("harmonic", "arithmetic")


def face_coefficients(
    a: NDArray[np.float64], *, averaging: str
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Face coefficients between neighbouring nodes.

    Parameters
    ----------
    a : (n_samples, n, n) array
        Nodal coefficient, strictly positive.
    averaging
        ``"harmonic"``: ``2 a_1 a_2 / (a_1 + a_2)``; ``"arithmetic"``: ``(a_1 + a_2) / 2``.

    Returns
    -------
    ax : (n_samples, n - 1, n) array
        Coefficient on the face between ``(i, j)`` and ``(i + 1, j)``.
    ay : (n_samples, n, n - 1) array
        Coefficient on the face between ``(i, j)`` and ``(i, j + 1)``.
    """
    a1x, a2x = a[:, :-1, :], a[:, 1:, :]
    a1y, a2y = a[:, :, :-1], a[:, :, 1:]
    if averaging == "harmonic":
        return 2.0 * a1x * a2x / (a1x + a2x), 2.0 * a1y * a2y / (a1y + a2y)
    return 0.5 * (a1x + a2x), 0.5 * (a1y + a2y)


@lru_cache(maxsize=8)
def _pattern(n: int) -> tuple[NDArray[np.int32], NDArray[np.int32], NDArray[np.int64]]:
    """CSR ``indices``, ``indptr`` and the COO->CSR permutation of the interior operator.

    COO entries are listed as: diagonal (m*m), then west, east, south, north off-diagonals
    (each only where the neighbour is interior); ``perm`` maps CSR slot -> COO entry.
    """
    m = n - 2
    k = np.arange(m * m).reshape(m, m)
    rows = [k.ravel(), k[1:, :].ravel(), k[:-1, :].ravel(), k[:, 1:].ravel(), k[:, :-1].ravel()]
    cols = [k.ravel(), k[:-1, :].ravel(), k[1:, :].ravel(), k[:, :-1].ravel(), k[:, 1:].ravel()]
    row = np.concatenate(rows)
    col = np.concatenate(cols)
    order = np.arange(row.size, dtype=np.float64) + 1.0
    csr = sp.csr_matrix((order, (row, col)), shape=(m * m, m * m))
    csr.sort_indices()
    perm = csr.data.astype(np.int64) - 1
    return csr.indices.copy(), csr.indptr.copy(), perm


def assemble_fd(
    a: NDArray[np.float64], *, averaging: str = "harmonic"
) -> list[sp.csr_matrix]:
    """Scaled 5-point matrices ``h^2 A`` for a batch of nodal coefficients.

    Parameters
    ----------
    a : (n_samples, n, n) array
        Nodal coefficient including the boundary nodes (the boundary values enter the
        faces between the first interior nodes and the boundary).
    averaging
        Face averaging, one of :data:`AVERAGINGS`.

    Returns
    -------
    list of (m*m, m*m) CSR matrices, ``m = n - 2``
        Symmetric positive definite, weakly diagonally dominant M-matrices.
    """
    n = a.shape[-1]
    m = n - 2
    ax, ay = face_coefficients(a, averaging=averaging)
    # Faces seen from interior node (i, j): west (i-1/2), east (i+1/2), south, north.
    west = ax[:, :-1, 1:-1]  # (s, m, m): face between i-1 and i, for i = 1..m
    east = ax[:, 1:, 1:-1]
    south = ay[:, 1:-1, :-1]
    north = ay[:, 1:-1, 1:]
    diag = (west + east + south + north).reshape(len(a), -1)
    off_w = -ax[:, 1:-1, 1:-1]  # between interior rows i and i-1 (i = 2..m): (s, m-1, m)
    off_s = -ay[:, 1:-1, 1:-1]  # between interior cols j and j-1: (s, m, m-1)
    coo = np.concatenate(
        [
            diag,
            off_w.reshape(len(a), -1),
            off_w.reshape(len(a), -1),
            off_s.reshape(len(a), -1),
            off_s.reshape(len(a), -1),
        ],
        axis=1,
    )
    indices, indptr, perm = _pattern(n)
    # Fancy indexing may return a strided (transposed) view; compiled kernels need contiguous data.
    data = np.ascontiguousarray(coo[:, perm])
    return [sp.csr_matrix((d, indices, indptr), shape=(m * m, m * m)) for d in data]
