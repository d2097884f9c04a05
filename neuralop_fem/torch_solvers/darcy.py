r"""The 5-point finite-difference Darcy solver in torch: batched PCG on the CPU or a GPU.

.. math::

    -\nabla\cdot(a\nabla u) = f \text{ in } (0, 1)^2, \qquad u = 0 \text{ on the boundary},

on the ``n x n`` node grid ``x_i = i/(n-1)`` (axis 0 is ``x``). :class:`TorchDarcyFDSolver` is
the twin of :class:`solvers.darcy.DarcyFDSolver`: the same scaled system ``h^2 A u = h^2 f`` on
the interior nodes (:func:`solvers._darcy_fd.face_coefficients`: harmonic or arithmetic face
means), applied as a stencil to a batch, and solved like the numpy solver's batched
``"dst-cg"`` (:mod:`solvers._darcy_batched`): conjugate gradients in the flexible
Polak-Ribiere form, preconditioned by the constant-coefficient fast Poisson solver scaled per
sample by ``sqrt(min a_f max a_f)``, each sample stopping at its own relative residual
``||b - A u|| / ||b|| <= tol`` (checked on the true residual). The sine transform (DST-I) is
built from ``torch.fft.rfft`` (:func:`dst1`), ``O(n^2 log n)`` per sample, in single precision
like the numpy solver's; the preconditioned condition number is at most the contrast
``max a_f / min a_f``, so the iterations do not grow with ``n`` (about 20-25 to 1e-10 for the
12/3 benchmark coefficient).
Second order in space for smooth ``a`` (the discretisation's order).
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from numpy.typing import ArrayLike, NDArray

from solvers.contract import SolveReport, SolverInput, SolverOutput
from solvers.darcy import DarcyFDSolver
from solvers.darcy_inputs import system_inputs

from ..errors import ConvergenceError, InputError
from ._device import check_batch_size, check_device, chunks, out_of_memory, synchronize

__all__ = ["TorchDarcyFDSolver", "apply_operator", "dst1", "poisson_preconditioner"]

#: The settings of the numpy solver that the twin takes over unchanged.
_PHYSICS = ("forcing", "averaging", "tol", "maxiter")
#: The preconditioner runs in single precision, as the numpy solver's batched ``"dst-cg"``: its
#: rounding (about 1e-7 relative) is absorbed by the flexible Polak-Ribiere form (residuals in
#: double precision reach 1e-12); measured 1.6x less CPU time per sample at 421, half an
#: iteration more.
_PRECONDITIONER_DTYPE = torch.float32
#: Iteration cap when ``maxiter`` is None (the numpy solver's for its Krylov solvers).
_DEFAULT_MAXITER = 200


def dst1(x: torch.Tensor) -> torch.Tensor:
    """The unnormalised DST-I along the last axis, from one real FFT of length ``m + 1``.

    ``y_k = sum_{j=1}^{m} x_j sin(pi j k / (m + 1))``, ``k = 1..m``; applying it twice gives
    ``(m + 1) / 2`` times the input. The pre-processing of Numerical Recipes' ``sinft``
    (Press et al., 3rd ed., 12.4.1): with ``N = m + 1`` and ``x_0 = x_N = 0``, the real FFT
    ``V`` of ``v_j = sin(pi j / N) (x_j + x_{N-j}) + (x_j - x_{N-j}) / 2`` gives the even
    terms ``y_{2k} = -Im V_k`` and the odd ones by the running sum
    ``y_{2k+1} = Re V_0 / 2 + Re V_1 + ... + Re V_k`` (half the FFT length of the odd
    extension).
    """
    m = x.shape[-1]
    n = m + 1
    padded = F.pad(x, (1, 1))  # x_0 .. x_N
    head, tail = padded[..., :n], padded[..., 1:].flip(-1)  # x_j and x_{N-j}, j = 0..N-1
    v = _sines(n, str(x.device), x.dtype) * (head + tail) + 0.5 * (head - tail)
    spectrum = torch.fft.rfft(v, dim=-1)
    out = torch.empty_like(x)
    out[..., 1::2] = -spectrum.imag[..., 1:m // 2 + 1]
    odd = spectrum.real[..., :(m + 1) // 2].clone()
    odd[..., 0] *= 0.5
    out[..., 0::2] = torch.cumsum(odd, dim=-1)
    return out


@lru_cache(maxsize=16)
def _sines(n: int, device: str, dtype: torch.dtype) -> torch.Tensor:
    """``sin(pi j / n)``, ``j = 0..n-1``."""
    j = torch.arange(n, dtype=torch.float64)
    return torch.sin(math.pi * j / n).to(device=device, dtype=dtype)


@lru_cache(maxsize=16)
def _poisson_eigenvalues(m: int, device: str) -> torch.Tensor:
    """``(2 / (m + 1))^2 / (lambda_j + lambda_k)``, ``lambda_j = 2 - 2 cos(pi j / (m + 1))``:
    the inverse eigenvalues of the scaled unit-coefficient 5-point Laplacian, with the DST-I's
    normalisation folded in."""
    lam = 2.0 - 2.0 * torch.cos(math.pi * torch.arange(1, m + 1, dtype=torch.float64) / (m + 1))
    inv = (2.0 / (m + 1)) ** 2 / (lam[:, None] + lam[None, :])
    return inv.to(device)


def poisson_preconditioner(r: torch.Tensor, inv: torch.Tensor) -> torch.Tensor:
    """``S ((S r S) * inv) S`` on every sample of ``r`` (s, m, m), ``S`` the DST-I: the fast
    Poisson solve when ``inv`` holds :func:`_poisson_eigenvalues` divided by each sample's
    coefficient scale."""
    z = dst1(dst1(r).transpose(-1, -2)).transpose(-1, -2)
    z = z * inv
    return dst1(dst1(z).transpose(-1, -2)).transpose(-1, -2)


def apply_operator(ax: torch.Tensor, ay: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """The scaled 5-point operator ``h^2 A x`` on interior fields, batched.

    Parameters
    ----------
    ax : (s, m + 1, m) tensor
        Faces between ``(i, j)`` and ``(i + 1, j)`` for the interior columns ``j = 1..m``
        (``face_coefficients(a)[0][:, :, 1:-1]``).
    ay : (s, m, m + 1) tensor
        Faces between ``(i, j)`` and ``(i, j + 1)`` for the interior rows.
    x : (s, m, m) tensor
        Interior values (zero boundary values implied).

    Returns
    -------
    (s, m, m) tensor: ``sum_faces a_f (x_k - x_neighbour)``.
    """
    fx = ax * torch.diff(F.pad(x, (0, 0, 1, 1)), dim=1)
    fy = ay * torch.diff(F.pad(x, (1, 1)), dim=2)
    return (fx[:, :-1] - fx[:, 1:]) + (fy[:, :, :-1] - fy[:, :, 1:])


def _faces(a: torch.Tensor, averaging: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Interior face coefficients ``(ax (s, m+1, m), ay (s, m, m+1))`` of nodal ``a``
    (:func:`solvers._darcy_fd.face_coefficients`, the same expressions)."""
    a1x, a2x = a[:, :-1, 1:-1], a[:, 1:, 1:-1]
    a1y, a2y = a[:, 1:-1, :-1], a[:, 1:-1, 1:]
    if averaging == "harmonic":
        return 2.0 * a1x * a2x / (a1x + a2x), 2.0 * a1y * a2y / (a1y + a2y)
    return 0.5 * (a1x + a2x), 0.5 * (a1y + a2y)


def _norms(x: torch.Tensor) -> torch.Tensor:
    return torch.linalg.vector_norm(x, dim=(1, 2))


def _dot(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return (x * y).sum(dim=(1, 2))


def pcg(ax: torch.Tensor, ay: torch.Tensor, b: torch.Tensor, x0: torch.Tensor, *, tol: float,
        maxiter: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Fast-Poisson-preconditioned CG vectorised over samples, per-sample stopping.

    The numpy solver's batched ``"dst-cg"`` (:func:`solvers._darcy_batched._dst_cg`) in torch:
    Polak-Ribiere ``beta``, a sample's updates frozen once its true relative residual is at
    most ``tol``. Returns ``(x, iterations (s,), relative residual (s,))``.
    """
    s, m, _ = b.shape
    faces = torch.cat([ax.reshape(s, -1), ay.reshape(s, -1)], dim=1)
    scale = torch.sqrt(faces.amin(dim=1) * faces.amax(dim=1))
    inv = _poisson_eigenvalues(m, str(b.device))[None] / scale[:, None, None]
    inv = inv.to(_PRECONDITIONER_DTYPE)

    def precondition(r: torch.Tensor) -> torch.Tensor:
        return poisson_preconditioner(r.to(_PRECONDITIONER_DTYPE), inv).to(torch.float64)

    bnorm = _norms(b)
    bound = tol * bnorm
    x = x0.clone()
    r = b - apply_operator(ax, ay, x)
    iterations = torch.zeros(s, dtype=torch.int64, device=b.device)
    active = _norms(r) > bound
    z = precondition(r)
    p = z.clone()
    rz = _dot(r, z)
    for it in range(1, maxiter + 1):
        if not bool(active.any()):
            break
        ap = apply_operator(ax, ay, p)
        pap = _dot(p, ap)
        alpha = torch.where(active, rz / torch.where(active, pap, 1.0), 0.0)[:, None, None]
        x.addcmul_(alpha, p)
        r.addcmul_(alpha, ap, value=-1)
        iterations[active] = it
        newly = active & (_norms(r) <= bound)
        if bool(newly.any()):  # the recurrence says so: check the true residual (drift guard)
            sel = torch.nonzero(newly).squeeze(1)
            true = b[sel] - apply_operator(ax[sel], ay[sel], x[sel])
            r[sel] = true
            active[sel[_norms(true) <= bound[sel]]] = False
        z_old, z = z, precondition(r)
        rz_new = _dot(r, z)
        # Polak-Ribiere beta (flexible CG), as the numpy solver
        rdz = rz_new - _dot(r, z_old)
        beta = torch.where(active, rdz / torch.where(rz == 0, 1.0, rz), 0.0)[:, None, None]
        p.mul_(beta).add_(z)
        rz = rz_new
    residual = _norms(b - apply_operator(ax, ay, x))
    zero = bnorm == 0
    x[zero] = 0.0
    residual = torch.where(zero, 0.0, residual / torch.where(zero, 1.0, bnorm))
    return x, iterations, residual


@dataclass(frozen=True, kw_only=True)
class TorchDarcyFDSolver:
    """Batched 5-point FD Darcy solver in torch (twin of :class:`solvers.darcy.DarcyFDSolver`).

    Parameters
    ----------
    forcing
        Constant right-hand side ``f`` (benchmark: 1).
    averaging
        Face averaging, ``"harmonic"`` (default) or ``"arithmetic"``.
    tol
        Relative residual ``||b - A u|| / ||b||`` of the scaled system at which each sample
        stops, in (0, 1) (default 1e-10, the numpy solver's).
    maxiter
        Iteration cap; None: 200.
    device
        Torch device: ``"cpu"``, ``"cuda"`` or ``"cuda:N"``.
    batch_size
        Samples solved together; None: all of a call's samples at once. About 20 arrays of
        ``(n - 2)^2`` float64 per sample (40 MB at n = 421).

    Notes
    -----
    Float64 only (the preconditioner in float32): ``tol = 1e-10`` is below what float32
    residuals can show. Iterations are the CG iterations of each sample; ``residual`` the true
    final relative residual.

    Examples
    --------
    >>> import numpy as np
    >>> u = TorchDarcyFDSolver().solve(np.ones((33, 33)))
    >>> u.shape, round(float(u.max()), 4)
    ((33, 33), 0.0736)
    """

    problem: ClassVar[str] = "darcy"

    forcing: float = 1.0
    averaging: str = "harmonic"
    tol: float = 1e-10
    maxiter: int | None = None
    device: str = "cpu"
    batch_size: int | None = None

    def __post_init__(self) -> None:
        reference = self.reference()  # the numpy solver's checks and normalised values
        for name in _PHYSICS:
            object.__setattr__(self, name, getattr(reference, name))
        object.__setattr__(self, "device", check_device(self.device, owner=type(self).__name__))
        object.__setattr__(self, "batch_size", check_batch_size(self.batch_size))

    @classmethod
    def from_solver(cls, solver: DarcyFDSolver, *, device: str = "cpu",
                    batch_size: int | None = None) -> TorchDarcyFDSolver:
        """The twin of ``solver`` (its discretisation and tolerance; the linear solver is this
        class's) on ``device``."""
        if type(solver) is not DarcyFDSolver:
            msg = (f"`solver` must be a DarcyFDSolver (the node-grid 5-point scheme); got "
                   f"{type(solver).__name__}.")
            raise InputError(msg)
        return cls(**{k: getattr(solver, k) for k in _PHYSICS}, device=device,
                   batch_size=batch_size)

    def reference(self) -> DarcyFDSolver:
        """The numpy solver of the same discrete system and tolerance (its batched
        ``"dst-cg"``, the linear solver this class mirrors)."""
        return DarcyFDSolver(**{k: getattr(self, k) for k in _PHYSICS}, linear_solver="dst-cg")

    @property
    def config(self) -> dict[str, Any]:
        """Every setting, JSON-serialisable; ``Class(**config)`` rebuilds."""
        return dataclasses.asdict(self)

    def solve(self, inputs: SolverInput, *, initial_guess: ArrayLike | None = None,
              forcing: ArrayLike | None = None) -> SolverOutput:
        """Solve for each coefficient sample; see :meth:`solve_with_report`."""
        return self.solve_with_report(inputs, initial_guess=initial_guess, forcing=forcing)[0]

    def solve_with_report(self, inputs: SolverInput, *, initial_guess: ArrayLike | None = None,
                          forcing: ArrayLike | None = None
                          ) -> tuple[SolverOutput, SolveReport]:
        """Solve for each coefficient sample and report per-sample convergence.

        Parameters
        ----------
        inputs : (n_samples, n, n) or (n, n) array, or xarray.DataArray
            Coefficient ``a`` at the nodes, dims ``("sample", "x", "y")`` or ``("x", "y")``;
            finite and > 0; ``n >= 3``.
        initial_guess : array of the same shape as ``inputs``, or None
            Starting iterate; its boundary values are ignored.
        forcing : (n, n) or (n_samples, n, n) array, or None
            Nodal values of ``f`` overriding the constant ``self.forcing``.

        Returns
        -------
        u
            Solution at the nodes (float64, on the host), zero on the boundary, in the form of
            ``inputs``.
        report : SolveReport
            Per-sample CG iterations, true final relative residual, and each batch's wall time
            (host-device copies included) / its size.

        Raises
        ------
        ShapeError, InputError
            As :class:`~solvers.darcy.DarcyFDSolver` (the same checks).
        ConvergenceError
            A sample missed ``tol`` within ``maxiter`` iterations.
        DeviceMemoryError
            A batch did not fit the device (names a ``batch_size`` to try).
        """
        batch, guess, f = system_inputs(inputs, initial_guess, forcing,
                                        default_forcing=self.forcing)
        a = batch.values
        n_samples, n, _ = a.shape
        h2 = 1.0 / (n - 1) ** 2
        u = np.zeros_like(a)
        iterations = np.zeros(n_samples, dtype=np.int64)
        residual = np.zeros(n_samples)
        times = np.zeros(n_samples)
        maxiter = _DEFAULT_MAXITER if self.maxiter is None else self.maxiter
        for sl in chunks(n_samples, self.batch_size):
            t0 = time.perf_counter()
            size = sl.stop - sl.start
            with out_of_memory(owner=type(self).__name__, device=self.device, batch=size,
                               what=f"{n} x {n} nodes"):
                x, its, res = self._solve_batch(
                    a[sl], h2 * f[sl, 1:-1, 1:-1],
                    None if guess is None else guess[sl, 1:-1, 1:-1], maxiter=maxiter)
            u[sl, 1:-1, 1:-1] = x
            iterations[sl], residual[sl] = its, res
            times[sl] = (time.perf_counter() - t0) / size
        bad = np.flatnonzero(~(residual <= self.tol))
        if bad.size:
            s = int(bad[0])
            msg = (f"{type(self).__name__}: sample {s} missed the tolerance: relative residual "
                   f"{residual[s]:.3e} > tol {self.tol:.1e} after {iterations[s]} iterations. "
                   "Raise `maxiter`.")
            raise ConvergenceError(msg)
        report = SolveReport(iterations=iterations, residual=residual, solve_time=times,
                             method=self._method())
        return batch.restore(u, name="u"), report

    def _solve_batch(self, a: NDArray[np.float64], rhs: NDArray[np.float64],
                     x0: NDArray[np.float64] | None, *, maxiter: int
                     ) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.float64]]:
        dev = self.device
        at = torch.as_tensor(a, dtype=torch.float64, device=dev)
        b = torch.as_tensor(rhs, dtype=torch.float64, device=dev)
        start = (torch.zeros_like(b) if x0 is None
                 else torch.as_tensor(np.ascontiguousarray(x0), dtype=torch.float64, device=dev))
        ax, ay = _faces(at, self.averaging)
        x, its, res = pcg(ax, ay, b, start, tol=self.tol, maxiter=maxiter)
        synchronize(dev)
        return x.cpu().numpy(), its.cpu().numpy(), res.cpu().numpy()

    def _method(self) -> str:
        return (f"FD 5-point, {self.averaging} faces; fast-Poisson PCG (tol={self.tol:g}); "
                f"torch float64 on {self.device}")
