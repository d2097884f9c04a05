"""Generation presets that make other tools' kinds of data with this package's solvers.

A table of plain values (this module imports nothing heavy, so the command line lists the
presets in ``--help`` without importing xarray).

``neuralop-fem generate darcy --like NAME`` (or
:func:`neuralop_fem.data.generation.like_config` in Python) takes the grid,
resolution and physics of a peer's dataset from a :class:`PeerPreset`; options given beside it
override the preset. The data are this package's (GRF coefficient, verified solver, seeds and
provenance); ``neuralop-fem export --format FORMAT`` then writes them in the peer's layout.

* ``neuralop-darcy``: neuraloperator's small Darcy set (``darcy_{train,test}_{16,32}.pt``):
  points ``x_i = i/n`` (their grid embedding), ``n = 16``; two phases, the True phase 1 and
  the False phase 0.05 (:data:`NEURALOP_PHASE_VALUES`, the phases an import gives their
  booleans by default), so that export writes their boolean ``x``; forcing 2.5. Their files
  record neither the phase values nor the forcing: the ratio 20 and the forcing 2.5 (times
  the high phase) fit their 16 x 16 labels best (``benchmarks/results/neuralop_phases.md``).
  ``--resolution 32`` gives their test grid. Its training presets (:attr:`PeerPreset.train_presets`)
  ``darcy-fno-neuralop`` and ``darcy-galerkin-neuralop`` are tuned for data of its size
  (1000 samples at 16 x 16): ``neuralop-fem train --preset darcy-fno-neuralop`` on their
  imported ``darcy_train_16.pt`` or on data generated ``--like neuralop-darcy``
  (``benchmarks/results/peers.md`` compares them with their example FNO).
* ``pdebench-darcy``: PDEBench's 2D Darcy files (``2D_DarcyFlow_beta{beta}_Train.hdf5``):
  ``128 x 128`` cell centres ``(i + 1/2)/n``, coefficient values 1 and 0.1, forcing
  ``beta = 1`` (``--forcing`` gives another beta: they publish 0.01 to 100).

What stays ours: the coefficient is a thresholded GRF (``grf_tau``, ``grf_alpha``), not their
generators' fields, and the labels are steady solutions of our discretisations
(``docs/data_from_other_tools.md`` says how theirs were made).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ..errors import ConfigError

__all__ = ["NEURALOP_PHASE_VALUES", "PEER_PRESETS", "PeerPreset", "get_preset"]

#: Coefficient values of the True and False phases of neuraloperator's boolean Darcy ``x``:
#: their ratio, 20, matched the labels of their 16 x 16 set best among 5, 10, 20, 50 and 1000
#: (``benchmarks/results/neuralop_phases.md``); their files do not record them.
NEURALOP_PHASE_VALUES = (1.0, 0.05)


@dataclass(frozen=True, kw_only=True)
class PeerPreset:
    """The grid, resolution and physics of one peer's dataset.

    Parameters
    ----------
    name
        Preset name, e.g. ``"neuralop-darcy"``.
    problem
        The dataset problem (``"darcy"``).
    resolution
        Points per side of the peer's files.
    settings
        Fields of the problem's data config (:class:`~neuralop_fem.data.DarcyDataConfig`).
    export_format
        The ``export --format`` that writes the peer's layout.
    file_name
        A file name in the peer's convention (the PDEBench loader reads the forcing from it).
    summary
        One line for ``--help``.
    train_presets
        Training presets (:data:`neuralop_fem.models.PRESETS` names) tuned for data of this
        size and grid, best first; empty where none is.
    """

    name: str
    problem: str
    resolution: int
    settings: Mapping[str, Any]
    export_format: str
    file_name: str
    summary: str
    train_presets: tuple[str, ...] = ()


_HIGH, _LOW = NEURALOP_PHASE_VALUES

#: Every preset by name (read-only).
PEER_PRESETS: Mapping[str, PeerPreset] = MappingProxyType({p.name: p for p in (
    PeerPreset(
        name="neuralop-darcy", problem="darcy", resolution=16,
        settings={"grid": "half-open", "contrast_high": _HIGH, "contrast_low": _LOW,
                  "forcing": 2.5},
        export_format="neuralop", file_name="darcy_train_16.pt",
        summary="neuraloperator's small Darcy set: 16 x 16 points i/n, phases 1 / 0.05, f = 2.5",
        train_presets=("darcy-fno-neuralop", "darcy-galerkin-neuralop")),
    PeerPreset(
        name="pdebench-darcy", problem="darcy", resolution=128,
        settings={"grid": "cell-centred", "contrast_high": 1.0, "contrast_low": 0.1,
                  "forcing": 1.0},
        export_format="pdebench", file_name="2D_DarcyFlow_beta1.0_Train.hdf5",
        summary="PDEBench 2D Darcy: 128 x 128 cell centres, coefficient 1 / 0.1, beta = 1"),
)})


def get_preset(name: str, problem: str | None = None) -> PeerPreset:
    """The preset ``name`` (of ``problem`` when given); the error lists the valid names."""
    valid = [k for k, p in PEER_PRESETS.items() if problem is None or p.problem == problem]
    if name not in valid:
        msg = f"`like` must be one of {', '.join(map(repr, valid))}; got {name!r}."
        raise ConfigError(msg)
    return PEER_PRESETS[name]

