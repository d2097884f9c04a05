"""A stand-in solver for the pool tests: it logs every call (process, samples, BLAS threads) and
is slow on its first call in each process, like a real solver's first call (imports, plans,
caches). Spawned pool workers import it by name, so it lives in a module of its own."""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_info

#: Labels already solved in this process.
_SEEN: set[str] = set()


@dataclass(frozen=True)
class RecordingSolver:
    """Returns its inputs; logs each call as one JSON file in ``log_dir``."""

    log_dir: str
    label: str
    first_call_s: float = 1.0
    problem: str = "burgers"

    def solve(self, values: np.ndarray) -> np.ndarray:
        started = time.perf_counter()
        cold = self.label not in _SEEN
        _SEEN.add(self.label)
        if cold:
            time.sleep(self.first_call_s)
        threads = max(int(lib["num_threads"]) for lib in threadpool_info())
        record = {"pid": os.getpid(), "label": self.label, "n": len(values), "cold": cold,
                  "started": started, "blas_threads": threads}
        Path(self.log_dir, f"{uuid.uuid4().hex}.json").write_text(json.dumps(record))
        return np.array(values, dtype=np.float64)


def read_log(log_dir: str | Path) -> list[dict]:
    """The calls logged in ``log_dir``, in the order they started."""
    rows = [json.loads(p.read_text()) for p in Path(log_dir).glob("*.json")]
    return sorted(rows, key=lambda r: r["started"])
