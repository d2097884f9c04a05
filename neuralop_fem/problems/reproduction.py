"""What ``neuralop-fem reproduce`` knows of a problem: its :class:`ReproductionSpec`.

A problem whose published results the package reproduces (Cao 2021, Tables 2a/2b/3: Burgers,
Darcy and the inverse Darcy problem) sets its kit's ``reproduction`` entry; a problem without
one (a new or a toy problem) is simply not reproduced, and ``neuralop-fem reproduce`` says so.
The entry holds the sizes of the ``quick`` smoke run, the paper's dataset size, its evaluation
grids, whether the CPU-sized ``reduced`` scale applies, the paper's errors that the tables
compare against and how a row finds its line of the paper's tables.

This module holds values only: it imports nothing of the package.

    >>> spec = ReproductionSpec(quick=QuickScale(train_n=15, data_n=29, samples=30),
    ...                         samples=1224, paper_row="table n={n}",
    ...                         paper={"table n=64": {"fno": 1e-2}})
    >>> spec.paper_value("fno", "64", None), spec.paper_value("fno", "128", None)
    (0.01, None)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ..errors import InputError

__all__ = ["DataVariant", "QuickScale", "ReproductionSpec"]


def _grids(name: str, value: object) -> tuple[int, ...]:
    grids = tuple(value) if isinstance(value, tuple | list) else None
    if grids is None or any(isinstance(n, bool) or not isinstance(n, int) or n < 1
                            for n in grids):
        msg = f"`{name}` must be a tuple of integers >= 1; got {value!r}."
        raise InputError(msg)
    return grids


def _count(name: str, value: object, *, optional: bool) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        msg = f"`{name}` must be an integer >= 1{' or None' if optional else ''}; got {value!r}."
        raise InputError(msg)


@dataclass(frozen=True, kw_only=True)
class QuickScale:
    """The tiny sizes of the ``quick`` mode (a smoke run of every step, not a reproduction).

    Parameters
    ----------
    train_n
        The training grid (points per side).
    data_n, samples
        The grid and sample count of the quick dataset; None for a problem learned from
        another problem's files (whose entry gives them).
    eval_n
        Grids the quick row is also evaluated on, where its dataset reaches them (beside the
        training grid); empty: the training grid only.
    """

    train_n: int
    data_n: int | None = None
    samples: int | None = None
    eval_n: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        _count("train_n", self.train_n, optional=False)
        _count("data_n", self.data_n, optional=True)
        _count("samples", self.samples, optional=True)
        object.__setattr__(self, "eval_n", _grids("eval_n", self.eval_n))


@dataclass(frozen=True, kw_only=True)
class DataVariant:
    """A physical parameter of the reproduction data chosen by name (Burgers ``--viscosity
    gt``).

    Parameters
    ----------
    parameter
        The field of the problem's data config it sets, and the option of ``neuralop-fem
        reproduce run`` that chooses it (``viscosity``).
    values
        Name -> value (``{"gt": 0.1 / (2 pi), "fno": 0.1}``); a positive number is accepted too.
    tag
        The prefix of the choice in the dataset's file name (``nu``: ``burgers_nugt_...``).
    """

    parameter: str
    values: Mapping[str, float]
    tag: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", MappingProxyType(dict(self.values)))

    def value(self, choice: str) -> float:
        """The value of ``choice``: a name of :attr:`values`, or a number written out."""
        return self.values.get(choice) or float(choice)


@dataclass(frozen=True, kw_only=True)
class ReproductionSpec:
    """The reproduction facts of one problem (its kit's ``reproduction`` entry).

    Parameters
    ----------
    quick
        The sizes of the ``quick`` mode.
    samples
        Samples of the paper-scale dataset (the paper's 1024 train + 100 validation + 100
        test); None for a problem learned from another problem's files.
    data_variant
        A data parameter that runs choose by name, or None.
    reduced
        Whether the CPU-sized ``reduced`` scale (``reproduce run --reduced``) applies; where
        it does not, ``--reduced`` records a ``paper`` row.
    eval_grids
        The grids a paper-scale row is evaluated on (zero-shot above the training grid);
        empty: its training grid.
    paper_row
        The label of a row's line of the paper's tables, ``str.format``-ted with the
        evaluation grid ``n`` and the noise level ``noise`` (``"burgers n={n}"``).
    paper
        The paper's relative L2 test errors: line label -> model (the preset name after the
        problem's, without ``-long``) -> error.
    epoch_budget
        Whether its paper-scale rows form the series of test error against the epoch budget
        (:mod:`neuralop_fem.reproduce.epoch_budget`).
    """

    quick: QuickScale
    samples: int | None = None
    data_variant: DataVariant | None = None
    reduced: bool = False
    eval_grids: tuple[int, ...] = ()
    paper_row: str = ""
    paper: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    epoch_budget: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.quick, QuickScale):
            msg = f"`quick` must be a QuickScale; got {type(self.quick).__name__}."
            raise InputError(msg)
        if self.data_variant is not None and not isinstance(self.data_variant, DataVariant):
            msg = (f"`data_variant` must be a DataVariant or None; got "
                   f"{type(self.data_variant).__name__}.")
            raise InputError(msg)
        _count("samples", self.samples, optional=True)
        object.__setattr__(self, "eval_grids", _grids("eval_grids", self.eval_grids))
        object.__setattr__(self, "paper", MappingProxyType(
            {row: MappingProxyType(dict(models)) for row, models in self.paper.items()}))

    def paper_value(self, model: str, n: str, noise: float | None) -> float | None:
        """The paper's error of ``model`` on the line of grid ``n`` and noise ``noise``, or
        None where the paper has none."""
        row = self.paper_row.format(n=n, noise=noise)
        return self.paper.get(row, {}).get(model)
