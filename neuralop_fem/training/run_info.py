"""``run.json`` under its former module: the record is read and checked by
:class:`neuralop_fem.runs.RunDir` (:mod:`neuralop_fem.runs.validation` holds the checks).
Kept for the callers that import :func:`read_run_info` from here."""

from __future__ import annotations

from ..runs.run_dir import read_run_info

__all__ = ["read_run_info"]
