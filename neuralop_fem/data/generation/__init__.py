"""Dataset generation: parallel, resumable, appendable (see :func:`generate`).

- :mod:`.api`: :func:`generate` and :func:`read_generation_settings`
- :mod:`.config`: :class:`BurgersDataConfig`, :class:`DarcyDataConfig` (physics and numerics)
- :mod:`.executors`: local processes or a dask cluster; one chunk of samples per task
- :mod:`.store`: the chunk store of an unfinished run (``FILE.nc.partial/``)
- :mod:`.assemble`: the final file from the chunks
- :mod:`.samples`: :func:`generate_samples`, a few samples of a seeded dataset by index

The provenance record written into every file is owned by :mod:`neuralop_fem.data.provenance`.
"""

from __future__ import annotations

from .api import (
    BENCHMARK_RESOLUTION,
    DEFAULT_CHUNK_SIZE,
    generate,
    read_generation_settings,
)
from .config import BurgersDataConfig, DarcyDataConfig, DataConfig, config_class
from .samples import generate_samples

__all__ = [
    "BENCHMARK_RESOLUTION",
    "DEFAULT_CHUNK_SIZE",
    "BurgersDataConfig",
    "DarcyDataConfig",
    "DataConfig",
    "config_class",
    "generate",
    "generate_samples",
    "read_generation_settings",
]
