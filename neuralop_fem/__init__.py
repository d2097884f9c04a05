"""neuralop_fem: PDE data generation, Galerkin/Fourier Transformer surrogates, comparison."""

from __future__ import annotations

from ._version import __version__

__all__ = ["__version__"]
