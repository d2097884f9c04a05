"""Trained surrogates inside simulation scripts.

- :mod:`.surrogate`: :class:`Surrogate` (a training run behind the solver contract),
  :class:`OODWarning`, grid resampling;
- :mod:`.warmstart`: residual checks, warm starts, deflation, :class:`SurrogatePolicy`;
- :mod:`.mesh`: surrogates on scikit-fem meshes, VTU/XDMF export.

The out-of-distribution statistics live in :mod:`neuralop_fem.data.ood` (training computes them
too).
"""

from __future__ import annotations

from .surrogate import OODWarning, Surrogate, resample_nodes, resample_periodic
from .warmstart import (
    DECISIONS,
    VARIANTS,
    SurrogatePolicy,
    deflated_pcg,
    discrete_systems,
    measure_warm_start,
    relative_residual,
)

__all__ = [
    "DECISIONS",
    "VARIANTS",
    "OODWarning",
    "Surrogate",
    "SurrogatePolicy",
    "deflated_pcg",
    "discrete_systems",
    "measure_warm_start",
    "relative_residual",
    "resample_nodes",
    "resample_periodic",
]
