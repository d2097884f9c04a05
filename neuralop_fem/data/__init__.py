"""Datasets: the netCDF schema, saving and loading, legacy .mat import, torch datasets.

See ``docs/data_format.md`` for the file format.
"""

from __future__ import annotations

from .datasets import BurgersDataset, DarcyDataset, DarcyInverseDataset
from .io import load_dataset, save_dataset
from .matlab import import_mat, read_mat
from .normalizer import UnitGaussianNormalizer
from .schema import burgers_dataset, darcy_dataset, validate

__all__ = [
    "BurgersDataset",
    "DarcyDataset",
    "DarcyInverseDataset",
    "UnitGaussianNormalizer",
    "import_mat",
    "read_mat",
    "burgers_dataset",
    "darcy_dataset",
    "load_dataset",
    "save_dataset",
    "validate",
]
