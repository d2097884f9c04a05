"""neuralop_fem: PDE data generation, Galerkin/Fourier Transformer surrogates, comparison.

The data layer (:func:`generate`, :func:`save_dataset`, :func:`load_dataset`) imports no torch;
:class:`Surrogate` and :func:`compare` are imported on first use.
"""

from __future__ import annotations

from typing import Any

from ._version import __version__
from .data import BurgersDataConfig, DarcyDataConfig, generate, load_dataset, save_dataset

__all__ = [
    "BurgersDataConfig",
    "DarcyDataConfig",
    "OODWarning",
    "Surrogate",
    "SurrogatePolicy",
    "__version__",
    "compare",
    "generate",
    "load_dataset",
    "save_dataset",
]

_LAZY = {
    "OODWarning": "surrogate",
    "Surrogate": "surrogate",
    "SurrogatePolicy": "warmstart",
    "compare": "compare",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)
