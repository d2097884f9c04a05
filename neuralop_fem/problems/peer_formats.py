"""How other tools' files map to a problem's schema: fields of its :class:`ProblemKit`.

A problem that other tools publish data for states, per tool, where its input and output are
in their files, which physical parameter a file carries, and what the tool's arrays mean
beyond ours (a trajectory, boolean phases of a coefficient). The importers and exporters of
:mod:`neuralop_fem.data.peers` read these and nothing else about the problem: a file is
recognised by the problem whose mapping matches its layout, and ``neuralop-fem import
--problem`` offers the problems that have a mapping.

Plain values only (no numpy): registering a problem imports nothing heavy.

    >>> from neuralop_fem.problems import get_kit
    >>> get_kit("burgers").pdebench_format.name_tag
    'Nu'
    >>> get_kit("darcy").neuralop_format.trajectory is None
    True
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ..errors import InputError

__all__ = ["NeuralopFormat", "PDEBenchFormat", "PeerTrajectory"]


def _name(value: object, what: str) -> str:
    if not isinstance(value, str) or not value:
        msg = f"`{what}` must be a non-empty string; got {value!r}."
        raise InputError(msg)
    return value


@dataclass(frozen=True, kw_only=True)
class PeerTrajectory:
    """A peer's trajectory array: sample first, then time, then the grid; the problem's input
    is its first step and its output the last.

    Parameters
    ----------
    field
        The schema field that keeps the whole trajectory (Burgers: ``u_t``, dims
        ``(sample, time, x)``; one of the kit's ``optional_fields``).
    final_time
        The physical parameter that is the time of the last step (``final_time``).
    """

    field: str
    final_time: str

    def __post_init__(self) -> None:
        _name(self.field, "field")
        _name(self.final_time, "final_time")


@dataclass(frozen=True, kw_only=True)
class NeuralopFormat:
    """A problem's neuraloperator ``.pt`` dict: input ``x`` (N, *grid), output ``y``.

    Parameters
    ----------
    trajectory
        Set when ``y`` may be the trajectory (N, T, *grid) that starts at ``x``; export then
        writes the trajectory and its times ``t``. None: ``y`` has the shape of ``x``.
    scalars
        File key -> physical parameter it holds (Burgers: ``{"visc": "viscosity"}``): read on
        import (a value given beside it must agree), written on export as a (1, 1) tensor.
    phase_values
        Coefficient of the True and False phases of a boolean ``x`` (both > 0). None: a
        boolean ``x`` is read as the values 1 and 0.
    phase_attrs
        The attributes of a generated dataset that hold its two phase values (Darcy:
        ``contrast_high``, ``contrast_low``): a dataset whose phases are ``phase_values``
        exports its input as booleans.
    """

    trajectory: PeerTrajectory | None = None
    scalars: Mapping[str, str] = field(default_factory=dict)
    phase_values: tuple[float, float] | None = None
    phase_attrs: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        if self.trajectory is not None and not isinstance(self.trajectory, PeerTrajectory):
            msg = f"`trajectory` must be a PeerTrajectory or None; got {self.trajectory!r}."
            raise InputError(msg)
        for key, name in dict(self.scalars).items():
            _name(key, "scalars key")
            _name(name, f"scalars[{key!r}]")
        object.__setattr__(self, "scalars", MappingProxyType(dict(self.scalars)))
        if self.phase_values is not None:
            values = tuple(self.phase_values)
            ok = len(values) == 2 and all(isinstance(v, int | float) and math.isfinite(v)
                                          and v > 0 for v in values)
            if not ok:
                msg = f"`phase_values` must be two finite numbers > 0; got {self.phase_values!r}."
                raise InputError(msg)
            object.__setattr__(self, "phase_values", (float(values[0]), float(values[1])))
        if self.phase_attrs is not None and (self.phase_values is None
                                             or len(tuple(self.phase_attrs)) != 2):
            msg = (f"`phase_attrs` must be two attribute names, given with `phase_values`; "
                   f"got {self.phase_attrs!r} with phase_values {self.phase_values!r}.")
            raise InputError(msg)


@dataclass(frozen=True, kw_only=True)
class PDEBenchFormat:
    """A problem's PDEBench HDF5 file: ``tensor`` with a time axis after the sample axis,
    the coordinates ``{dim}-coordinate``, one physical parameter in the file name.

    Parameters
    ----------
    input_key
        The dataset that holds the input (N, *grid) (Darcy: ``nu``); ``tensor`` then holds
        the output as (N, 1, *grid). None: ``tensor`` is a trajectory (N, T, *grid) with the
        times ``t-coordinate`` (``trajectory`` must be given).
    trajectory
        How ``tensor`` maps when it is a trajectory (exactly when ``input_key`` is None).
    parameter
        The physical parameter PDEBench names in its file names (``viscosity``, ``forcing``).
    name_tag
        The text before its value in a file name (``Nu`` of ``1D_Burgers_Sols_Nu0.01.hdf5``).
    factor
        This package's parameter = ``factor`` x PDEBench's value (Burgers: 1/pi, their
        equation has ``(nu/pi) u_xx``).
    attribute
        A file attribute with PDEBench's value (Darcy: ``beta``), read on import (after the
        package's own attribute) and written on export. None: the file name only.
    """

    input_key: str | None = None
    trajectory: PeerTrajectory | None = None
    parameter: str
    name_tag: str
    factor: float = 1.0
    attribute: str | None = None

    def __post_init__(self) -> None:
        if (self.input_key is None) == (self.trajectory is None):
            msg = (f"exactly one of `input_key` and `trajectory` must be given; got input_key "
                   f"{self.input_key!r} and trajectory {self.trajectory!r}.")
            raise InputError(msg)
        _name(self.parameter, "parameter")
        _name(self.name_tag, "name_tag")
        ok = isinstance(self.factor, int | float) and math.isfinite(self.factor) \
            and self.factor > 0
        if not ok:
            msg = f"`factor` must be a finite number > 0; got {self.factor!r}."
            raise InputError(msg)
