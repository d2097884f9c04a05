"""neuralop_fem: PDE data generation, Galerkin/Fourier Transformer surrogates, comparison.

Public names, each imported on first use (so ``import neuralop_fem`` and ``neuralop-fem --help``
import neither xarray, dask nor torch):

- data: :func:`generate`, :class:`BurgersDataConfig`, :class:`DarcyDataConfig`,
  :func:`save_dataset`, :func:`load_dataset` (:mod:`neuralop_fem.data`);
- surrogates: :class:`Surrogate`, :class:`SurrogatePolicy`, :class:`OODWarning`
  (:mod:`neuralop_fem.surrogate`);
- evaluation: :func:`compare`, :func:`evaluate_run` (:mod:`neuralop_fem.evaluation`);
- problems: :func:`register_problem` (a new problem's two entries,
  :mod:`neuralop_fem.problems`).

No submodule of this package has the name of one of these attributes, so an attribute is the
same object however and whenever it is first reached.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:  # pragma: no cover
    from .data import BurgersDataConfig, DarcyDataConfig, generate, load_dataset, save_dataset
    from .evaluation import compare, evaluate_run
    from .problems import register_problem
    from .surrogate import OODWarning, Surrogate, SurrogatePolicy

__all__ = [
    "BurgersDataConfig",
    "DarcyDataConfig",
    "OODWarning",
    "Surrogate",
    "SurrogatePolicy",
    "__version__",
    "compare",
    "evaluate_run",
    "generate",
    "load_dataset",
    "register_problem",
    "save_dataset",
]

#: Public name -> the subpackage that defines it.
_LAZY = {
    "BurgersDataConfig": "data",
    "DarcyDataConfig": "data",
    "generate": "data",
    "load_dataset": "data",
    "save_dataset": "data",
    "OODWarning": "surrogate",
    "Surrogate": "surrogate",
    "SurrogatePolicy": "surrogate",
    "compare": "evaluation",
    "evaluate_run": "evaluation",
    "register_problem": "problems",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value  # cache: later lookups never reach __getattr__
        return value
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
