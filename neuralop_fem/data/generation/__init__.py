"""Dataset generation: parallel, resumable, appendable (see :func:`generate`).

- :mod:`.api`: :func:`generate` and :func:`read_generation_settings`
- :mod:`.config`: :class:`BurgersDataConfig`, :class:`DarcyDataConfig` (physics and numerics),
  :func:`like_config` (the config of another tool's kind of data, ``generate --like``)
- :mod:`.executors`: local processes or a dask cluster; one chunk of samples per task
- :mod:`.store`: the chunk store of an unfinished run (``FILE.nc.partial/``)
- :mod:`.assemble`: the final file from the chunks
- :mod:`.samples`: :func:`generate_samples`, a few samples of a seeded dataset by index

The provenance record written into every file is owned by :mod:`neuralop_fem.data.provenance`.
"""

from __future__ import annotations

from typing import Any

# Names resolve on first use, so that reading a config class (``generate --help`` builds its
# options from the config fields) does not import xarray and dask.
_NAMES = {
    "BENCHMARK_RESOLUTION": "api", "DEFAULT_CHUNK_SIZE": "api", "generate": "api",
    "read_generation_settings": "api", "BurgersDataConfig": "config",
    "DarcyDataConfig": "config", "DataConfig": "config", "config_class": "config",
    "like_config": "config",
    "generate_samples": "samples",
}

__all__ = [
    "BENCHMARK_RESOLUTION",
    "DEFAULT_CHUNK_SIZE",
    "BurgersDataConfig",
    "DarcyDataConfig",
    "DataConfig",
    "config_class",
    "generate",
    "generate_samples",
    "like_config",
    "read_generation_settings",
]


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        import importlib

        return getattr(importlib.import_module(f".{_NAMES[name]}", __name__), name)
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)


def __dir__() -> list[str]:
    return sorted(__all__)
