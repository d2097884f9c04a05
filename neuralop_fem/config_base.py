"""The one configuration idiom: frozen, keyword-only dataclasses with shared validators.

Every configuration of the package (data generation :mod:`neuralop_fem.data.generation.config`,
models :mod:`neuralop_fem.models.config`, training :mod:`neuralop_fem.training.config`) is a
``@dataclass(frozen=True, kw_only=True)`` subclass of :class:`FrozenConfig`:

* validated in ``__post_init__`` with the validators below (each returns the normalised value
  and raises :class:`~neuralop_fem.errors.ConfigError` naming the field, the expectation and
  the value received);
* one JSON round trip: :meth:`~FrozenConfig.to_dict` / :meth:`~FrozenConfig.from_dict` (unknown
  keys are an error that lists the valid ones), :meth:`~FrozenConfig.to_json` /
  :meth:`~FrozenConfig.from_json`, and :meth:`~FrozenConfig.replace` (validated like the
  constructor).

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True, kw_only=True)
... class Example(FrozenConfig):
...     width: int = 8
...     def __post_init__(self) -> None:
...         self._set("width", positive_int(self.width, "width"))
>>> Example.from_json(Example(width=3).to_json())
Example(width=3)
>>> Example(width=0)
Traceback (most recent call last):
...
neuralop_fem.errors.ConfigError: `width` must be an integer >= 1; got 0.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Self, TypeGuard

from solvers.checks import is_int, is_real

from .errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

__all__ = [
    "INT64_MAX",
    "FrozenConfig",
    "choice",
    "finite_float",
    "flag",
    "nonnegative_float",
    "nonnegative_int",
    "positive_float",
    "positive_int",
    "rate",
]


def _is_int(value: object) -> TypeGuard[int | np.integer]:
    return is_int(value)


def _as_float(value: object) -> float:
    """``float(value)`` for a real number that is not a bool (:func:`solvers.checks.is_real`),
    NaN for anything else (a string, a bool, None), so the range checks below refuse it."""
    return float(value) if is_real(value) else math.nan  # type: ignore[arg-type]


#: Largest integer a config holds: configs are stored as netCDF attributes, JSON and torch
#: seeds, all of which hold signed 64-bit integers.
INT64_MAX = 2**63 - 1


def _bounded_int(value: object, name: str, minimum: int) -> int:
    if not _is_int(value) or not minimum <= value <= INT64_MAX:
        fits = " that fits in 64 bits" if _is_int(value) and value > INT64_MAX else ""
        msg = f"`{name}` must be an integer >= {minimum}{fits}; got {value!r}."
        raise ConfigError(msg)
    return int(value)


def positive_int(value: object, name: str) -> int:
    """``value`` as an int in ``[1, 2**63 - 1]``."""
    return _bounded_int(value, name, 1)


def nonnegative_int(value: object, name: str) -> int:
    """``value`` as an int in ``[0, 2**63 - 1]``."""
    return _bounded_int(value, name, 0)


def finite_float(value: object, name: str) -> float:
    """``value`` as a finite float."""
    v = _as_float(value)
    if not math.isfinite(v):
        msg = f"`{name}` must be a finite number; got {value!r}."
        raise ConfigError(msg)
    return v


def positive_float(value: object, name: str) -> float:
    """``value`` as a finite float > 0."""
    v = _as_float(value)
    if not math.isfinite(v) or v <= 0:
        msg = f"`{name}` must be a finite number > 0; got {value!r}."
        raise ConfigError(msg)
    return v


def nonnegative_float(value: object, name: str) -> float:
    """``value`` as a finite float >= 0."""
    v = _as_float(value)
    if not math.isfinite(v) or v < 0:
        msg = f"`{name}` must be a finite number >= 0; got {value!r}."
        raise ConfigError(msg)
    return v


def rate(value: object, name: str) -> float:
    """``value`` as a float in [0, 1) (a dropout rate)."""
    v = _as_float(value)
    if not 0.0 <= v < 1.0:
        msg = f"`{name}` must be a rate in [0, 1); got {value!r}."
        raise ConfigError(msg)
    return v


def choice(value: object, name: str, options: Iterable[str]) -> str:
    """``value`` if it is one of ``options`` (the message lists them)."""
    options = tuple(options)
    if not isinstance(value, str) or value not in options:
        msg = f"`{name}` must be one of {', '.join(map(repr, options))}; got {value!r}."
        raise ConfigError(msg)
    return value


def flag(value: object, name: str) -> bool:
    """``value`` if it is a bool."""
    if not isinstance(value, bool):
        msg = f"`{name}` must be True or False; got {value!r}."
        raise ConfigError(msg)
    return value


class FrozenConfig:
    """Serialisation and copying shared by every configuration (see the module docstring)."""

    def _set(self, name: str, value: object) -> None:
        """Store a normalised value from ``__post_init__`` (the dataclass is frozen)."""
        object.__setattr__(self, name, value)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """The names of the fields, in order."""
        return tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, Any]:
        """The fields as a JSON-serialisable dict (tuples become lists)."""
        out: dict[str, Any] = {}
        for name in self.field_names():
            value = getattr(self, name)
            out[name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_dict(cls, data: object) -> Self:
        """Rebuild a config from :meth:`to_dict` output; unknown keys are a ConfigError."""
        if not isinstance(data, dict):
            msg = f"`data` must be a dict of {cls.__name__} fields; got {type(data).__name__}."
            raise ConfigError(msg)
        valid = cls.field_names()
        unknown = sorted(str(k) for k in set(data) - set(valid))
        if unknown:
            msg = f"Unknown {cls.__name__} key(s) {unknown}; valid keys: {', '.join(valid)}."
            raise ConfigError(msg)
        return cls(**data)

    def to_json(self) -> str:
        """JSON text of :meth:`to_dict` (sorted keys)."""
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Self:
        """Inverse of :meth:`to_json`; text that is not a JSON object is a ConfigError."""
        try:
            data = json.loads(text)
        except (TypeError, ValueError) as exc:
            msg = f"`text` must be the JSON of a {cls.__name__}; got invalid JSON ({exc})."
            raise ConfigError(msg) from None
        return cls.from_dict(data)

    def replace(self, **changes: object) -> Self:
        """A copy with ``changes`` (validated; unknown names are a ConfigError)."""
        return self.from_dict({**self.to_dict(), **changes})
