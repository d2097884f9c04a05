"""Results files of the benchmarks and the reproduction: ``<stem>.json`` and ``<stem>.md``.

A results file must let a reader rerun it: the JSON holds the numbers and an
:func:`~neuralop_fem.environment.environment_record` (hardware, threads, versions, commit,
command), and :func:`footer` closes the markdown with the same facts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..files import write_text_atomic

__all__ = ["footer", "write_results"]


def write_results(directory: Path, stem: str, data: dict[str, Any],
                  markdown: str) -> tuple[Path, Path]:
    """Write ``directory/<stem>.json`` (numpy arrays and scalars as plain JSON) and
    ``directory/<stem>.md`` atomically; return the two paths."""
    directory.mkdir(parents=True, exist_ok=True)
    js, md = directory / f"{stem}.json", directory / f"{stem}.md"
    write_text_atomic(js, json.dumps(data, indent=2, default=_plain) + "\n")
    write_text_atomic(md, markdown if markdown.endswith("\n") else markdown + "\n")
    return js, md


def _plain(value: Any) -> Any:
    import numpy as np

    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    msg = f"not JSON serialisable: {type(value).__name__}"
    raise TypeError(msg)


def footer(record: dict[str, Any]) -> list[str]:
    """Markdown lines that close a results file: hardware, code commit and command of
    ``record`` (an :func:`~neuralop_fem.environment.environment_record`).

    >>> rec = {"hardware": {"cpu": "X", "cores": 2, "gpu": None, "threads": {}},
    ...        "code": {"commit": "abc", "dirty": True}, "command": "python b.py"}
    >>> footer(rec)[:2]
    ['Hardware: X (2 cores), threads {}; no GPU.', 'Code: abc (uncommitted changes).']
    """
    hw = record["hardware"]
    gpu = f"; GPU: {hw['gpu']}" if hw.get("gpu") else "; no GPU"
    dirty = " (uncommitted changes)" if record["code"]["dirty"] else ""
    return [f"Hardware: {hw['cpu']} ({hw['cores']} cores), threads {hw['threads']}{gpu}.",
            f"Code: {record['code']['commit']}{dirty}.", f"Command: `{record['command']}`", ""]
