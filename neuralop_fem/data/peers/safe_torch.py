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
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import DatasetError
from ...files import open_for_reading
from ...safe_text import clipped_repr, printable
from ...zip_check import archive_problem

__all__ = ["load_plain"]

#: The global a refused pickle names, in torch's wordings ("Unsupported global: GLOBAL m.f",
#: "unsupported GLOBAL posix.system whose module posix is blocked").
_GLOBAL = re.compile(r"GLOBAL ([\w.]+)")
#: The reason torch's safe unpickler gives for a stream it cannot parse.
_REASON = re.compile(r"WeightsUnpickler error: \s*(\S[^\n]*)")
_HDF5 = b"\x89HDF\r\n\x1a\n"
_PLAIN = (int, float, bool, str, type(None))


def load_plain(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The dict of a ``.pt`` file, tensors as numpy arrays, read without executing code.

    Parameters
    ----------
    path : path-like
        A file written by ``torch.save`` holding a dict: an uncompressed zip archive whose
        entries fit in the file (:func:`~neuralop_fem.zip_check.archive_problem`; torch's
        legacy format from before 1.6 is refused, as are compressed entries).

    Returns
    -------
    dict
        String keys; tensors become numpy arrays (bool, integer or float), nested dicts,
        lists and tuples are kept, numbers and strings as they are.

    Raises
    ------
    DatasetError
        One line naming the file: not a torch file, truncated, compressed or oversized zip
        entries (refused unread), pickled objects other than
        tensors and plain containers (refused unread), a top level other than a dict, or a
        tensor of an unsupported kind (sparse, quantized, complex).
    """
    path = Path(path)
    if not path.is_file():
        msg = f"{path}: no such file."
        raise DatasetError(msg)
    with open_for_reading(path, what="a torch .pt file", error=DatasetError) as fh:
        try:
            problem = archive_problem(fh)
        except zipfile.BadZipFile:
            raise DatasetError(_unreadable(path, "")) from None
        if problem is not None:
            msg = f"{path}: refused: {problem}; save the data again with torch.save."
            raise DatasetError(msg)
        obj = _load(fh, path)
    if not isinstance(obj, dict):
        msg = (f"{path}: must hold a dict of tensors (keys such as 'x', 'y'); got a "
               f"{type(obj).__name__}.")
        raise DatasetError(msg)
    return _plain(obj, path, "")


def _load(fh: Any, path: Path) -> Any:
    """``torch.load(weights_only=True)`` of the open file ``fh``, each failure one line."""
    import pickle

    import torch

    try:
        return torch.load(fh, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        found = _GLOBAL.search(str(exc))
        if found is None:  # not a pickle it can parse (a damaged stream, ...)
            raise DatasetError(_unreadable(path, str(exc))) from None
        msg = (f"{path}: refused: it holds pickled objects other than tensors, dicts and lists"
               f" (it names {printable(found.group(1), limit=200)}); loading it would run code "
               "from the file. Save the data as a plain dict of tensors "
               "(torch.save({'x': x, 'y': y}, path)).")
        raise DatasetError(msg) from None
    except Exception as exc:  # zip/EOF/RuntimeError from a truncated or foreign file
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        msg = (f"{path}: cannot be read as a torch .pt file (truncated or not torch.save?): "
               f"{printable(first, limit=200)}")
        raise DatasetError(msg) from None


def _unreadable(path: Path, error: str) -> str:
    """One line for a file torch's safe unpickler cannot parse (no global named)."""
    with open(path, "rb") as f:
        head = f.read(len(_HDF5))
    if head == _HDF5:
        why = "it is an HDF5 file (a netCDF4 dataset or a PDEBench file?), not a torch.save file"
    elif not error:
        why = ("not a zip archive as torch.save writes (truncated, damaged, another format, or "
               "torch's legacy format from before 1.6, which is not read)")
    else:
        reason = _REASON.search(error)
        why = printable(reason.group(1).strip(), limit=200) if reason else \
            "the safe unpickler cannot parse it"
    return f"{path}: cannot be read as a torch .pt file (truncated or not torch.save?): {why}"


def _plain(obj: Any, path: Path, where: str) -> Any:
    import torch

    if isinstance(obj, dict):
        bad = [k for k in obj if not isinstance(k, str)]
        if bad:
            inside = f" in `{printable(where, limit=200)}`" if where else ""
            msg = f"{path}: dict keys must be strings; got {clipped_repr(bad[0])}{inside}."
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
