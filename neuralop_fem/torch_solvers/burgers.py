r"""The pseudo-spectral ETDRK4 Burgers solver in torch: batched, on the CPU or a GPU.

.. math::

    u_t + u u_x = \nu u_{xx},\qquad x \in [0, 1) \text{ periodic},

on ``x_i = i/n``. :class:`TorchBurgersSpectralSolver` is the twin of
:class:`solvers.burgers.BurgersSpectralSolver`: the same Fourier collocation with the 2/3 rule,
the same reduced FFT length for the product (``mode_tol``), the same ETDRK4 steps (Cox &
Matthews) with the same contour-integral coefficients (Kassam & Trefethen, computed by the numpy
solver's stepper :class:`solvers.kernels.SpectralStepper` and moved to the device) and the same
graded time grid (:meth:`~solvers.burgers.BurgersSpectralSolver.time_grid`). In float64 it
agrees with the numpy solver to round-off (``tests/torch_solvers``: at most 1e-10 relative);
spectral in space and order 4 in time like it.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np
import scipy.fft
import torch
from numpy.typing import NDArray

from solvers.burgers import BurgersSpectralSolver
from solvers.contract import SolveReport, SolverInput, SolverOutput, as_batch
from solvers.kernels import SpectralStepper

from ..errors import ConvergenceError, InputError
from ._device import (
    DTYPES,
    check_batch_size,
    check_device,
    check_dtype,
    chunks,
    out_of_memory,
    synchronize,
)

__all__ = ["TorchBurgersSpectralSolver"]

#: The settings of the numpy solver that the twin takes over unchanged.
_NUMERICS = ("viscosity", "final_time", "output_times", "dt", "first_dt", "growth", "n_contour",
             "mode_tol")


@lru_cache(maxsize=512)
def _coefficients(n: int, viscosity: float, h: float, n_contour: int, device: str,
                  dtype: str) -> tuple[torch.Tensor, ...]:
    """``(e, e2, q, f1, f2, f3)`` of the numpy solver for step ``h`` (its stepper's, shared
    with its solves), on ``device``."""
    c = SpectralStepper(n, viscosity, n_contour=n_contour, mode_tol=0.0).coefficients(h)
    # copies: the numpy solver's cached arrays are read-only
    return tuple(torch.as_tensor(np.array(v), dtype=DTYPES[dtype], device=device)
                 for v in (c.e, c.e2, c.q, c.f1, c.f2, c.f3))


class _Stepper:
    """ETDRK4 on the rfft coefficients ``c_k = rfft(u)_k / n`` of a batch (the numpy solver's
    :class:`solvers.kernels.SpectralStepper`, in torch)."""

    def __init__(self, solver: TorchBurgersSpectralSolver, n: int, *, lagged: bool) -> None:
        self.solver = solver
        self.n = n
        self.lagged = lagged
        self._pending: tuple[torch.Tensor, Any] | None = None
        self.cutoff = (n - 1) // 3
        k = torch.arange(n // 2 + 1, device=solver.device)
        ik = 2j * math.pi * k.to(torch.float64)
        if n % 2 == 0:
            ik[-1] = 0.0  # the Nyquist mode has no real derivative (and is filtered anyway)
        self.k = k
        self.half_ik = (-0.5 * ik).to(solver.complex_dtype)

    def _statistics(self, ch: torch.Tensor) -> torch.Tensor:
        """``[last mode above mode_tol (-1: none), all finite]`` of the state, on the device."""
        # |c_k|^2 > tol^2 max |c|^2: the numpy solver's test without the complex abs (hypot)
        power = (ch.real.square() + ch.imag.square()).amax(dim=0)
        top = power.max()
        last = torch.where(power > self.solver.mode_tol**2 * top, self.k, -1).max()
        return torch.stack([last.to(top.dtype), torch.isfinite(top).to(top.dtype)])

    def band(self, ch: torch.Tensor) -> tuple[int, int, bool]:
        """(FFT length m, band edge K, all finite) for the step from ``ch``.

        Read at once (one device sync per step, the numpy solver's choice exactly) or, when
        ``lagged`` (on a GPU), from the previous state: its statistics were copied to the host
        while the previous step ran, so the host queues this step without waiting for the
        device. The band then trails by a step: a mode that crosses ``mode_tol`` (1e-16 of the
        largest) enters the product one step late, a change far below the round-off of the
        result (tested against the numpy solver).
        """
        if self.solver.mode_tol <= 0:
            return self.n, self.cutoff, True
        stats = self._statistics(ch)
        if not self.lagged:
            return self._band_from(stats.tolist())
        cuda = stats.is_cuda
        host = torch.empty(2, dtype=stats.dtype, pin_memory=cuda)
        host.copy_(stats, non_blocking=cuda)
        event = torch.cuda.Event() if cuda else None
        if event is not None:
            event.record()
        previous, self._pending = self._pending, (host, event)
        if previous is None:
            previous = self._pending
        if previous[1] is not None:
            previous[1].synchronize()
        return self._band_from(previous[0].tolist())

    def _band_from(self, stats: list[float]) -> tuple[int, int, bool]:
        k_last, finite = stats
        k_need = int(k_last) if k_last >= 0 else 1
        m = min(self.n, scipy.fft.next_fast_len(int(np.ceil(4.5 * k_need)) + 1, real=True))
        return m, min((m - 1) // 3, self.cutoff), bool(finite)

    def nonlinear(self, ch: torch.Tensor, m: int, kb: int) -> torch.Tensor:
        u = torch.fft.irfft(ch[:, : kb + 1], n=m, dim=-1, norm="forward")
        return self.half_ik[: kb + 1] * torch.fft.rfft(u * u, dim=-1, norm="forward")[:, : kb + 1]

    def step(self, ch: torch.Tensor, h: float, m: int, kb: int) -> torch.Tensor:
        """One ETDRK4 step of size ``h`` (Cox-Matthews form) with the product on ``m`` points.

        The numpy solver's expressions, with the products and sums fused into ``addcmul``
        (half the passes over the state: what bounds a step on a GPU)."""
        s = self.solver
        e, e2, q, f1, f2, f3 = _coefficients(self.n, s.viscosity, h, s.n_contour, s.device,
                                             s.dtype)
        b = slice(0, kb + 1)
        v = ch[:, b]
        e2_b, q_b = e2[b], q[b]
        nv = self.nonlinear(v, m, kb)
        e2v = e2_b * v
        a = torch.addcmul(e2v, q_b, nv)
        na = self.nonlinear(a, m, kb)
        nb = self.nonlinear(torch.addcmul(e2v, q_b, na), m, kb)
        cc = torch.addcmul(e2_b * a, q_b, torch.add(nb, nb).sub_(nv))
        nc = self.nonlinear(cc, m, kb)
        out = torch.empty_like(ch)
        band = out[:, b]
        torch.mul(e[b], v, out=band)
        band.addcmul_(f1[b], nv)
        band.addcmul_(f2[b], na.add_(nb), value=2)
        band.addcmul_(f3[b], nc)
        torch.mul(e[kb + 1:], ch[:, kb + 1:], out=out[:, kb + 1:])
        return out


@dataclass(frozen=True, kw_only=True)
class TorchBurgersSpectralSolver:
    r"""Batched pseudo-spectral ETDRK4 Burgers solver in torch (twin of
    :class:`solvers.burgers.BurgersSpectralSolver`).

    Parameters
    ----------
    viscosity, final_time, output_times, dt, first_dt, growth, n_contour, mode_tol
        As for :class:`~solvers.burgers.BurgersSpectralSolver` (same defaults, same checks).
    device
        Torch device: ``"cpu"`` (all the threads torch uses), ``"cuda"`` or ``"cuda:N"``.
    dtype
        ``"float64"`` (default; agrees with the numpy solver to round-off) or ``"float32"``
        (complex64 state; about 1e-6 relative, see ``benchmarks/results/gpu_solvers.md``).
    batch_size
        Samples integrated together on the device; None: all of a call's samples at once.
        The state needs about ``12 n`` numbers per sample (complex coefficients of the four
        stages and the FFT work arrays).

    Notes
    -----
    The report's ``iterations`` are the time steps and ``residual`` the numpy solver's
    resolution indicator (the relative norm of the top fifth of the retained spectrum at the
    final time). The time step does not depend on the data; the reduced FFT length of each step
    depends on the batch's largest modes, so a sample agrees with other batchings to round-off.

    Examples
    --------
    >>> import numpy as np
    >>> u0 = np.sin(2 * np.pi * np.arange(64) / 64)
    >>> u = TorchBurgersSpectralSolver(viscosity=0.1, final_time=0.1).solve(u0)
    >>> u.shape
    (64,)
    """

    problem: ClassVar[str] = "burgers"

    viscosity: float = BurgersSpectralSolver.viscosity
    final_time: float = 1.0
    output_times: tuple[float, ...] | None = None
    dt: float | None = None
    first_dt: float | None = None
    growth: float = 1.2
    n_contour: int = 32
    mode_tol: float = 1e-16
    device: str = "cpu"
    dtype: str = "float64"
    batch_size: int | None = None

    def __post_init__(self) -> None:
        owner = type(self).__name__
        reference = BurgersSpectralSolver(**{k: getattr(self, k) for k in _NUMERICS})
        for name in _NUMERICS:  # the numpy solver's checks and normalised values
            object.__setattr__(self, name, getattr(reference, name))
        object.__setattr__(self, "device", check_device(self.device, owner=owner))
        object.__setattr__(self, "dtype", check_dtype(self.dtype, owner=owner))
        object.__setattr__(self, "batch_size", check_batch_size(self.batch_size))

    @classmethod
    def from_solver(cls, solver: BurgersSpectralSolver, *, device: str = "cpu",
                    dtype: str = "float64", batch_size: int | None = None
                    ) -> TorchBurgersSpectralSolver:
        """The twin of ``solver`` (its settings) on ``device``."""
        if not isinstance(solver, BurgersSpectralSolver):
            msg = f"`solver` must be a BurgersSpectralSolver; got {type(solver).__name__}."
            raise InputError(msg)
        return cls(**{k: getattr(solver, k) for k in _NUMERICS}, device=device, dtype=dtype,
                   batch_size=batch_size)

    def reference(self) -> BurgersSpectralSolver:
        """The numpy solver with the same settings (the one this solver mirrors)."""
        return BurgersSpectralSolver(**{k: getattr(self, k) for k in _NUMERICS})

    @property
    def config(self) -> dict[str, Any]:
        """Every setting, JSON-serialisable; ``Class(**config)`` rebuilds."""
        cfg = dataclasses.asdict(self)
        if cfg["output_times"] is not None:
            cfg["output_times"] = list(cfg["output_times"])
        return cfg

    @property
    def complex_dtype(self) -> torch.dtype:
        return torch.complex128 if self.dtype == "float64" else torch.complex64

    def solve(self, inputs: SolverInput, *, initial_guess: object = None) -> SolverOutput:
        """Solve for each initial condition; see :meth:`solve_with_report`."""
        return self.solve_with_report(inputs, initial_guess=initial_guess)[0]

    def solve_with_report(self, inputs: SolverInput, *, initial_guess: object = None
                          ) -> tuple[SolverOutput, SolveReport]:
        """Solve for each initial condition in ``inputs``.

        Parameters
        ----------
        inputs : (n_samples, n) or (n,) float array, or xarray.DataArray
            :math:`u_0` on :math:`x_i = i/n`; finite, n >= 4.
        initial_guess
            Must be None (a time-dependent problem has no initial guess).

        Returns
        -------
        solution
            ``(n_samples, n)`` at ``final_time``, or ``(n_samples, n_times, n)`` at
            ``output_times`` (float64, on the host); same form as ``inputs``.
        report : SolveReport
            ``iterations``: time steps; ``residual``: the resolution indicator;
            ``solve_time``: each batch's wall time (host-device copies included) / its size.

        Raises
        ------
        InputError, ShapeError
            Bad input (dtype, NaN/inf, shape, non-None ``initial_guess``).
        ConvergenceError
            Non-finite values during stepping (names the sample and the time).
        DeviceMemoryError
            A batch did not fit the device (names a ``batch_size`` to try).
        """
        if initial_guess is not None:
            msg = (f"`initial_guess` must be None for {type(self).__name__} (a time-dependent "
                   f"problem has no initial guess); got {type(initial_guess).__name__}.")
            raise InputError(msg)
        batch = as_batch(inputs, name="inputs", core_dims=("x",))
        u0 = batch.values
        ns, n = u0.shape
        if n < 4:
            msg = f"`inputs` must have at least 4 points along 'x'; got {n}."
            raise InputError(msg)
        stops = np.asarray(self.output_times or (self.final_time,), dtype=np.float64)
        grid = self.reference().time_grid(u0)
        states = np.empty((ns, stops.size, n))
        tail = np.empty(ns)
        times = np.empty(ns)
        for sl in chunks(ns, self.batch_size):
            t0 = time.perf_counter()
            with out_of_memory(owner=type(self).__name__, device=self.device,
                               batch=sl.stop - sl.start, what=f"n = {n}"):
                states[sl], tail[sl] = self._integrate(u0[sl], grid, stops, first=sl.start)
            times[sl] = (time.perf_counter() - t0) / (sl.stop - sl.start)
        report = SolveReport(iterations=np.full(ns, grid.size - 1, dtype=np.int64),
                             residual=tail, solve_time=times, method=self._method_name())
        if self.output_times is None:
            return batch.restore(states[:, 0], name="u"), report
        return batch.restore(states, name="u", extra_dims=[("time", stops)]), report

    def _integrate(self, u0: NDArray[np.float64], grid: NDArray[np.float64],
                   stops: NDArray[np.float64], *, first: int
                   ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """States at ``stops`` ``(s, n_stops, n)`` and the tail indicator ``(s,)`` of a batch."""
        n = u0.shape[-1]
        stepper = _Stepper(self, n, lagged=self._lagged_band())
        u = torch.as_tensor(u0, device=self.device).to(DTYPES[self.dtype])
        vh = torch.fft.rfft(u, dim=-1, norm="forward")
        out = torch.empty((u0.shape[0], stops.size, n), dtype=torch.float64, device=self.device)
        stop_index = {float(s): i for i, s in enumerate(stops)}
        if 0.0 in stop_index:
            out[:, stop_index[0.0]] = u
        for t0, t1 in zip(grid[:-1], grid[1:], strict=True):
            m, kb, finite = stepper.band(vh)
            if not finite:
                self._blow_up(vh, float(t0), first)
            vh = stepper.step(vh, float(t1 - t0), m, kb)
            i = stop_index.get(float(t1))
            if i is not None:
                out[:, i] = torch.fft.irfft(vh, n=n, dim=-1, norm="forward")
        if not bool(torch.isfinite(vh).all()):
            self._blow_up(vh, float(grid[-1]), first)
        k = stepper.k
        band = (k > 0.8 * stepper.cutoff) & (k <= stepper.cutoff)
        power = vh.abs().to(torch.float64) ** 2
        norm = power.sum(-1).sqrt()
        tail = power[:, band].sum(-1).sqrt() / torch.where(norm > 0, norm, 1.0)
        synchronize(self.device)
        return out.cpu().numpy(), tail.cpu().numpy()

    def _lagged_band(self) -> bool:
        """Whether the band of a step is read from the previous state (on a GPU: no sync)."""
        return self.device.startswith("cuda")

    def _blow_up(self, vh: torch.Tensor, t: float, first: int) -> None:
        bad = ~torch.isfinite(vh).all(dim=-1)
        sample = first + int(torch.nonzero(bad)[0, 0])
        msg = (f"{type(self).__name__}: non-finite values by t={t:.6g} in sample {sample}; the "
               "time step is too large for this data: pass a smaller `dt`.")
        raise ConvergenceError(msg)

    def _method_name(self) -> str:
        return (f"pseudo-spectral (2/3 rule) + ETDRK4, graded steps; torch {self.dtype} on "
                f"{self.device}")
