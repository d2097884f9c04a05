r"""Gaussian random fields for operator-learning inputs, and two-phase thresholding.

Two samplers, both zero-mean, batched (one inverse FFT / DCT over the whole batch) and
seeded either by one :class:`numpy.random.Generator` or by one integer seed per sample:

* :class:`PeriodicGRF` -- 1D periodic field on :math:`[0, 1)`, grid :math:`x_i = i/n`,
  covariance :math:`\sigma^2(-\Delta + \tau^2 I)^{-\alpha}` (Burgers initial data).
* :class:`NeumannGRF` -- 2D field on the :math:`n \times n` node grid of :math:`[0, 1]^2`,
  :math:`x_i = i/(n-1)`, homogeneous Neumann conditions, same covariance form (Darcy).

:func:`threshold` maps a field to the two-phase coefficient (12 where positive, 3 elsewhere)
and :func:`sample_seeds` gives the per-sample seed of sample ``k`` of a dataset, so that a
sample is reproducible from (dataset seed, k) alone.

References
----------
Z. Li et al., "Fourier neural operator for parametric partial differential equations",
ICLR 2021 (the GRF set-up of the Burgers and Darcy benchmarks).
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.fft
from numpy.typing import ArrayLike, NDArray

from .checks import check_int, check_real, plain
from .errors import InputError, ShapeError

if TYPE_CHECKING:  # pragma: no cover
    from .contract import SolverInput, SolverOutput

__all__ = ["NeumannGRF", "PeriodicGRF", "sample_seeds", "threshold"]


def _check_n(n: Any, *, minimum: int) -> int:
    return check_int(n, name="n", minimum=minimum)


def _check_param(value: Any, *, name: str) -> float:
    return check_real(value, name=name, low=0.0)


def _check_n_samples(n_samples: Any) -> int:
    return check_int(n_samples, name="n_samples", minimum=1)


def _standard_normals(
    n_samples: int,
    shape: tuple[int, ...],
    *,
    rng: np.random.Generator | None,
    seeds: ArrayLike | None,
) -> NDArray[np.float64]:
    """Standard normals of shape ``(n_samples, *shape)`` from ``rng`` or one seed per sample."""
    if (rng is None) == (seeds is None):
        msg = (
            "exactly one of `rng` and `seeds` must be given; got "
            f"rng={'None' if rng is None else type(rng).__name__}, "
            f"seeds={'None' if seeds is None else 'array'}."
        )
        raise InputError(msg)
    if rng is not None:
        if not isinstance(rng, np.random.Generator):
            msg = f"`rng` must be a numpy.random.Generator; got {type(rng).__name__}."
            raise InputError(msg)
        return rng.standard_normal((n_samples, *shape))
    seeds_arr = np.asarray(seeds)
    if seeds_arr.shape != (n_samples,):
        msg = f"`seeds` must have shape ({n_samples},), one per sample; got {seeds_arr.shape}."
        raise ShapeError(msg)
    if seeds_arr.dtype.kind not in "iu" or (seeds_arr.dtype.kind == "i" and (seeds_arr < 0).any()):
        msg = f"`seeds` must be non-negative integers; got dtype {seeds_arr.dtype}."
        raise InputError(msg)
    out = np.empty((n_samples, *shape))
    for i, s in enumerate(seeds_arr):
        out[i] = np.random.default_rng(int(s)).standard_normal(shape)
    return out


@dataclass(frozen=True)
class PeriodicGRF:
    r"""Zero-mean Gaussian random field on the periodic unit interval.

    The field is :math:`u \sim N(0, \sigma^2(-\Delta + \tau^2 I)^{-\alpha})` on :math:`[0, 1)`
    with periodic conditions, sampled on the grid :math:`x_i = i/n`, :math:`i = 0..n-1`,
    by a truncated Karhunen-Loeve expansion in the eigenfunctions :math:`e^{2\pi i k x}`
    of :math:`-\Delta` (eigenvalues :math:`(2\pi k)^2`):

    .. math::

        u(x_i) = \sum_{k \in K_n} \sqrt{\lambda_k}\, \xi_k\, e^{2\pi i k x_i},\qquad
        \lambda_k = \sigma^2\left((2\pi k)^2 + \tau^2\right)^{-\alpha},

    with :math:`K_n = \{-\lceil n/2\rceil + 1, \dots, \lfloor n/2 \rfloor\} \setminus \{0\}`
    (the constant mode is not sampled, as in the FNO generator, so every sample has grid
    mean exactly 0), complex :math:`\xi_k = \overline{\xi_{-k}}` with
    :math:`E|\xi_k|^2 = 1`, and a real :math:`\xi_{n/2} \sim N(0, 1)` for the Nyquist mode
    of even ``n``. Hence the discrete Fourier coefficients
    :math:`c_k = \frac1n \sum_i u(x_i) e^{-2\pi i k x_i}` satisfy :math:`E|c_k|^2 = \lambda_k`,
    and the pointwise variance of the discrete field is, at every node,

    .. math:: \operatorname{Var} u(x_i) = \sum_{k \in K_n} \lambda_k

    (:attr:`pointwise_variance`). The Burgers benchmark uses the defaults
    sigma = 25, tau = 5, alpha = 2: :math:`N(0, 625(-\Delta + 25 I)^{-2})`.

    Parameters
    ----------
    n
        Number of grid points, >= 2.
    sigma, tau, alpha
        Amplitude, inverse length scale and smoothness; finite and > 0.

    Examples
    --------
    >>> grf = PeriodicGRF(256)
    >>> u0 = grf.sample(3, rng=np.random.default_rng(0))
    >>> u0.shape
    (3, 256)
    """

    n: int
    _: KW_ONLY
    sigma: float = 25.0
    tau: float = 5.0
    alpha: float = 2.0
    _sqrt_spectrum: NDArray[np.float64] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "n", _check_n(self.n, minimum=2))
        for name in ("sigma", "tau", "alpha"):
            object.__setattr__(self, name, _check_param(getattr(self, name), name=name))
        object.__setattr__(self, "_sqrt_spectrum", np.sqrt(self.spectrum))

    @property
    def wavenumbers(self) -> NDArray[np.int64]:
        """Sampled non-negative wavenumbers ``k = 0..n//2`` (rfft order), shape (n//2 + 1,)."""
        return np.arange(self.n // 2 + 1)

    @property
    def spectrum(self) -> NDArray[np.float64]:
        r""":math:`\lambda_k = E|c_k|^2` for ``k = 0..n//2`` (0 at ``k = 0``), shape (n//2 + 1,)."""
        k = self.wavenumbers
        lam = self.sigma**2 * ((2 * np.pi * k) ** 2 + self.tau**2) ** (-self.alpha)
        lam[0] = 0.0
        return lam

    @property
    def pointwise_variance(self) -> float:
        r""":math:`\sum_{k \in K_n} \lambda_k`, the variance of the discrete field at every node."""
        lam = self.spectrum
        total = 2.0 * lam[1:].sum()
        if self.n % 2 == 0:
            total -= lam[-1]  # the Nyquist mode is counted once
        return float(total)

    @property
    def config(self) -> dict[str, Any]:
        """JSON-serialisable parameters; ``PeriodicGRF(**config)`` rebuilds the sampler."""
        return {"n": self.n, "sigma": self.sigma, "tau": self.tau, "alpha": self.alpha}

    def sample(
        self,
        n_samples: int,
        *,
        rng: np.random.Generator | None = None,
        seeds: ArrayLike | None = None,
    ) -> NDArray[np.float64]:
        """Draw ``n_samples`` fields, float64 array of shape ``(n_samples, n)``.

        Give exactly one of ``rng`` (all samples from one generator) or ``seeds`` (length
        ``n_samples``; sample ``i`` is drawn from ``np.random.default_rng(int(seeds[i]))``
        alone, so a batch equals sampling one at a time).

        Raises
        ------
        InputError
            Both or neither of ``rng``/``seeds``; ``n_samples`` < 1; negative seeds.
        ShapeError
            ``seeds`` does not have length ``n_samples``.
        """
        n_samples = _check_n_samples(n_samples)
        m = self.n // 2
        z = _standard_normals(n_samples, (2, m), rng=rng, seeds=seeds)
        coef = np.zeros((n_samples, m + 1), dtype=np.complex128)
        coef[:, 1:] = (z[:, 0] + 1j * z[:, 1]) / np.sqrt(2.0)
        if self.n % 2 == 0:  # real Nyquist coefficient with unit variance
            coef[:, m] = z[:, 0, m - 1]
        coef *= self._sqrt_spectrum
        return np.fft.irfft(coef, n=self.n, axis=-1, norm="forward")


@dataclass(frozen=True)
class NeumannGRF:
    r"""Zero-mean Gaussian random field on the unit square with Neumann conditions.

    :math:`u \sim N(0, \sigma^2(-\Delta + \tau^2 I)^{-\alpha})` with homogeneous Neumann
    conditions on :math:`[0, 1]^2`, sampled on the :math:`n \times n` node grid
    :math:`x_i = i/(n-1)` (array index ``[i, j]`` is the point :math:`(x_i, y_j)`) by the
    expansion in the cosine eigenfunctions of :math:`-\Delta`
    (eigenvalues :math:`\pi^2(k^2 + l^2)`):

    .. math::

        u(x_i, y_j) = \sum_{(k, l) \neq (0, 0)} \sqrt{\lambda_{kl}}\, \xi_{kl}\,
        \phi_k(x_i)\phi_l(y_j),\qquad
        \lambda_{kl} = \sigma^2\left(\pi^2(k^2 + l^2) + \tau^2\right)^{-\alpha},

    :math:`0 \le k, l \le n-1`, i.i.d. :math:`\xi_{kl} \sim N(0, 1)`,
    :math:`\phi_k(x) = c_k\cos(\pi k x)` with :math:`c_0 = c_{n-1} = 1` and
    :math:`c_k = \sqrt2` otherwise. The :math:`\phi_k` are orthonormal in the trapezoid
    inner product :math:`\langle f, g\rangle = \sum_i w_i f(x_i) g(x_i)/(n-1)`
    (:math:`w_0 = w_{n-1} = 1/2`, else 1), so the coefficients recovered by that projection
    have :math:`E\,\hat u_{kl}^2 = \lambda_{kl}`, and the trapezoid-weighted mean over the
    grid of the pointwise variance equals the sum of the spectrum
    (:attr:`mean_pointwise_variance`); the variance itself is larger near the boundary, as
    for any Neumann field. The constant mode is not sampled, so the trapezoid-weighted grid
    mean of every sample is 0. The expansion is evaluated by a type-I DCT over the batch.
    The Darcy benchmark uses tau = 3, alpha = 2, :math:`(-\Delta + 9 I)^{-2}`.

    Parameters
    ----------
    n
        Number of nodes per side, >= 2.
    sigma, tau, alpha
        Amplitude, inverse length scale and smoothness; finite and > 0.

    Examples
    --------
    >>> a = threshold(NeumannGRF(29).sample(2, rng=np.random.default_rng(0)))
    >>> a.shape, np.unique(a).tolist()
    ((2, 29, 29), [3.0, 12.0])
    """

    n: int
    _: KW_ONLY
    sigma: float = 1.0
    tau: float = 3.0
    alpha: float = 2.0
    _scale: NDArray[np.float64] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "n", _check_n(self.n, minimum=2))
        for name in ("sigma", "tau", "alpha"):
            object.__setattr__(self, name, _check_param(getattr(self, name), name=name))
        # scipy's DCT-I evaluates
        #   y_i = x_0 + (-1)^i x_{n-1} + 2 sum_{k=1}^{n-2} x_k cos(pi k i/(n-1)),
        # so the coefficient of phi_k = c_k cos(pi k x) enters with weight c_k / (1 or 2).
        c = np.full(self.n, np.sqrt(2.0) / 2.0)
        c[0] = 1.0
        c[-1] = 1.0
        weight = c[:, None] * c[None, :]
        object.__setattr__(self, "_scale", weight * np.sqrt(self.spectrum))

    @property
    def spectrum(self) -> NDArray[np.float64]:
        r""":math:`\lambda_{kl}` for ``0 <= k, l <= n-1`` (0 at (0, 0)), shape (n, n)."""
        k = np.arange(self.n)
        lam = self.sigma**2 * (
            np.pi**2 * (k[:, None] ** 2 + k[None, :] ** 2) + self.tau**2
        ) ** (-self.alpha)
        lam[0, 0] = 0.0
        return lam

    @property
    def mean_pointwise_variance(self) -> float:
        """Trapezoid-weighted grid mean of the pointwise variance, equal to ``spectrum.sum()``."""
        return float(self.spectrum.sum())

    @property
    def config(self) -> dict[str, Any]:
        """JSON-serialisable parameters; ``NeumannGRF(**config)`` rebuilds the sampler."""
        return {"n": self.n, "sigma": self.sigma, "tau": self.tau, "alpha": self.alpha}

    def sample(
        self,
        n_samples: int,
        *,
        rng: np.random.Generator | None = None,
        seeds: ArrayLike | None = None,
    ) -> NDArray[np.float64]:
        """Draw ``n_samples`` fields, float64 array of shape ``(n_samples, n, n)``.

        Seeding as in :meth:`PeriodicGRF.sample`: exactly one of ``rng`` or ``seeds``.
        """
        n_samples = _check_n_samples(n_samples)
        z = _standard_normals(n_samples, (self.n, self.n), rng=rng, seeds=seeds)
        z *= self._scale
        return scipy.fft.dctn(z, type=1, axes=(-2, -1))


def sample_seeds(seed: int, indices: ArrayLike) -> NDArray[np.uint64]:
    """Per-sample seeds of global sample indices ``indices`` of a dataset with seed ``seed``.

    Seed ``k`` is ``np.random.SeedSequence([seed, k]).generate_state(1, np.uint64)[0]``:
    it depends on (seed, k) alone, whatever the number of workers or the order of work.

    Returns
    -------
    (len(indices),) uint64 array
    """
    seed = check_int(seed, name="seed", minimum=0)
    idx = np.asarray(indices)
    if idx.ndim != 1:
        msg = f"`indices` must be a 1-D sequence of sample indices; got shape {idx.shape}."
        raise ShapeError(msg)
    if idx.size and (idx.dtype.kind not in "iu" or (idx < 0).any()):
        msg = f"`indices` must be non-negative integers; got {idx.dtype} {plain(idx[:5])}."
        raise InputError(msg)
    return np.array(
        [np.random.SeedSequence([int(seed), int(k)]).generate_state(1, np.uint64)[0] for k in idx],
        dtype=np.uint64,
    )


def threshold(field: SolverInput, *, high: float = 12.0, low: float = 3.0) -> SolverOutput:
    """Two-phase coefficient: ``high`` where ``field > 0``, ``low`` elsewhere.

    Parameters
    ----------
    field : array_like or xarray.DataArray
        Any shape; finite. A DataArray comes back with the same dims, coords and name.
    high, low
        Coefficient values, finite and > 0 (the benchmark: 12 and 3).

    Returns
    -------
    float64 array of the shape of ``field`` (a DataArray for DataArray input).
    """
    hi = _check_param(high, name="high")
    lo = _check_param(low, name="low")
    is_xr = hasattr(field, "dims") and hasattr(field, "coords")
    values = np.asarray(field.values if is_xr else field)
    if values.dtype.kind not in "fiu":
        msg = f"`field` must be a real numeric array; got dtype {values.dtype}."
        raise InputError(msg)
    if not np.isfinite(values).all():
        bad = np.count_nonzero(~np.isfinite(values))
        msg = f"`field` must be finite; got {bad} NaN/inf value(s)."
        raise InputError(msg)
    out = np.where(values > 0, hi, lo)
    if is_xr:
        return field.copy(data=out)
    return out

