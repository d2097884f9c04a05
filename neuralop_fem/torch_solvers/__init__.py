"""Torch twins of the classical solvers: the same discretisations, batched, on a CPU or a GPU.

- :class:`TorchBurgersSpectralSolver` (:mod:`.burgers`): the pseudo-spectral ETDRK4 solver of
  :class:`solvers.burgers.BurgersSpectralSolver`, agreeing with it to round-off in float64;
- :class:`TorchDarcyFDSolver` (:mod:`.darcy`): the 5-point harmonic-averaged finite differences
  of :class:`solvers.darcy.DarcyFDSolver`, solved by conjugate gradients preconditioned by the
  fast Poisson solver (a sine transform built from ``torch.fft``), to the same relative
  residual;
- :class:`DeviceMemoryError` (:mod:`.errors`): a batch did not fit the device.

Both honour the solver contract of :mod:`solvers.contract` (numpy or xarray in, the same form
out, a :class:`~solvers.contract.SolveReport`). :mod:`solvers` never imports torch; this package
does, on first use of a name (``from neuralop_fem.torch_solvers.errors import
DeviceMemoryError`` imports no torch). The twin of a given numpy solver is found through the
problem kits: :func:`neuralop_fem.problems.twins.twin_of`.
"""

from __future__ import annotations

import importlib
from typing import Any

_NAMES = {"TorchBurgersSpectralSolver": "burgers", "TorchDarcyFDSolver": "darcy",
          "DeviceMemoryError": "errors"}

__all__ = ["DeviceMemoryError", "TorchBurgersSpectralSolver", "TorchDarcyFDSolver"]


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        return getattr(importlib.import_module(f".{_NAMES[name]}", __name__), name)
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)


def __dir__() -> list[str]:
    return sorted(__all__)
