"""Every numeric constructor argument of every solver and random field is checked alike.

A user meets these as keyword arguments: a string (``viscosity="0.01"``), a bool, NaN, inf
or a negative number is refused with an :class:`InputError` naming the argument; numpy
scalars (``np.float32``, ``np.int64``) are accepted and stored as plain Python numbers.
The fields are found from the dataclasses themselves, so a new argument is covered at once.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from solvers import (
    BurgersFDSolver,
    BurgersSpectralSolver,
    DarcyFDSolver,
    DarcyFEMSolver,
    DarcyInverseSolver,
    InputError,
    NeumannGRF,
    PeriodicGRF,
)
from solvers.checks import check_int, check_real, is_int, is_real, plain
from solvers.exact_darcy import QuadraticDarcyProblem, SmoothDarcyProblem

#: class -> the positional arguments it needs
CLASSES = {
    BurgersSpectralSolver: (),
    BurgersFDSolver: (),
    DarcyFDSolver: (),
    DarcyFEMSolver: (),
    DarcyInverseSolver: (),
    PeriodicGRF: (16,),
    NeumannGRF: (9,),
    QuadraticDarcyProblem: (),
    SmoothDarcyProblem: (),
}
#: arguments for which a negative value is a valid setting
SIGNED = {"forcing"}
#: a valid value for arguments whose default is None
VALUE_FOR_NONE = {"dt": 0.01, "first_dt": 1e-5, "maxiter": 5, "blas_threads": 1,
                  "regularization": 1e-6}


def _numeric_fields(cls) -> list[tuple[str, str, object]]:
    """(name, "int" | "real", a valid value) of each numeric init field of ``cls``."""
    out = []
    for f in dataclasses.fields(cls):
        if not f.init or f.name.startswith("_"):
            continue
        kind = str(f.type)
        default = f.default if f.default is not dataclasses.MISSING else None
        if f.name == "n":
            out.append((f.name, "int", CLASSES[cls][0]))
        elif default is None and f.name in VALUE_FOR_NONE:
            out.append((f.name, "int" if kind.startswith("int") else "real",
                        VALUE_FOR_NONE[f.name]))
        elif isinstance(default, bool) or not isinstance(default, int | float):
            continue
        else:
            out.append((f.name, "int" if isinstance(default, int) else "real", default))
    return out


CASES = [(cls, name, kind, value) for cls in CLASSES for name, kind, value in _numeric_fields(cls)]
IDS = [f"{cls.__name__}.{name}" for cls, name, _, _ in CASES]


def _make(cls, name, value):
    args = CLASSES[cls]
    if name == "n":
        return cls(value)
    return cls(*args, **{name: value})


def test_every_class_has_numeric_fields_found():
    found = {cls for cls, *_ in CASES}
    assert found == set(CLASSES)
    assert len(CASES) >= 40


BAD = [(*case, bad) for case in CASES
       for bad in ("string", "bool", "nan", "inf", "negative", "complex")
       if not (bad == "negative" and case[1] in SIGNED)]


@pytest.mark.parametrize(("cls", "name", "kind", "value", "bad"), BAD,
                         ids=[f"{c.__name__}.{n}-{b}" for c, n, _, _, b in BAD])
def test_bad_numeric_argument_is_refused_naming_it(cls, name, kind, value, bad):
    bad_value = {"string": str(value), "bool": True, "nan": float("nan"), "inf": float("inf"),
                 "negative": -abs(value) - 1, "complex": complex(value, 1.0)}[bad]
    with pytest.raises(InputError, match=rf"`{name}` must be"):
        _make(cls, name, bad_value)


@pytest.mark.parametrize(("cls", "name", "kind", "value"), CASES, ids=IDS)
def test_numpy_scalars_are_accepted_as_plain_numbers(cls, name, kind, value):
    types = (np.int64, np.int32, np.uint16) if kind == "int" else (np.float64, np.float32)
    for t in types:
        obj = _make(cls, name, t(value))
        stored = getattr(obj, name)
        assert type(stored) is (int if kind == "int" else float), (t, type(stored))
        assert stored == pytest.approx(float(t(value)), rel=1e-6)


INT_CASES = [case for case in CASES if case[2] == "int"]


@pytest.mark.parametrize(("cls", "name", "kind", "value"), INT_CASES,
                         ids=[f"{c.__name__}.{n}" for c, n, _, _ in INT_CASES])
def test_integral_float_is_refused_for_a_count(cls, name, kind, value):
    with pytest.raises(InputError, match=rf"`{name}` must be (None or )?an integer"):
        _make(cls, name, float(value))


def test_the_shared_checks_accept_numbers_and_refuse_the_rest():
    assert [is_int(v) for v in (3, np.int8(3), np.uint64(3), True, np.bool_(True), 3.0)] == [
        True, True, True, False, False, False]
    assert [is_real(v) for v in (3, 2.5, np.float32(1), False, "1", 1j)] == [
        True, True, True, False, False, False]
    assert check_int(np.int64(5), name="k", minimum=0) == 5
    assert check_real(np.float32(0.25), name="r", low=0.0, high=1.0) == 0.25
    match = r"`r` must be a finite number in \(0, 1\]; got '0.5' \(str\)"
    with pytest.raises(InputError, match=match):
        check_real("0.5", name="r", low=0.0, high=1.0)
    with pytest.raises(InputError, match=r"`k` must be an integer >= 0; got True \(bool\)"):
        check_int(True, name="k", minimum=0)


def test_messages_print_numpy_numbers_plainly():
    """A numpy scalar in a message reads as the number (``-3.0``), not as numpy's repr
    (``np.float64(-3.0)``), whatever check or solver refuses it."""
    assert [plain(v) for v in (np.float64(-3.0), np.float32(0.1), np.int64(7), np.bool_(True),
                               (np.float64(1.0), 2), np.array([1.5, 2.0]), "s")] == [
        "-3.0", "0.1", "7", "True", "(1.0, 2)", "[1.5, 2.0]", "'s'"]
    cases = [
        (lambda: check_real(np.float64(-3.0), name="r", low=0.0), "got -3.0."),
        (lambda: check_real(np.float32(2.5), name="r", low=0.0, high=1.0), "got 2.5."),
        (lambda: check_int(np.int64(-2), name="k", minimum=0), "got -2."),
        (lambda: check_int(np.bool_(True), name="k", minimum=0), "got True (bool)."),
        (lambda: DarcyInverseSolver(forcing=np.float64(0.0)), "got 0.0."),
        (lambda: DarcyInverseSolver(tol=np.float64(2.0)), "got 2.0."),
        (lambda: DarcyInverseSolver(bounds=(np.float64(2.0), np.float64(1.0))),
         "got (2.0, 1.0)."),
        (lambda: BurgersSpectralSolver(output_times=[np.float64(np.nan)]), "got [nan]."),
    ]
    for make, ending in cases:
        with pytest.raises(InputError) as info:
            make()
        assert str(info.value).endswith(ending), str(info.value)
        assert "np." not in str(info.value)


def test_output_times_must_be_numbers():
    with pytest.raises(InputError, match="`output_times` must be"):
        BurgersSpectralSolver(output_times=["0.5", "1.0"])
    solver = BurgersSpectralSolver(output_times=np.array([0.5, 1.0], dtype=np.float32))
    assert solver.output_times == (0.5, 1.0)


def test_sample_seeds_and_counts_take_numpy_integers():
    grf = PeriodicGRF(np.int64(32))
    u = grf.sample(np.int32(2), seeds=[np.uint64(1), np.uint64(2)])
    assert u.shape == (2, 32)
    with pytest.raises(InputError, match="`n_samples` must be an integer >= 1"):
        grf.sample(True, rng=np.random.default_rng(0))
