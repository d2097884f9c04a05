"""What a surrogate's input must look like, and the messages of its shape errors.

A :class:`~neuralop_fem.surrogate.Surrogate` takes one input or a batch of inputs on its model
grid (another grid with ``resample=True``). A wrongly shaped input is refused naming what is
taken and, where the shape looks like another problem's input (a batch of 1-D Burgers inputs
given to a Darcy surrogate, a batch of 2-D Darcy inputs given to a Burgers one), saying so:

>>> shapes = InputShape(name="a", problem="darcy", ndim=2, resolution=141)
>>> shapes.check_dims((2, 512))
Traceback (most recent call last):
...
solvers.errors.ShapeError: `a` must be (n_samples, 141, 141) or (141, 141) for this darcy \
surrogate (or another square grid, with resample=True); got shape (2, 512), which looks like a \
batch of 1-D inputs: input of another problem?
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ShapeError

__all__ = ["InputShape", "looks_like"]


def looks_like(shape: tuple[int, ...], ndim: int) -> str | None:
    """Why an array of ``shape`` is neither one input on an ``ndim``-D grid nor a batch of
    them, as a clause that names whose input it looks like; None if it may be either.

    >>> looks_like((2, 141, 141), 1)
    'which looks like a batch of 2-D inputs: input of another problem?'
    >>> looks_like((141, 140), 2) is None  # one grid that is not square: refused later
    True
    """
    k = len(shape)
    if k == 0:
        return "a single number"
    if k < ndim:
        return f"which looks like one {k}-D input: input of another problem?"
    if k > ndim + 1:
        return f"which looks like a batch of {k - 1}-D inputs: input of another problem?"
    # One input of a problem on a 2-D (or higher) grid whose first axis is much shorter than
    # the others: the rows of a batch of lower-dimensional inputs ((2, 512): two Burgers inputs).
    if k == ndim > 1 and 2 * shape[0] <= min(shape[1:]):
        return f"which looks like a batch of {ndim - 1}-D inputs: input of another problem?"
    return None


@dataclass(frozen=True)
class InputShape:
    """The shapes a surrogate takes: ``(n_samples, n, ..., n)`` or ``(n, ..., n)``.

    Attributes
    ----------
    name : str
        The input's name (``"u0"``, ``"a"``).
    problem : str
        The surrogate's problem.
    ndim : int
        Dimensions of its grid.
    resolution : int
        Points per dimension of the model grid.
    """

    name: str
    problem: str
    ndim: int
    resolution: int

    def expected(self) -> str:
        """What is taken, as the start of a message: the input's name, its shapes on the
        model grid, and that another grid needs ``resample=True``."""
        grid = ", ".join([str(self.resolution)] * self.ndim)
        one = f"({grid},)" if self.ndim == 1 else f"({grid})"
        other = "another square grid" if self.ndim > 1 else "another grid"
        return (f"`{self.name}` must be (n_samples, {grid}) or {one} for this {self.problem} "
                f"surrogate (or {other}, with resample=True)")

    def check_dims(self, shape: tuple[int, ...]) -> None:
        """Refuse an array that is neither one input nor a batch (:func:`looks_like`)."""
        why = looks_like(shape, self.ndim)
        if why is not None:
            end = "" if why.endswith("?") else "."
            msg = f"{self.expected()}; got shape {shape}, {why}{end}"
            raise ShapeError(msg)

    def check_grid(self, grid: tuple[int, ...], shape: tuple[int, ...], *,
                   resample: bool) -> None:
        """Refuse a grid (``grid``, of the caller's array of ``shape``) that is not square or,
        without ``resample``, not the model grid."""
        if len(set(grid)) > 1:
            msg = f"{self.expected()}; got shape {shape}, which is not a square grid."
            raise ShapeError(msg)
        if grid[-1] == self.resolution or resample:
            return
        other = ""
        if len(shape) == self.ndim + 1 and len(set(shape)) == 1:  # (141, 141) for Burgers
            other = (f" (from shape {shape}, which could also be one {self.ndim + 1}-D input: "
                     "input of another problem?)")
        want = (self.resolution,) * self.ndim
        msg = (f"`{self.name}` must be on the model grid {want} (the training resolution); got "
               f"{grid}{other}. Pass resample=True to resample to the model grid and back.")
        raise ShapeError(msg)
