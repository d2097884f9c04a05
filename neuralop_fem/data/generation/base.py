"""The behaviour shared by the data configs of every problem (:class:`DataConfig`).

The solver choice of a config (its ``solver_field`` and the options of each solver), the
solver it builds through the problem registry (or that solver's torch twin on a device), and
the helpers the configs of :mod:`.config` declare their fields with.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any, ClassVar, Self

import numpy as np
from numpy.typing import NDArray

from solvers.problems import get_problem

from ...config_base import INT64_MAX, FrozenConfig
from ...errors import ConfigError, InputError
from ...problems.twins import twin_of

__all__ = ["DataConfig", "option", "solver_default"]


def option(default: Any, help: str) -> Any:  # noqa: A002 - argparse's word
    """A config field with its ``neuralop-fem generate`` help text (``metadata["help"]``):
    the command line derives each option, its type and its help from the field."""
    return field(default=default, metadata={"help": help})


def solver_default(problem: str, setting: str) -> Any:
    """The default of ``setting`` of ``problem``'s default solver (the physics defaults of a
    config are its solver's, declared once in :mod:`solvers`)::

        >>> round(solver_default("burgers", "viscosity"), 6)
        0.015915
    """
    return get_problem(problem).solver_class().__dataclass_fields__[setting].default


class DataConfig(FrozenConfig):
    """Behaviour shared by :class:`BurgersDataConfig` and :class:`DarcyDataConfig`.

    A config holds the options of the solver it chooses only: an option of another solver
    is None, and giving it a value is a :class:`~neuralop_fem.errors.ConfigError` naming it.
    Options of the chosen solver left at None take their defaults.
    """

    problem: ClassVar[str]
    #: The field that chooses the solver ("solver" / "discretisation").
    solver_field: ClassVar[str]
    #: Solver choice -> its options and their defaults.
    solver_options: ClassVar[dict[str, dict[str, Any]]]

    def _apply_solver_options(self) -> None:
        field = self.solver_field
        chosen = getattr(self, field)
        for solver, options in self.solver_options.items():
            for name, default in options.items():
                value = getattr(self, name)
                if solver == chosen:
                    if value is None:
                        self._set(name, default)
                elif value is not None:
                    msg = (f"`{name}` applies to {field}={solver!r} only; got {name}={value!r} "
                           f"with {field}={chosen!r}. Leave it out or choose {field}={solver!r}.")
                    raise ConfigError(msg)

    def _inapplicable(self) -> set[str]:
        chosen = getattr(self, self.solver_field)
        return {name for solver, options in self.solver_options.items() if solver != chosen
                for name in options} - set(self.solver_options[chosen])

    def to_dict(self) -> dict[str, Any]:
        """The fields as a JSON-serialisable dict, without the options of other solvers."""
        skip = self._inapplicable()
        return {k: v for k, v in super().to_dict().items() if k not in skip}

    def replace(self, **changes: object) -> Self:
        """A copy with ``changes``. Changing the solver drops the old solver's options that hold
        their defaults; an old option set to another value stays and is reported."""
        values = self.to_dict()
        if self.solver_field in changes:
            defaults = self.solver_options[getattr(self, self.solver_field)]
            values = {k: v for k, v in values.items()
                      if k not in defaults or v != defaults[k]}
        return self.from_dict({**values, **changes})

    @classmethod
    def from_stored(cls, values: Mapping[str, object]) -> Self:
        """:meth:`from_dict` of settings stored by any release: files written before a config
        held only its solver's options also stored the other solver's (unused) defaults; those
        keys are dropped."""
        values = dict(values)
        chosen = values.get(cls.solver_field, cls.__dataclass_fields__[cls.solver_field].default)
        if chosen in cls.solver_options:
            own = set(cls.solver_options[chosen])
            for solver, options in cls.solver_options.items():
                if solver != chosen:
                    for name in set(options) - own:
                        values.pop(name, None)
        return cls.from_dict(values)

    def check_resolution(self, resolution: int) -> int:  # pragma: no cover - overridden
        raise NotImplementedError

    def solver_settings(self) -> dict[str, Any]:  # pragma: no cover - overridden
        raise NotImplementedError

    def make_solver(self, *, device: str | None = None, batch_size: int | None = None) -> Any:
        """The :mod:`solvers` solver these settings describe, built through the problem
        registry (:meth:`solvers.problems.Problem.solver_class` of the chosen short name) with
        :meth:`solver_settings`; an :class:`~solvers.errors.InputError` for a value the solver
        refuses.

        With ``device`` (``"cpu"``, ``"cuda"``, ``"cuda:N"``): its torch twin on that device
        (:func:`neuralop_fem.torch_solvers.twin_of`, ``batch_size`` samples per device call),
        a :class:`~neuralop_fem.errors.ConfigError` when the solver has none or the device is
        not there.
        """
        cls = get_problem(self.problem).solver_class(getattr(self, self.solver_field))
        return self._on_device(cls(**self.solver_settings()), device, batch_size)

    @staticmethod
    def _on_device(solver: Any, device: str | None, batch_size: int | None) -> Any:
        if device is None:
            if batch_size is not None:
                msg = (f"`batch_size` applies to the torch solvers (with `device`); got "
                       f"batch_size={batch_size!r} without a device.")
                raise ConfigError(msg)
            return solver
        try:
            return twin_of(solver, device=device, batch_size=batch_size)
        except InputError as exc:
            msg = f"`device` {device!r} cannot be used: {exc}"
            raise ConfigError(msg) from None

    @classmethod
    def solver_names(cls) -> tuple[str, ...]:
        """The short names of the problem's solvers (the values of :attr:`solver_field`)."""
        return tuple(get_problem(cls.problem).solvers)

    def draw_inputs(self, resolution: int, seeds: NDArray[np.uint64]
                    ) -> NDArray[np.float64]:  # pragma: no cover - overridden
        raise NotImplementedError

    def solve_chunk(
        self, resolution: int, seeds: NDArray[np.uint64], *, device: str | None = None,
        batch_size: int | None = None,
    ) -> dict[str, NDArray[Any]]:  # pragma: no cover - overridden
        raise NotImplementedError


def _report_arrays(report: Any) -> dict[str, NDArray[Any]]:
    return {
        "iterations": np.asarray(report.iterations, dtype=np.int64),
        "residual": np.asarray(report.residual, dtype=np.float64),
        "solve_time": np.asarray(report.solve_time, dtype=np.float64),
    }


def _check_int(resolution: Any, name: str = "resolution") -> int:
    if isinstance(resolution, bool) or not isinstance(resolution, int | np.integer) \
            or abs(resolution) > INT64_MAX:
        msg = f"`{name}` must be an integer that fits in 64 bits; got {resolution!r}."
        raise ConfigError(msg)
    return int(resolution)
