"""Global attributes as netCDF stores them: the one conversion from settings to attributes.

Below the schema builders (:mod:`~neuralop_fem.data.schema`, which re-exports
:func:`netcdf_attrs`) and the validation (:mod:`~neuralop_fem.data.validation`, which compares
a file's attributes with its provenance record through the same conversion).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import DatasetError

__all__ = ["netcdf_attrs"]


def netcdf_attrs(mapping: Mapping[str, object]) -> dict[str, Any]:
    """Return ``mapping`` as plain netCDF attributes a person can read.

    bool -> int (0/1), None -> the string ``"none"``, nested mappings are flattened with
    ``parent_child`` keys, sequences of numbers -> float64/int64 arrays, sequences of strings
    -> one comma-separated string, numpy scalars -> Python scalars.

    Raises
    ------
    DatasetError
        For a value of another type.
    """
    out: dict[str, Any] = {}
    for key, value in mapping.items():
        if isinstance(value, Mapping):
            for sub, v in netcdf_attrs(value).items():
                out[f"{key}_{sub}"] = v
        elif isinstance(value, bool | np.bool_):
            out[key] = int(value)
        elif value is None:
            out[key] = "none"
        elif isinstance(value, str):
            out[key] = value
        elif isinstance(value, int | np.integer):
            out[key] = int(value)
        elif isinstance(value, float | np.floating):
            out[key] = float(value)
        elif isinstance(value, list | tuple | np.ndarray):
            arr = np.asarray(value)
            strings = arr.dtype.kind == "O" and all(isinstance(v, str) for v in value)
            if arr.dtype.kind in "US" or strings:
                out[key] = ",".join(str(v) for v in value)
            elif arr.dtype.kind in "iu":
                out[key] = arr.astype(np.int64)
            elif arr.dtype.kind in "fb":
                out[key] = arr.astype(np.float64)
            else:
                msg = f"attribute `{key}` must be numbers or strings; got {value!r}."
                raise DatasetError(msg)
        else:
            msg = (
                f"attribute `{key}` must be a str, number, bool, None, sequence or mapping; "
                f"got {type(value).__name__}."
            )
            raise DatasetError(msg)
    return out
