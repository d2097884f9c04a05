"""Datasets: the netCDF schema, saving and loading, legacy .mat import, torch datasets.

See ``docs/data_format.md`` for the file format.
"""

from __future__ import annotations

from .io import load_dataset, save_dataset
from .schema import burgers_dataset, darcy_dataset, validate

__all__ = [
    "burgers_dataset",
    "darcy_dataset",
    "load_dataset",
    "save_dataset",
    "validate",
]
