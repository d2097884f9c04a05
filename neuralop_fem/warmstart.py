"""Deprecated alias of :mod:`neuralop_fem.surrogate.warmstart` (moved there; import from the new
home).

Kept so that scripts written for earlier releases keep working; it will be removed in a later
release.
"""

from __future__ import annotations

import warnings

from .surrogate.warmstart import *  # noqa: F403
from .surrogate.warmstart import __all__  # noqa: F401

warnings.warn(
    "neuralop_fem.warmstart moved to neuralop_fem.surrogate.warmstart; import from there.",
    DeprecationWarning,
    stacklevel=2,
)
