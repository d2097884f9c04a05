"""Parallel, resumable, appendable generation of Burgers and Darcy datasets.

:func:`generate` draws the inputs from Gaussian random fields, solves them with the bundled
:mod:`solvers` and writes one netCDF4 file that follows :mod:`neuralop_fem.data.schema`.

- **Reproducible.** Sample ``k`` is drawn from its own seed
  ``solvers.grf.sample_seeds(seed, k)``; the chunk layout depends only on the chunk size, so
  sample ``k`` is bit-identical for any number of workers, on a cluster or not.
- **Resumable.** Chunks of samples are persisted atomically in ``FILE.nc.partial/`` as they
  finish; running the same call again after a crash (or SIGKILL) computes only the missing
  chunks. The finished file is assembled to a temporary file and renamed into place.
- **Appendable.** ``append=True`` adds ``n_samples`` samples with the next indices and seeds
  to a finished file: N then M equals one run of N + M.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import numpy as np

from ..._version import __version__
from ...errors import ConfigError, DatasetError
from ...files import ExclusiveLock, remove_stale_temporaries
from ...problems import get_kit, kit_table
from ...torch_solvers.errors import DeviceMemoryError
from ..io import load_dataset
from ..provenance import ATTR, generation_settings
from .assemble import assemble, check_storable
from .config import (
    BurgersDataConfig,
    DarcyDataConfig,
    DataConfig,
    config_class,
)
from .executors import ChunkResult, Progress, check_main_guard, run_chunks
from .store import Manifest, PartialRun, chunk_bounds, partial_dir

__all__ = [
    "BENCHMARK_RESOLUTION",
    "DEFAULT_CHUNK_SIZE",
    "BurgersDataConfig",
    "DarcyDataConfig",
    "generate",
    "read_generation_settings",
]

_log = logging.getLogger("neuralop_fem.data.generation")

#: Grid of the benchmark datasets (each problem's ``benchmark_resolution``, a live view);
#: coarser data are strided subsamples of these.
BENCHMARK_RESOLUTION = kit_table("benchmark_resolution", where=lambda kit: kit.generated)
#: Samples per chunk (one solver call, one file in ``FILE.nc.partial``): each problem kit's
#: ``chunk_size`` (a live view).
DEFAULT_CHUNK_SIZE = kit_table("chunk_size", where=lambda kit: kit.generated)

_FORMAT = 1  # version of the manifest layout
_SOURCE = "neuralop_fem generate"


#: Largest dataset seed: it is stored as a signed 64-bit attribute.
MAX_SEED = 2**63 - 1


def _int_arg(value: Any, name: str, *, minimum: int, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum \
            or (maximum is not None and value > maximum):
        bound = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        msg = f"`{name}` must be an integer {bound}; got {value!r}."
        raise ConfigError(msg)
    return int(value)


def _settings(
    problem: str, config: DataConfig, *, resolution: int, seed: int, dtype: str
) -> dict[str, Any]:
    """Everything that determines the samples and their storage (compared on resume/append)."""
    return {
        "problem": problem,
        "resolution": resolution,
        "dataset_seed": seed,
        "dtype": dtype,
        **config.to_dict(),
    }


def _describe_differences(old: dict[str, Any], new: dict[str, Any], old_name: str) -> str:
    keys = sorted(
        k for k in old.keys() | new.keys() if old.get(k, "<absent>") != new.get(k, "<absent>")
    )
    return "; ".join(
        f"{k}: {old.get(k, '<absent>')!r} ({old_name}) vs {new.get(k, '<absent>')!r} (this call)"
        for k in keys
    )


def read_generation_settings(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The generation settings stored in a file written by :func:`generate`.

    Returns
    -------
    dict
        ``problem``, ``resolution``, ``dataset_seed``, ``dtype``, ``n_samples``,
        ``chunk_size``, ``config`` (a :class:`BurgersDataConfig` or :class:`DarcyDataConfig`),
        ``solver_class`` (the name of the class that solved the samples) and ``device`` (the
        torch device of a torch solver, None for the numpy solvers).

    Raises
    ------
    DatasetError
        If the file is not a dataset written by :func:`generate`.
    """
    path = Path(path)
    with load_dataset(path) as ds:
        attrs = dict(ds.attrs)
        n_samples = int(ds.sizes["sample"])
        samples = np.asarray(ds["sample"].values)
    stored = generation_settings(attrs, source=str(path))
    if stored is None:
        msg = (f"{path}: was not written by `neuralop_fem generate` (no generation settings in "
               f"`{ATTR}`); it cannot be appended to.")
        raise DatasetError(msg)
    settings = dict(stored["settings"])
    if not np.array_equal(samples, np.arange(n_samples)):
        msg = f"{path}: sample indices must be 0..{n_samples - 1} to append; got others."
        raise DatasetError(msg)
    problem = settings.pop("problem")
    out = {k: settings.pop(k) for k in ("resolution", "dataset_seed", "dtype")}
    out["problem"] = problem
    out["n_samples"] = n_samples
    out["chunk_size"] = int(stored.get("chunk_size", 1))
    out["config"] = config_class(problem).from_stored(settings)
    solver_config = stored.get("solver_config")
    out["solver_class"] = stored.get("solver_class")
    out["device"] = solver_config.get("device") if isinstance(solver_config, dict) else None
    return out


def _check_call(
    problem: str, config: DataConfig | None, *, workers: int | None, scheduler: str | None,
    dtype: str | None, chunk_size: int | None, append: bool, overwrite: bool,
    device: str | None = None,
) -> tuple[type[DataConfig], int, int]:
    cls = config_class(problem)
    if config is not None and not isinstance(config, cls):
        msg = (f"`config` must be a {cls.__name__} for problem {problem!r}; "
               f"got {type(config).__name__}.")
        raise ConfigError(msg)
    if workers is not None and scheduler is not None:
        msg = (f"`workers` and `scheduler` are mutually exclusive (local processes or a dask "
               f"cluster); got workers={workers!r} and scheduler={scheduler!r}.")
        raise ConfigError(msg)
    if device is not None and not isinstance(device, str):
        msg = f"`device` must be a torch device name such as 'cuda' or 'cpu'; got {device!r}."
        raise ConfigError(msg)
    on_gpu = device is not None and device.startswith("cuda")
    if device is not None and scheduler is not None:
        msg = (f"`device` and `scheduler` are mutually exclusive (the torch solvers run on this "
               f"machine); got device={device!r} and scheduler={scheduler!r}.")
        raise ConfigError(msg)
    if on_gpu and workers not in (None, 0):
        msg = (f"`workers` must be 0 or None with device={device!r}: this process drives the "
               f"GPU; got workers={workers!r}.")
        raise ConfigError(msg)
    if workers is None:
        workers = 0 if on_gpu else os.cpu_count() or 1
    workers = _int_arg(workers, "workers", minimum=0)
    if dtype is not None and dtype not in ("float64", "float32"):
        msg = f"`dtype` must be 'float64' or 'float32'; got {dtype!r}."
        raise ConfigError(msg)
    chunk = get_kit(problem).chunk_size if chunk_size is None else chunk_size
    chunk = _int_arg(chunk, "chunk_size", minimum=1)
    if append and overwrite:
        msg = "`append` and `overwrite` are mutually exclusive; got both True."
        raise ConfigError(msg)
    return cls, workers, chunk


def generate(
    problem: str,
    *,
    n_samples: int,
    out: str | os.PathLike[str],
    resolution: int | None = None,
    seed: int | None = None,
    config: BurgersDataConfig | DarcyDataConfig | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    append: bool = False,
    overwrite: bool = False,
    dtype: str | None = None,
    chunk_size: int | None = None,
    progress: bool | None = None,
    device: str | None = None,
    batch_size: int | None = None,
) -> Path:
    """Generate (or finish, or extend) a dataset file.

    Parameters
    ----------
    problem
        ``"burgers"`` or ``"darcy"``.
    n_samples
        Number of samples to generate (with ``append``: to add), >= 1.
    out
        Target ``.nc`` file; its directory must exist. Unfinished work lives in
        ``out + ".partial"``.
    resolution
        Solver grid: Burgers ``n`` points of ``x_i = i/n`` (even, >= 8); Darcy ``n x n``
        nodes of ``x_i = i/(n-1)`` (>= 3). None: the benchmark grid (8192 / 421), or the
        file's with ``append``.
    seed
        Dataset seed, >= 0; sample ``k`` uses ``solvers.grf.sample_seeds(seed, k)``.
        None: 0, or the file's with ``append``.
    config
        Physics and numerics (:class:`BurgersDataConfig` / :class:`DarcyDataConfig`).
        None: the benchmark defaults, or the file's with ``append``.
    workers
        Local worker processes (spawned, one BLAS thread each). None: all cores. 0: solve in
        this process (debugging). Excludes ``scheduler``.
    scheduler
        Address of a running dask.distributed scheduler to solve on instead.
    append
        Add ``n_samples`` samples with the next indices/seeds to the finished file ``out``.
        ``resolution``, ``seed``, ``config`` and ``dtype`` must match the file's (or be None).
        The samples of the file's last incomplete chunk are solved again together with the
        new ones (batched solves agree with other batchings only to round-off), so N then M
        is bit-identical to one run of N + M with the same chunk size (default: the file's).
    overwrite
        Replace a finished ``out`` and discard an unfinished run with other settings.
    dtype
        Storage type of the fields, ``"float64"`` (default) or ``"float32"``. Solves are
        always float64.
    chunk_size
        Samples per chunk (one solver call and one unit of resumption); default 16 (Burgers)
        or 4 (Darcy). Part of the settings of an unfinished run.
    progress
        True: tqdm bar; False: log lines (logger ``neuralop_fem.data.generation``, INFO);
        None: a bar when stderr is a terminal.
    device
        None: the numpy solvers. ``"cuda"``, ``"cuda:N"`` or ``"cpu"``: the solver's torch twin
        there (:mod:`neuralop_fem.torch_solvers`; docs/generating_data.md, "Generating on a
        GPU"): the same file, its record naming the twin and device. CUDA runs in this process
        (``workers`` None or 0). A run resumes, and a file is appended to, on its device only.
    batch_size
        With ``device``: samples per device call (default: a chunk); not a setting of the run.

    Returns
    -------
    pathlib.Path
        ``out``.

    Raises
    ------
    ConfigError
        Invalid or conflicting arguments; ``out`` exists (without ``overwrite``/``append``);
        an unfinished run or the file to append to has other settings (the message lists
        every differing setting).
    DatasetError
        ``append`` to a file that is missing or not written by :func:`generate`.
    ConvergenceError
        A solver missed its tolerance; chunks already done are kept for a rerun.
    ConfigError
        Also when a batch runs out of device memory: the message names a ``batch_size`` to
        rerun with; chunks already done are kept.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from neuralop_fem.data import generate, DarcyDataConfig
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> path = generate("darcy", n_samples=3, resolution=17, seed=1, out=d / "darcy.nc",
    ...                 workers=0, progress=False)
    >>> from neuralop_fem.data import load_dataset
    >>> with load_dataset(path) as ds:
    ...     print(ds["u"].dims, ds.attrs["problem"])
    ('sample', 'x', 'y') darcy
    """
    cls, workers, chunk = _check_call(
        problem, config, workers=workers, scheduler=scheduler, dtype=dtype,
        chunk_size=chunk_size, append=append, overwrite=overwrite, device=device,
    )
    n_samples = _int_arg(n_samples, "n_samples", minimum=1)
    out = _check_out(Path(out))
    if workers > 0 and scheduler is None:
        check_main_guard()
    with _exclusive(out):
        return _generate_locked(
            problem, cls, out, n_samples=n_samples, resolution=resolution, seed=seed,
            config=config, workers=workers, scheduler=scheduler, append=append,
            overwrite=overwrite, dtype=dtype, chunk=chunk, chunk_size=chunk_size,
            progress=progress, device=device, batch_size=batch_size,
        )


def _check_out(out: Path) -> Path:
    if not out.parent.is_dir():
        msg = f"`out` must be in an existing directory; got {out} ({out.parent} does not exist)."
        raise ConfigError(msg)
    if out.is_dir():
        msg = f"`out` must be a file name; got {out}, which is a directory."
        raise ConfigError(msg)
    if not os.access(out.parent, os.W_OK | os.X_OK):
        msg = f"`out` must be in a writable directory; got {out} ({out.parent} is not writable)."
        raise ConfigError(msg)
    return out


def _exclusive(out: Path) -> ExclusiveLock:
    """Hold an exclusive lock on ``out`` for the whole call: a second process writing the same
    file fails at once instead of racing the first (``.NAME.lock``, dies with its process)."""
    lock = out.parent / f".{out.name}.lock"
    msg = (f"`out` is being written by another process ({out}; lock {lock}); wait for it to "
           "finish or choose another --out.")
    return ExclusiveLock(lock, busy=ConfigError(msg))


def _generate_locked(problem: str, cls: type[DataConfig], out: Path, *, n_samples: int,
                     resolution: int | None, seed: int | None, config: DataConfig | None,
                     workers: int, scheduler: str | None, append: bool, overwrite: bool,
                     dtype: str | None, chunk: int, chunk_size: int | None,
                     progress: bool | None, device: str | None = None,
                     batch_size: int | None = None) -> Path:
    """:func:`generate` once the arguments are checked and ``out`` is locked."""
    remove_stale_temporaries(out.parent, out.name)  # a killed final assembly's temporary
    base = 0
    if append:
        if not out.is_file():
            msg = f"`out` must be a finished dataset file to append to; got {out} (no such file)."
            raise ConfigError(msg)
        existing = read_generation_settings(out)
        if existing["problem"] != problem:
            msg = f"`problem` must be {existing['problem']!r} to append to {out}; got {problem!r}."
            raise ConfigError(msg)
        base = existing["n_samples"]
        chunk = existing["chunk_size"] if chunk_size is None else chunk
        config = existing["config"] if config is None else config
        resolution = existing["resolution"] if resolution is None else resolution
        seed = existing["dataset_seed"] if seed is None else seed
        dtype = existing["dtype"] if dtype is None else dtype
        file_settings = _settings(problem, existing["config"], resolution=existing["resolution"],
                                  seed=existing["dataset_seed"], dtype=existing["dtype"])
    config = cls() if config is None else config
    resolution = config.check_resolution(
        get_kit(problem).problem.benchmark_resolution if resolution is None else resolution
    )
    seed = _int_arg(0 if seed is None else seed, "seed", minimum=0, maximum=MAX_SEED)
    dtype = "float64" if dtype is None else dtype
    settings = _settings(problem, config, resolution=resolution, seed=seed, dtype=dtype)
    if append and settings != file_settings:
        msg = (f"cannot append to {out}: its settings differ from this call's: "
               f"{_describe_differences(file_settings, settings, 'file')}.")
        raise ConfigError(msg)
    solver = config.make_solver(device=device, batch_size=batch_size)  # fail early
    if append:
        _check_same_solver(existing, solver, device, out)
    stop = base + n_samples
    # Solves are batched per chunk and batched solves agree only to round-off with other
    # batchings, so an append recomputes the file's last incomplete chunk together with the
    # new samples: the result is then bit-identical to one run of all the samples.
    base = (base // chunk) * chunk
    manifest: Manifest = {
        "format": _FORMAT,
        "settings": settings,
        "chunk_size": chunk,
        "start": base,
        "stop": stop,
        "append": append,
        "solver_class": type(solver).__name__,
        "solver_config": solver.config,
        "neuralop_fem_version": __version__,
        "device": device,
    }
    check_storable(manifest)  # everything the final file records, before any solve
    partial = PartialRun(partial_dir(out))
    resumable = _compare_partial(partial, manifest, out=out, overwrite=overwrite)
    if resumable and _already_assembled(out, manifest):
        partial.remove()  # killed after the final rename: only the cleanup was left
        return out
    if out.exists() and not (append or overwrite):
        msg = (f"`out` must not be an existing file; got {out}. Pass overwrite=True "
               "to replace it or append=True to extend it.")
        raise ConfigError(msg)
    if not resumable:
        partial.create(manifest)
    _compute(partial, manifest, config=config, workers=workers, scheduler=scheduler,
             progress=progress, batch_size=batch_size)
    assemble(partial, manifest, out=out, source=_SOURCE)
    partial.remove()
    return out


def _compare_partial(partial: PartialRun, manifest: Manifest, *, out: Path,
                     overwrite: bool) -> bool:
    """True if an unfinished run with these settings exists; refuse one with other settings."""
    if not partial.exists():
        return False
    try:
        old = partial.read_manifest()
    except (OSError, ValueError):
        old = {}
    keys = ("format", "chunk_size", "start", "stop", "append", "device")
    old_flat = {**_normalised(old.get("settings", {})), **{k: old.get(k) for k in keys}}
    new_flat = {**manifest["settings"], **{k: manifest[k] for k in keys}}
    if old_flat == new_flat:
        _log.info("resuming the unfinished run in %s", partial.directory)
        return True
    if overwrite:
        _log.warning("discarding the unfinished run in %s (other settings)", partial.directory)
        return False
    old_flat["n_samples"] = (old.get("stop") or 0) - (old.get("start") or 0)
    new_flat["n_samples"] = manifest["stop"] - manifest["start"]
    for flat in (old_flat, new_flat):
        flat.pop("stop")
        if flat["device"] is None:  # the numpy solvers
            flat.pop("device")
    msg = (f"{out} has an unfinished run ({partial.directory}) with other settings: "
           f"{_describe_differences(old_flat, new_flat, 'unfinished run')}. Rerun the original "
           f"command to finish it, or pass overwrite=True to discard it.")
    raise ConfigError(msg)


def _normalised(settings: dict[str, Any]) -> dict[str, Any]:
    """Settings of an unfinished run as this release writes them (older releases also stored
    the options of the solver not chosen); unreadable settings are returned unchanged, so
    they compare unequal."""
    config_keys = {"problem", "resolution", "dataset_seed", "dtype"}
    try:
        cls = config_class(settings["problem"])
        config = cls.from_stored({k: v for k, v in settings.items() if k not in config_keys})
    except (KeyError, TypeError, ValueError):
        return settings
    return {**{k: settings[k] for k in config_keys if k in settings}, **config.to_dict()}


def _already_assembled(out: Path, manifest: Manifest) -> bool:
    if not out.is_file():
        return False
    try:
        stored = read_generation_settings(out)
    except DatasetError:
        return False
    settings = _settings(manifest["settings"]["problem"], stored["config"],
                         resolution=stored["resolution"], seed=stored["dataset_seed"],
                         dtype=stored["dtype"])
    return settings == manifest["settings"] and stored["n_samples"] == manifest["stop"]


def _check_same_solver(existing: dict[str, Any], solver: Any, device: str | None,
                       out: Path) -> None:
    """Refuse to append samples of another solver or device than the file's (its record
    names one solver and device for all its samples)."""
    name = existing.get("solver_class")
    if name is None or (name, existing.get("device")) == (type(solver).__name__, device):
        return
    was = name if existing.get("device") is None else f"{name} on {existing['device']}"
    now = type(solver).__name__ if device is None else f"{type(solver).__name__} on {device}"
    hint = ("leave `device` out" if existing.get("device") is None
            else f"pass device={existing['device']!r}")
    msg = (f"cannot append to {out}: its samples were solved by {was}, this call solves with "
           f"{now}; {hint} to append.")
    raise ConfigError(msg)


def _compute(partial: PartialRun, manifest: Manifest, *, config: DataConfig,
             workers: int, scheduler: str | None, progress: bool | None,
             batch_size: int | None = None) -> None:
    start, stop = manifest["start"], manifest["stop"]
    chunks = chunk_bounds(start, stop, manifest["chunk_size"])
    done = partial.completed() & set(chunks)
    todo = [c for c in chunks if c not in done]
    n_done = sum(b - a for a, b in done)
    if done:
        _log.info("%d of %d chunks already done", len(done), len(chunks))
    bar = Progress(total=stop - start, initial=n_done, enabled=progress)

    def on_done(a: int, b: int, arrays: ChunkResult) -> None:
        partial.write_chunk(a, b, arrays)
        bar.update(b - a)

    try:
        run_chunks(todo, config=config, resolution=manifest["settings"]["resolution"],
                   dataset_seed=manifest["settings"]["dataset_seed"], workers=workers,
                   scheduler=scheduler, on_done=on_done, device=manifest.get("device"),
                   batch_size=batch_size)
    except DeviceMemoryError as exc:
        kept = len(partial.completed())
        msg = (f"out of memory on {exc.device} solving {exc.batch_size} samples at once; "
               f"rerun the same call with batch_size={exc.suggested} (--batch-size "
               f"{exc.suggested}): the {kept} chunk(s) already done in {partial.directory} "
               "are kept.")
        raise ConfigError(msg) from None
    finally:
        bar.close()

