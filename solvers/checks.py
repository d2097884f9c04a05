"""Checks of scalar arguments: the one place that decides what counts as a number.

Every numeric argument of a constructor or function of the package goes through these
checks, so that all of them accept and refuse the same things:

* an integer argument accepts any :class:`numbers.Integral` (``int``, ``np.int64``,
  ``np.uint8`` ...) and refuses ``bool`` / ``np.bool_`` (``True`` is not a count) and
  floats, even integral ones (``3.0``);
* a real argument accepts any :class:`numbers.Real` (``int``, ``float``, ``np.float32``,
  ``np.int64`` ...) and refuses ``bool``, strings (``"0.01"`` is not parsed) and complex
  numbers; it must be finite;
* the value comes back as a plain Python ``int`` / ``float``, so stored settings are the
  same whatever type the caller passed.

Each check raises ``error`` (default :class:`~solvers.errors.InputError`) with a message that
names the argument, what was expected and what was received.

>>> check_real(np.float32(0.5), name="tol", low=0.0, high=1.0)
0.5
>>> check_int(np.int64(7), name="maxiter", minimum=1)
7
>>> check_real("0.01", name="viscosity", low=0.0)
Traceback (most recent call last):
...
solvers.errors.InputError: `viscosity` must be a finite number > 0; got '0.01' (str).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .errors import InputError

__all__ = ["check_choice", "check_int", "check_optional_int", "check_real", "is_int", "is_real",
           "plain"]


def is_int(value: object) -> bool:
    """True for an integer that is not a bool: ``int``, ``np.int64``, ``np.uint32`` ..."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_)


def is_real(value: object) -> bool:
    """True for a real number that is not a bool: ``int``, ``float``, ``np.float32`` ..."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


_SHOWN = 8  # a sequence longer than this shows its first 5 values and its length


def plain(value: object) -> str:
    """``value`` as a message shows it: numbers plainly, whatever their type.

    A numpy scalar prints as the Python number it holds (``-3.0``, not
    ``np.float64(-3.0)``), an array as a list of numbers, a tuple or list element by element;
    anything else by its ``repr``.

    >>> plain(np.float64(-3.0)), plain(np.int64(7)), plain((np.float32(0.1), 2))
    ('-3.0', '7', '(0.1, 2)')
    >>> plain(np.arange(3)), plain("x")
    ('[0, 1, 2]', "'x'")
    >>> plain(np.arange(1000))  # long sequences are cut: a message stays one readable line
    '[0, 1, 2, 3, 4, ... (1000 values)]'
    """
    if isinstance(value, np.number | np.bool_):
        return str(value)  # the shortest digits of its own precision: float32 0.1 is 0.1
    if isinstance(value, np.generic):
        return repr(value.item())
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return plain(value[()])
        value = value.ravel()  # a view: a long array is not copied into a list
    if not isinstance(value, tuple | list | np.ndarray):
        return repr(value)
    if len(value) > _SHOWN:
        return f"[{', '.join(plain(v) for v in value[:5])}, ... ({len(value)} values)]"
    items = [plain(v) for v in value]
    if isinstance(value, tuple):
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    return f"[{', '.join(items)}]"


def _received(value: object) -> str:
    if is_real(value):  # int, float, np.float32 ...: the number alone
        return plain(value)
    if isinstance(value, bool | np.bool_):  # a bool is refused as a number: say so
        return f"{plain(value)} (bool)"
    return f"{plain(value)} ({type(value).__name__})"


def _range_text(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    if low is not None and high is not None:
        return f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f"{'<' if high_open else '<='} {high:g}"
    return ""


def check_real(value: object, *, name: str, low: float | None = None,
               high: float | None = None, low_open: bool = True, high_open: bool = False,
               kind: str = "a finite number", error: type[Exception] = InputError) -> float:
    """``value`` as a finite ``float`` in the given range, else ``error``.

    Parameters
    ----------
    value
        A :class:`numbers.Real` other than ``bool``.
    name
        The argument's name, for the message.
    low, high
        Bounds (None: unbounded on that side).
    low_open, high_open
        Whether each bound itself is excluded (default: ``low < value <= high``).
    kind
        What the value is, for the message (``"a relative residual"``).
    error
        The exception class to raise.
    """
    if is_real(value):
        v = float(value)  # type: ignore[arg-type]
        ok = math.isfinite(v)
        if ok and low is not None:
            ok = v > low if low_open else v >= low
        if ok and high is not None:
            ok = v < high if high_open else v <= high
        if ok:
            return v
    where = _range_text(low, high, low_open, high_open)
    msg = f"`{name}` must be {kind}{' ' + where if where else ''}; got {_received(value)}."
    raise error(msg)


def check_int(value: object, *, name: str, minimum: int | None = None,
              maximum: int | None = None, error: type[Exception] = InputError) -> int:
    """``value`` as an ``int`` in ``[minimum, maximum]``, else ``error``.

    Accepts any :class:`numbers.Integral` but ``bool`` (``np.int64(3)`` is 3; ``True`` and
    ``3.0`` are refused).
    """
    return _check_int(value, name=name, minimum=minimum, maximum=maximum, error=error)


def check_optional_int(value: object, *, name: str, minimum: int | None = None,
                       maximum: int | None = None,
                       error: type[Exception] = InputError) -> int | None:
    """None, or ``value`` checked by :func:`check_int` (the message says None is allowed)."""
    if value is None:
        return None
    return _check_int(value, name=name, minimum=minimum, maximum=maximum, error=error,
                      prefix="None or ")


def _check_int(value: object, *, name: str, minimum: int | None, maximum: int | None,
               error: type[Exception], prefix: str = "") -> int:
    if is_int(value):
        v = int(value)  # type: ignore[call-overload]
        if (minimum is None or v >= minimum) and (maximum is None or v <= maximum):
            return v
    if minimum is not None and maximum is not None:
        where = f" in [{minimum}, {maximum}]"
    elif minimum is not None:
        where = f" >= {minimum}"
    elif maximum is not None:
        where = f" <= {maximum}"
    else:
        where = ""
    msg = f"`{name}` must be {prefix}an integer{where}; got {_received(value)}."
    raise error(msg)


def check_choice(value: object, *, name: str, valid: tuple[str, ...],
                 error: type[Exception] = InputError) -> str:
    """``value`` if it is one of the strings ``valid`` (the message lists them)."""
    if not isinstance(value, str) or value not in valid:
        msg = f"`{name}` must be one of {', '.join(map(repr, valid))}; got {value!r}."
        raise error(msg)
    return value
