"""What every benchmark records beside its numbers: hardware, versions, code, command.

A results file must let a reader rerun it: :func:`record` gives the CPU/GPU, thread settings,
package versions, the git commit (and whether the tree had uncommitted changes) and the exact
command line; :func:`write_results` writes ``results/<stem>.json`` and ``.md`` atomically.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parents[1]
_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo (or the platform's description)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def gpu_name() -> str | None:
    """The name of CUDA device 0, or None (torch is imported only if it already is)."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available():
        return None
    return str(torch.cuda.get_device_name(0))


def git_commit() -> dict[str, Any]:
    """``{"commit": sha, "dirty": bool}`` of the checkout (None outside git)."""
    def run(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                                 check=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip()

    status = run("status", "--porcelain", "--untracked-files=no")
    dirty = bool(status) if status is not None else None
    return {"commit": run("rev-parse", "HEAD"), "dirty": dirty}


def versions() -> dict[str, str]:
    """Versions of Python and of the numerical packages that are loaded."""
    out = {"python": platform.python_version()}
    for name in ("numpy", "scipy", "torch", "xarray", "pyamg", "skfem", "neuralop_fem"):
        module = sys.modules.get(name)
        if module is not None:
            out[name] = str(getattr(module, "__version__", "?"))
    return out


def command() -> str:
    """The command line that ran this script, with the thread settings in front."""
    env = " ".join(f"{v}={os.environ[v]}" for v in _THREAD_VARS if v in os.environ)
    argv = " ".join(shlex.quote(a) for a in sys.argv)
    script = Path(sys.argv[0])
    if script.is_absolute() and script.is_relative_to(ROOT):
        argv = " ".join([shlex.quote(str(script.relative_to(ROOT)))] +
                        [shlex.quote(a) for a in sys.argv[1:]])
    return f"{env} python {argv}".strip()


def record() -> dict[str, Any]:
    """Hardware, threads, versions, code and command of this run."""
    return {
        "hardware": {"cpu": cpu_model(), "cores": os.cpu_count(), "gpu": gpu_name(),
                     "threads": {v: os.environ.get(v) for v in _THREAD_VARS}},
        "versions": versions(),
        "code": git_commit(),
        "command": command(),
    }


def write_results(stem: str, data: dict[str, Any], markdown: str) -> tuple[Path, Path]:
    """Write ``results/<stem>.json`` and ``results/<stem>.md`` atomically."""
    from neuralop_fem.files import write_text_atomic

    RESULTS.mkdir(parents=True, exist_ok=True)
    js, md = RESULTS / f"{stem}.json", RESULTS / f"{stem}.md"
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


def footer(rec: dict[str, Any]) -> list[str]:
    """Markdown lines that close a results file: hardware, code commit and command of ``rec``
    (a :func:`record`)."""
    hw = rec["hardware"]
    gpu = f"; GPU: {hw['gpu']}" if hw.get("gpu") else "; no GPU"
    dirty = " (uncommitted changes)" if rec["code"]["dirty"] else ""
    return [f"Hardware: {hw['cpu']} ({hw['cores']} cores), threads {hw['threads']}{gpu}.",
            f"Code: {rec['code']['commit']}{dirty}.", f"Command: `{rec['command']}`", ""]


def count(minimum: int = 1) -> Callable[[str], int]:
    """An argparse type for a count or a size: a decimal integer ``>= minimum``.

    The rule and message of the ``neuralop-fem`` options, so ``--samples 0`` stops before any
    work (and before a results file is rewritten) with ``argument --samples: must be an
    integer >= 1; got '0'``.
    """
    from neuralop_fem.commands._options import int_range

    return int_range(minimum)


def input_file(text: str) -> Path:
    """An argparse type: an existing, readable file (the ``neuralop-fem`` rule and message)."""
    from neuralop_fem.commands._options import input_file as parse

    return parse(text)


def number_above(minimum: float) -> Callable[[str], float]:
    """An argparse type: a finite number ``> minimum`` (the ``neuralop-fem`` rule)."""
    from neuralop_fem.commands._options import float_range

    return float_range(minimum)


def run_script(main: Callable[[list[str]], int | None], argv: list[str] | None = None) -> int:
    """Run a benchmark's ``main(argv)`` the way the ``neuralop-fem`` command line runs a command.

    A bad input (:class:`~neuralop_fem.errors.NeuralopFemError`), an :class:`OSError` or a
    :class:`MemoryError` ends the script with one line on stderr, ``<script>: error: ...``, and
    exit status 2; any other exception is reported as an internal error (status 1); Ctrl-C
    gives status 130. ``--debug`` anywhere in ``argv`` shows the traceback instead.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    from neuralop_fem.cli import run_reporting

    name = Path(sys.argv[0]).name or "benchmark"
    return run_reporting(lambda: int(main(argv) or 0), name, debug=debug)
