"""Deprecated alias of :mod:`neuralop_fem.surrogate.mesh` (moved there; import from the new home).

Kept so that scripts written for earlier releases keep working; it will be removed in a later
release.
"""

from __future__ import annotations

import warnings

from .surrogate.mesh import *  # noqa: F403
from .surrogate.mesh import __all__  # noqa: F401

warnings.warn(
    "neuralop_fem.fem moved to neuralop_fem.surrogate.mesh; import from there.",
    DeprecationWarning,
    stacklevel=2,
)
