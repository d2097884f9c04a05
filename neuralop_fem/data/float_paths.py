"""The run-time choices that decide the last bits of generated data.

numpy and OpenBLAS pick their kernels when they load, by the CPU's instruction set: numpy its
loops for ``exp``, ``sin``, ``cos``, ``log`` (AVX-512 or AVX2 or baseline), OpenBLAS its dot
products and matrix kernels (``SkylakeX``, ``Haswell``, ``Zen``, ...). Kernels of different
sets round differently, so a dataset regenerated from its seed on another CPU holds the same
values only up to rounding (see :mod:`neuralop_fem.data.fingerprint`). ``generate`` records
:func:`float_paths` of every process that solved a chunk, so a reader knows what to match for
a bit-identical regeneration: the same choices, or the environment variables
``NPY_DISABLE_CPU_FEATURES`` and ``OPENBLAS_CORETYPE`` that force them (measured: an AVX-512
Intel Xeon with ``NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR"`` and
``OPENBLAS_CORETYPE=Haswell`` reproduces data written on an AVX2 AMD EPYC bit for bit).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..environment import blas_libraries, cpu_model, numpy_simd

__all__ = ["describe_float_paths", "float_paths", "float_paths_json"]

#: Environment variables that override the kernels numpy and OpenBLAS would choose.
OVERRIDES = ("NPY_DISABLE_CPU_FEATURES", "NPY_ENABLE_CPU_FEATURES", "OPENBLAS_CORETYPE")


@functools.cache
def float_paths() -> dict[str, Any]:
    """This process's kernel choices: ``{"cpu", "numpy", "numpy_simd", "blas", "overrides"}``.

    ``numpy_simd`` is the target of numpy's float64 loops (e.g. ``X86_V4`` = AVX-512,
    ``X86_V3`` = AVX2; None on numpy < 2), ``blas`` the loaded BLAS libraries with their
    kernel set, ``overrides`` the set variables of :data:`OVERRIDES`. Computed once per
    process.
    """
    return {
        "cpu": cpu_model(),
        "numpy": np.__version__,
        "numpy_simd": numpy_simd(),
        "blas": blas_libraries(),
        "overrides": {k: os.environ[k] for k in OVERRIDES if k in os.environ},
    }


def float_paths_json() -> str:
    """:func:`float_paths` as canonical JSON text (stored with each generated chunk)."""
    return json.dumps(float_paths(), sort_keys=True)


def describe_float_paths(paths: object) -> str:
    """One line per recorded set of choices (``paths``: the ``float_paths`` list of a file's
    record), for ``neuralop-fem info``; ``unknown`` for a file that records none (written by
    an earlier release or imported) or an entry that is not a record."""
    unknown = "unknown (not recorded)"
    if not paths or not isinstance(paths, Sequence) or isinstance(paths, str):
        return unknown
    lines = []
    for p in paths:
        if not isinstance(p, Mapping):
            lines.append(unknown)
            continue
        simd = p.get("numpy_simd") or "?"
        blas = ", ".join(map(str, p.get("blas") or [])) or "?"
        overrides = p.get("overrides")
        over = ("; " + " ".join(f"{k}={v}" for k, v in overrides.items())
                if isinstance(overrides, Mapping) and overrides else "")
        lines.append(f"{p.get('cpu', '?')}: numpy {p.get('numpy', '?')} loops {simd}, "
                     f"BLAS {blas}{over}")
    return "\n".join(lines)
