"""Read a torch ``.pt`` file without running code from it.

``torch.save`` writes a pickle; unpickling an arbitrary pickle can run any code its author
chose (a class whose ``__reduce__`` names ``os.system``, say). :func:`load_plain` reads with
``torch.load(weights_only=True)``, whose unpickler builds only tensors, containers and plain
values and refuses every other global *before* calling it, and then accepts only a dict with
string keys whose values are tensors, dicts, lists, tuples, numbers, strings or None. Anything
else is a :class:`~neuralop_fem.errors.DatasetError` of one line; nothing from the file runs.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import DatasetError

__all__ = ["load_plain"]

_GLOBAL = re.compile(r"Unsupported global: GLOBAL ([\w.]+)")
_PLAIN = (int, float, bool, str, type(None))


def load_plain(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The dict of a ``.pt`` file, tensors as numpy arrays, read without executing code.

    Parameters
    ----------
    path : path-like
        A file written by ``torch.save`` (zip or legacy format) holding a dict.

    Returns
    -------
    dict
        String keys; tensors become numpy arrays (bool, integer or float), nested dicts,
        lists and tuples are kept, numbers and strings as they are.

    Raises
    ------
    DatasetError
        One line naming the file: not a torch file, truncated, pickled objects other than
        tensors and plain containers (refused unread), a top level other than a dict, or a
        tensor of an unsupported kind (sparse, quantized, complex).
    """
    import pickle

    import torch

    path = Path(path)
    if not path.is_file():
        msg = f"{path}: no such file."
        raise DatasetError(msg)
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        found = _GLOBAL.search(str(exc))
        what = f" (it names {found.group(1)})" if found else ""
        msg = (f"{path}: refused: it holds pickled objects other than tensors, dicts and lists"
               f"{what}; loading it would run code from the file. Save the data as a plain "
               "dict of tensors (torch.save({'x': x, 'y': y}, path)).")
        raise DatasetError(msg) from None
    except Exception as exc:  # zip/EOF/RuntimeError from a truncated or foreign file
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        msg = f"{path}: cannot be read as a torch .pt file (truncated or not torch.save?): {first}"
        raise DatasetError(msg) from None
    if not isinstance(obj, dict):
        msg = (f"{path}: must hold a dict of tensors (keys such as 'x', 'y'); got a "
               f"{type(obj).__name__}.")
        raise DatasetError(msg)
    return _plain(obj, path, "")


def _plain(obj: Any, path: Path, where: str) -> Any:
    import torch

    if isinstance(obj, dict):
        bad = [k for k in obj if not isinstance(k, str)]
        if bad:
            inside = f" in `{where}`" if where else ""
            msg = f"{path}: dict keys must be strings; got {bad[0]!r}{inside}."
            raise DatasetError(msg)
        return {k: _plain(v, path, f"{where}{k}" if not where else f"{where}.{k}")
                for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return type(obj)(_plain(v, path, f"{where}[{i}]") for i, v in enumerate(obj))
    if isinstance(obj, torch.Tensor):
        if obj.layout != torch.strided or obj.is_quantized or obj.is_complex():
            msg = (f"{path}: key `{where}` must be a dense real tensor; got layout "
                   f"{obj.layout}, dtype {obj.dtype}.")
            raise DatasetError(msg)
        if obj.dtype in (torch.bfloat16, torch.float16):
            obj = obj.to(torch.float32)
        return np.asarray(obj.detach().numpy())
    if isinstance(obj, _PLAIN):
        return obj
    msg = (f"{path}: key `{where}` must be a tensor, dict, list, number or string; got "
           f"{type(obj).__name__}.")
    raise DatasetError(msg)
