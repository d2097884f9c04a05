"""Where a result was computed: CPU, BLAS, numpy's SIMD loops, threads, versions, code commit.

The one place that reads the machine and the checkout, for ``run.json`` (the trainer), the
provenance of generated data (:mod:`neuralop_fem.data.float_paths`), the fair verdict's
hardware words, the reproduction rows, every benchmark's results file and the GPU campaign
(:func:`torch_environment`). Importing it imports neither torch nor scipy;
:func:`blas_libraries` loads scipy's BLAS and :func:`torch_environment` torch when called.

>>> record = environment_record()
>>> sorted(record)
['code', 'command', 'hardware', 'versions']
>>> record["hardware"]["cpu"] == cpu_model()
True
"""

from __future__ import annotations

import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["THREAD_VARIABLES", "blas_libraries", "code_version", "command_line", "cpu_model",
           "describe_torch_environment", "environment_record", "gpu_name", "numpy_simd",
           "package_versions", "thread_settings", "threads_note", "torch_environment"]

#: Environment variables that set the thread counts of OpenMP, OpenBLAS and MKL.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
#: The source tree this package is imported from (a git checkout in development).
SOURCE_ROOT = Path(__file__).resolve().parents[1]
#: Packages whose versions a record lists when they are loaded.
_PACKAGES = ("numpy", "scipy", "torch", "xarray", "pyamg", "skfem", "neuralop_fem")


def cpu_model() -> str:
    """The CPU model name (``/proc/cpuinfo``), else what :mod:`platform` knows."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def numpy_simd() -> str | None:
    """The SIMD target of numpy's float64 ``exp`` loop (its transcendental loops share it),
    e.g. ``X86_V4`` (AVX-512) or ``X86_V3`` (AVX2); None on numpy < 2."""
    try:
        from numpy.lib.introspect import opt_func_info
    except ImportError:  # numpy < 2.0 has no introspection
        return None
    info = opt_func_info(func_name="exp", signature="float64")
    loop = info.get("exp", {})
    entry = loop.get("dd") or next(iter(loop.values()), None)
    return None if entry is None else str(entry.get("current"))


def blas_libraries() -> list[str]:
    """``prefix architecture`` of each BLAS library loaded (numpy's, scipy's), e.g.
    ``libscipy_openblas SkylakeX``. Loads scipy's BLAS so that it is listed."""
    import scipy.linalg  # noqa: F401  (loads scipy's BLAS, so threadpoolctl sees it)
    from threadpoolctl import threadpool_info

    found = {f"{lib.get('prefix')} {lib.get('architecture')}" for lib in threadpool_info()
             if lib.get("user_api") == "blas"}
    return sorted(found)


def thread_settings() -> dict[str, str | None]:
    """The values of :data:`THREAD_VARIABLES` (None where unset)."""
    return {v: os.environ.get(v) for v in THREAD_VARIABLES}


def gpu_name() -> str | None:
    """The name of CUDA device 0, or None (torch is consulted only if already imported)."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available():
        return None
    return str(torch.cuda.get_device_name(0))


def code_version(root: Path | None = None) -> dict[str, Any]:
    """``{"commit", "dirty"}`` of the source tree: the git commit (None outside a git
    checkout, e.g. an installed wheel) and whether tracked files other than the benchmark
    results (``benchmarks/results/``, outputs rather than code) have uncommitted changes
    (None when unknown). ``root``: the tree (default: the one this package is imported from).
    """
    root = SOURCE_ROOT if root is None else root

    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                                 text=True, check=True, timeout=20)
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip()

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no", "--", ".",
                 ":(exclude)benchmarks/results") if commit else None
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def package_versions() -> dict[str, str]:
    """Versions of Python and of the numerical packages that are loaded."""
    out = {"python": platform.python_version()}
    for name in _PACKAGES:
        module = sys.modules.get(name)
        if module is not None:
            out[name] = str(getattr(module, "__version__", "?"))
    return out


def command_line(argv: list[str] | None = None) -> str:
    """The command that runs this process (``argv``, default ``sys.argv``), with the thread
    settings in front and a script inside the source tree named relative to it (a module run
    with ``python -m`` by its name)."""
    main_spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if argv is None and main_spec is not None and sys.argv and sys.argv[0] != "-c":
        argv = ["-m", main_spec.name.removesuffix(".__main__"), *sys.argv[1:]]
    argv = list(sys.argv if argv is None else argv)
    env = " ".join(f"{v}={os.environ[v]}" for v in THREAD_VARIABLES if v in os.environ)
    script = Path(argv[0]) if argv else Path()
    if script.is_absolute() and script.is_relative_to(SOURCE_ROOT):
        argv[0] = str(script.relative_to(SOURCE_ROOT))
    return f"{env} python {shlex.join(argv)}".strip()


def environment_record() -> dict[str, Any]:
    """Hardware (CPU, cores, GPU, thread settings), versions, code commit and command line of
    this process: what a results file records beside its numbers."""
    return {
        "hardware": {"cpu": cpu_model(), "cores": os.cpu_count(), "gpu": gpu_name(),
                     "threads": thread_settings()},
        "versions": package_versions(),
        "code": code_version(),
        "command": command_line(),
    }


def _nvidia_smi() -> dict[str, str] | None:
    """Name, driver and memory of GPU 0 as ``nvidia-smi`` reports them (None without it)."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                              "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=30, check=True).stdout.strip().splitlines()
        name, driver, memory = (s.strip() for s in out[0].split(","))
    except (OSError, subprocess.SubprocessError, IndexError, ValueError):
        return None
    return {"name": name, "driver": driver, "memory": memory}


def torch_environment() -> dict[str, Any]:
    """What a GPU result depends on: the GPU (name, memory, multiprocessors, compute
    capability; None without CUDA), driver, torch / CUDA / cuDNN versions, the numerics flags
    (TF32, float32 matmul precision, ``CUBLAS_WORKSPACE_CONFIG``), CPU, code commit. Imports
    torch."""
    import numpy as np
    import torch

    cuda = torch.cuda.is_available()
    env: dict[str, Any] = {
        "python": platform.python_version(), "torch": torch.__version__,
        "cuda": torch.version.cuda, "numpy": np.__version__,
        "cudnn": torch.backends.cudnn.version() if cuda else None,
        "cpu": cpu_model(), "cpu_count": os.cpu_count(), "platform": platform.platform(),
        "code": code_version(), "nvidia_smi": _nvidia_smi(), "gpu": None,
        "flags": {"matmul_tf32": torch.backends.cuda.matmul.allow_tf32,
                  "cudnn_tf32": torch.backends.cudnn.allow_tf32,
                  "float32_matmul_precision": torch.get_float32_matmul_precision(),
                  "CUBLAS_WORKSPACE_CONFIG": os.environ.get("CUBLAS_WORKSPACE_CONFIG")},
    }
    if cuda:
        p = torch.cuda.get_device_properties(0)
        env["gpu"] = {"name": p.name, "memory_gib": round(p.total_memory / 2**30, 1),
                      "multiprocessors": p.multi_processor_count,
                      "capability": f"{p.major}.{p.minor}"}
    return env


def describe_torch_environment(env: dict[str, Any]) -> list[str]:
    """Markdown list items of a :func:`torch_environment` record."""
    gpu = env["gpu"] or {}
    smi = env["nvidia_smi"] or {}
    code = env["code"]
    return [
        f"- GPU: {gpu.get('name', 'none')} ({gpu.get('memory_gib', '-')} GiB, "
        f"{gpu.get('multiprocessors', '-')} SMs, compute capability {gpu.get('capability', '-')})",
        f"- driver {smi.get('driver', '-')}; torch {env['torch']}, CUDA {env['cuda']}, "
        f"cuDNN {env['cudnn']}; Python {env['python']}, numpy {env['numpy']}",
        f"- CPU: {env['cpu']}, {env['cpu_count']} cores; {env['platform']}",
        f"- numerics: {env['flags']}",
        f"- code: commit {code.get('commit') or code.get('given')} (dirty: {code.get('dirty')})",
    ]


def threads_note(threads: int, *, load: float, cores: int) -> str | None:
    """A warning when ``threads`` CPU threads would share busy cores, else None.

    torch's CPU threads wait for each other at every parallel region, so a thread that
    shares its core with another busy process stalls all of them: measured on a 2-core
    machine at load average ~7, two threads trained 7-9x slower than one
    (``benchmarks/bench_threads.py``; on the idle machine two threads were 1.4-1.6x faster).

    Parameters
    ----------
    threads : int
        Threads the training will use (>= 1).
    load : float
        The one-minute load average before the training starts (``os.getloadavg()[0]``).
    cores : int
        Logical cores of the machine.

    Examples
    --------
    >>> threads_note(1, load=7.0, cores=2) is None
    True
    >>> threads_note(2, load=0.1, cores=2) is None
    True
    >>> threads_note(2, load=6.9, cores=2)[:43]
    'threads: 2 on 2 cores at load average 6.9: '
    """
    if threads <= 1 or load + threads <= cores + 0.5:
        return None
    return (f"threads: {threads} on {cores} cores at load average {load:.1f}: threads sharing "
            "busy cores wait for each other; --threads 1 is likely faster here")
