"""Datasets: this package owns the dataset file and everything that makes, reads or checks one.

That is the netCDF schema (:mod:`.names`, :mod:`.schema`, :mod:`.validation`), saving and
loading (:mod:`.io`), the provenance record of a file (:mod:`.provenance`), generation with the
bundled solvers (:mod:`.generation`), the legacy ``.mat`` import (:mod:`.matlab`), other
tools' files both ways (:mod:`.peers`), a dataset's grid and its subsampling, the
out-of-distribution statistics (:mod:`.ood`) and the torch datasets and normalisers that feed
training. See ``docs/data_format.md`` for the file format. The torch-based names
(:class:`BurgersDataset`, :class:`DarcyDataset`, :class:`DarcyInverseDataset`,
:class:`UnitGaussianNormalizer`) are imported on first use, so the netCDF layer (and the
``info``/``import-mat``/``generate`` commands and generation workers) does not import torch.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "BurgersDataConfig",
    "BurgersDataset",
    "DarcyDataConfig",
    "DarcyDataset",
    "DarcyInverseDataset",
    "UnitGaussianNormalizer",
    "burgers_dataset",
    "darcy_dataset",
    "generate",
    "import_mat",
    "load_dataset",
    "read_mat",
    "save_dataset",
    "validate",
]

#: Every public name resolves on first use (the torch-based ones, and the xarray-based ones so
#: that a config class can be read without importing xarray).
_LAZY = {
    "BurgersDataset": "datasets",
    "DarcyDataset": "datasets",
    "DarcyInverseDataset": "datasets",
    "UnitGaussianNormalizer": "normalizer",
    "BurgersDataConfig": "generation", "DarcyDataConfig": "generation", "generate": "generation",
    "load_dataset": "io", "save_dataset": "io", "import_mat": "matlab", "read_mat": "matlab",
    "burgers_dataset": "schema", "darcy_dataset": "schema", "validate": "validation",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module = importlib.import_module(f".{_LAZY[name]}", __name__)
        return getattr(module, name)
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)
