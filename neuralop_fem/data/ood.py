"""Out-of-distribution scores of surrogate inputs against the training inputs.

Two checks, both cheap (O(n) or O(n log n) per sample):

1. A Mahalanobis distance of a few resolution-independent statistics of each input,
   :math:`d^2 = (s - \\mu)^T \\Sigma^{-1} (s - \\mu)`, with :math:`\\mu, \\Sigma` the mean and
   covariance of the same statistics over the training inputs. For Gaussian statistics
   :math:`d^2 \\sim \\chi^2_k`; an input is flagged when :math:`d^2` exceeds the 0.999
   quantile of :math:`\\chi^2_k` (:data:`OOD_QUANTILE`), i.e. about 1 in 1000 training-like
   inputs is flagged by chance.

   * Burgers (``u0`` on ``x_i = i/n``): ``log_rms`` (log of the RMS amplitude) and
     ``spectrum_slope`` (least-squares slope of ``log |u0_k|^2`` against ``log k`` for
     ``k = 2..32``; about -4 for the benchmark GRF with ``alpha = 2``).
   * Darcy (``a`` on the node grid): ``mean_log_a`` and ``interface_density`` (number of
     neighbouring node pairs whose values differ by more than 1 %, times ``h = 1/(n-1)``:
     an estimate of the interface length per unit area, independent of ``n``).

2. Darcy only: the fraction of nodal values that are not in the training value set (the two
   phase values ``contrast_low``/``contrast_high``, relative tolerance 1e-6) and the
   contrast ratio ``max a / min a`` against the training ratio. Flagged when more than
   :data:`OFF_SET_LIMIT` of the values are off the set or the ratio differs by more than 1 %.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NotRequired, TypedDict

import numpy as np
from numpy.typing import NDArray
from scipy import stats as _stats

from solvers.problems import get_problem

from ..errors import InputError
from ..problems import get_kit, kit_table
from .dim_order import in_api_order

if TYPE_CHECKING:  # pragma: no cover
    import xarray as xr

__all__ = ["OFF_SET_LIMIT", "OOD_QUANTILE", "OODReference", "OODReferenceDict",
           "burgers_statistics", "darcy_statistics", "ood_statistics", "reference_from_dataset",
           "reference_from_inputs", "solution_statistics"]

#: Training inputs used to fit a reference (the statistics converge long before this).
MAX_REFERENCE_SAMPLES = 256

OOD_QUANTILE = 0.999
OFF_SET_LIMIT = 0.01
#: The names of each problem's statistics (its kit's ``ood_features``; a live view).
STAT_NAMES = kit_table("ood_features")


def burgers_statistics(u0: NDArray[np.float64]) -> NDArray[np.float64]:
    """Burgers (periodic ``u0``): log RMS and the log-log slope of the power spectrum over
    the wavenumbers 2..32."""
    n = u0.shape[-1]
    rms = np.sqrt(np.mean(u0**2, axis=-1))
    power = np.abs(np.fft.rfft(u0, axis=-1)) ** 2
    k = np.arange(2, min(33, n // 2))
    logp = np.log(power[:, k] + 1e-300)
    logk = np.log(k)
    logk_c = logk - logk.mean()
    slope = (logp - logp.mean(axis=1, keepdims=True)) @ logk_c / (logk_c @ logk_c)
    return np.stack([np.log(rms + 1e-300), slope], axis=1)


def darcy_statistics(a: NDArray[np.float64]) -> NDArray[np.float64]:
    """Darcy (coefficient ``a > 0`` on the node grid): mean of log a and the density of
    interfaces (jumps of log a above 1 %) per grid line."""
    n = a.shape[-1]
    log_a = np.log(a)
    jumps_x = np.abs(np.diff(log_a, axis=1)) > np.log1p(0.01)
    jumps_y = np.abs(np.diff(log_a, axis=2)) > np.log1p(0.01)
    density = (jumps_x.sum(axis=(1, 2)) + jumps_y.sum(axis=(1, 2))) / (n - 1)
    return np.stack([log_a.mean(axis=(1, 2)), density], axis=1)


def solution_statistics(u: NDArray[np.float64]) -> NDArray[np.float64]:
    """Inverse problem (observed Darcy solution on the node grid): log RMS of ``u`` and log of
    RMS(|grad u|) / RMS(u) (central differences, ``h = 1/(n-1)``; a length-scale measure)."""
    n = u.shape[-1]
    h = 1.0 / (n - 1)
    gx = (u[:, 2:, 1:-1] - u[:, :-2, 1:-1]) / (2 * h)
    gy = (u[:, 1:-1, 2:] - u[:, 1:-1, :-2]) / (2 * h)
    rms = np.sqrt(np.mean(u**2, axis=(1, 2)))
    grad = np.sqrt(np.mean(gx**2 + gy**2, axis=(1, 2)))
    return np.stack([np.log(rms + 1e-300), np.log(grad + 1e-300) - np.log(rms + 1e-300)], axis=1)


def ood_statistics(inputs: NDArray[np.float64], problem: str) -> NDArray[np.float64]:
    """The statistics of each input sample used by the Mahalanobis score.

    Parameters
    ----------
    inputs : (n_samples, n) or (n_samples, n, n) float array
        The problem's input: Burgers ``u0``, Darcy ``a`` (> 0), inverse Darcy ``u``.
    problem
        A key of :data:`STAT_NAMES`.

    Returns
    -------
    (n_samples, 2) array, columns named by ``STAT_NAMES[problem]``.
    """
    if problem not in STAT_NAMES:
        msg = f"`problem` must be one of {', '.join(map(repr, STAT_NAMES))}; got {problem!r}."
        raise InputError(msg)
    # Absurd inputs (e.g. 1e300) overflow: their statistics become inf/NaN and are flagged.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return get_kit(problem).statistics()(np.asarray(inputs, dtype=np.float64))


class OODReferenceDict(TypedDict):
    """An :class:`OODReference` as JSON (:meth:`OODReference.to_dict`)."""

    problem: str
    mean: list[float]
    covariance: list[list[float]]
    n_train: int
    value_set: NotRequired[list[float]]


@dataclass(frozen=True, kw_only=True)
class OODReference:
    """Training-set statistics that out-of-distribution scores are measured against.

    Attributes
    ----------
    problem : str
    mean : (k,) tuple of float
        Mean of :func:`ood_statistics` over the training inputs.
    covariance : (k, k) tuple of tuples
        Their covariance (regularised: 1e-9 relative to the diagonal is added).
    n_train : int
        Number of training inputs the statistics come from.
    value_set : tuple of float
        Darcy: the phase values of the coefficient (empty for Burgers).
    """

    problem: str
    mean: tuple[float, ...]
    covariance: tuple[tuple[float, ...], ...]
    n_train: int
    value_set: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.problem not in STAT_NAMES:
            msg = (f"`problem` must be one of {', '.join(map(repr, STAT_NAMES))}; got "
                   f"{self.problem!r}.")
            raise InputError(msg)
        k = len(STAT_NAMES[self.problem])
        cov = np.asarray(self.covariance, dtype=np.float64)
        if len(self.mean) != k or cov.shape != (k, k):
            msg = (f"`mean`/`covariance` must have shapes ({k},)/({k}, {k}); "
                   f"got {len(self.mean)}/{cov.shape}.")
            raise InputError(msg)

    @classmethod
    def fit(cls, inputs: NDArray[np.float64], problem: str,
            *, value_set: tuple[float, ...] = ()) -> OODReference:
        """Fit to training inputs (at least 3 samples)."""
        s = ood_statistics(inputs, problem)
        if len(s) < 3:
            msg = f"`inputs` must hold at least 3 training samples; got {len(s)}."
            raise InputError(msg)
        cov = np.cov(s, rowvar=False)
        cov = cov + np.diag(1e-9 * np.diag(cov) + 1e-12)
        return cls(problem=problem, mean=tuple(map(float, s.mean(axis=0))),
                   covariance=tuple(tuple(map(float, row)) for row in cov),
                   n_train=len(s), value_set=tuple(float(v) for v in value_set))

    def to_dict(self) -> OODReferenceDict:
        """JSON-serialisable form (stored as ``ood_reference`` in ``run.json``)."""
        return {"problem": self.problem, "mean": list(self.mean),
                "covariance": [list(r) for r in self.covariance], "n_train": self.n_train,
                "value_set": list(self.value_set)}

    @classmethod
    def from_dict(cls, data: OODReferenceDict) -> OODReference:
        """Inverse of :meth:`to_dict`."""
        return cls(problem=data["problem"], mean=tuple(data["mean"]),
                   covariance=tuple(tuple(r) for r in data["covariance"]),
                   n_train=int(data["n_train"]), value_set=tuple(data.get("value_set", ())))

    @functools.cached_property
    def threshold(self) -> float:
        """``chi2.ppf(OOD_QUANTILE, k)``: scores above it are flagged (computed once)."""
        return float(_stats.chi2.ppf(OOD_QUANTILE, len(self.mean)))

    def score(self, inputs: NDArray[np.float64]) -> NDArray[np.float64]:
        """Squared Mahalanobis distance ``d^2`` of each sample, shape (n_samples,)."""
        d = ood_statistics(inputs, self.problem) - np.asarray(self.mean)
        inv = self._inverse_covariance
        with np.errstate(over="ignore", invalid="ignore"):
            score = np.einsum("si,ij,sj->s", d, inv, d)
        return np.where(np.isfinite(score), score, np.inf)  # non-finite statistics: flagged

    @functools.cached_property
    def _inverse_covariance(self) -> NDArray[np.float64]:
        """The inverse of :attr:`covariance` (computed once: the check runs on every solve)."""
        return np.linalg.inv(np.asarray(self.covariance, dtype=np.float64))

    def off_set_fraction(self, a: NDArray[np.float64]) -> NDArray[np.float64]:
        """Darcy: per-sample fraction of values not in :attr:`value_set` (rel. tol 1e-6)."""
        if not self.value_set:
            return np.zeros(len(a))
        vals = np.asarray(self.value_set)
        near = np.zeros(a.shape, dtype=bool)
        for v in vals:
            near |= np.abs(a - v) <= 1e-6 * abs(v)
        return 1.0 - near.reshape(len(a), -1).mean(axis=1)

    def flags(
        self, inputs: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.bool_], str]:
        """Scores, per-sample flags and a message giving each reason that applies.

        The reasons, joined by ``"; "``: a score above :attr:`threshold`; (Darcy) values off
        the training value set; a contrast ``max a / min a`` other than the training one. Each
        names the inputs it applies to (``"2 of 5 inputs"``, ``"every input"``).
        """
        score = self.score(inputs)
        flagged = score > self.threshold
        parts = []
        if flagged.any():
            subject, every = _which(flagged)
            parts.append(
                f"{subject} {'has' if every else 'have'} an out-of-distribution score "
                f"d^2 up to {score.max():.3g} > {self.threshold:.3g} "
                f"(chi2 {OOD_QUANTILE} quantile, "
                f"statistics {STAT_NAMES[self.problem]} vs {self.n_train} training inputs)"
            )
        if self.value_set:
            off = self.off_set_fraction(inputs)
            flat = inputs.reshape(len(inputs), -1)
            ratio = flat.max(1) / flat.min(1)
            want = max(self.value_set) / min(self.value_set)
            off_set = off > OFF_SET_LIMIT
            other_ratio = np.abs(ratio / want - 1.0) > 0.01
            if off_set.any():  # each reason only where it applies, for the inputs it applies to
                subject, every = _which(off_set)
                parts.append(
                    f"{subject} {'has' if every else 'have'} coefficient values outside the "
                    f"training set's values {_and(self.value_set)} (at up to "
                    f"{off[off_set].max():.1%} of the nodes)")
            if other_ratio.any():
                low, high = ratio[other_ratio].min(), ratio[other_ratio].max()
                got = f"{low:.3g}" if f"{low:.3g}" == f"{high:.3g}" else f"{low:.3g} to {high:.3g}"
                parts.append(
                    f"the coefficient's contrast max/min is {got} in {_which(other_ratio)[0]} "
                    f"(the training set's is {want:.3g})")
            flagged = flagged | off_set | other_ratio
        return score, flagged, "; ".join(parts)


def _which(mask: NDArray[np.bool_]) -> tuple[str, bool]:
    """The inputs ``mask`` selects, in words, and whether that is all of them (a singular
    subject: ``"every input"``, ``"the input"``; else ``"2 of 5 inputs"``)."""
    n, k = mask.size, int(mask.sum())
    if k == n:
        return ("the input" if n == 1 else "every input"), True
    return f"{k} of {n} inputs", False


def _and(values: Sequence[float]) -> str:
    """``(3.0, 12.0)`` -> ``"3 and 12"``."""
    text = [f"{v:g}" for v in values]
    return text[0] if len(text) == 1 else f"{', '.join(text[:-1])} and {text[-1]}"


def reference_from_inputs(inputs: NDArray[np.float64], problem: str) -> OODReference | None:
    """Fit an :class:`OODReference` on the first :data:`MAX_REFERENCE_SAMPLES` training inputs.

    Parameters
    ----------
    inputs : (n_samples, n) or (n_samples, n, n) array
        Burgers ``u0`` or Darcy ``a`` at any resolution (the statistics do not depend on it).
    problem : str
        A key of :data:`STAT_NAMES`; any other problem has no reference and gives None, as do
        fewer than 3 samples. For a coefficient input (``positive_input`` in the problem
        registry) the distinct values (at most 8) become the reference's value set.
    """
    if problem not in STAT_NAMES or len(inputs) < 3:
        return None
    values = np.asarray(inputs[:MAX_REFERENCE_SAMPLES], dtype=np.float64)
    value_set: tuple[float, ...] = ()
    if get_problem(problem).positive_input:
        distinct = np.unique(values)
        value_set = tuple(float(v) for v in distinct) if distinct.size <= 8 else ()
    return OODReference.fit(values, problem, value_set=value_set)


def reference_from_dataset(
    ds: xr.Dataset, train_indices: Sequence[int] | NDArray[np.integer] | None, problem: str
) -> OODReference | None:
    """:func:`reference_from_inputs` on the training inputs of a dataset.

    Parameters
    ----------
    ds : xarray.Dataset
        A dataset holding the problem's input variable (Burgers ``u0``, Darcy ``a``; for the
        inverse problem the Darcy solution ``u``).
    train_indices : sequence of int or None
        Sample positions of the training split (None: all samples).
    problem : str
        As in :func:`reference_from_inputs`.
    """
    if problem not in STAT_NAMES:
        return None
    idx = np.asarray(train_indices if train_indices is not None else np.arange(ds.sizes["sample"]))
    var = get_problem(problem).input_name
    inputs = in_api_order(ds[var]).isel(sample=idx[:MAX_REFERENCE_SAMPLES])  # (sample, x, y)
    return reference_from_inputs(inputs.values, problem)
