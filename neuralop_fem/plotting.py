"""The conventions every figure of the package follows, as small helpers (matplotlib).

Every axis has a label with its unit (the fields are nondimensional: "(dimensionless)"; times
in s), every colour bar a label, integer quantities (sample indices, counts, iterations,
epochs) integer ticks, log axes labelled ticks at every decade and at 2 and 5 between them when
they span less than three decades, legends placed where they cover the least data, and titles
that name the solver and the model. Figures are written atomically.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .files import atomic_path

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["integer_axis", "legend_beside", "log_axis", "save"]


def log_axis(ax: Axes, which: str = "y") -> None:
    """Log scale with labelled ticks at each decade (and at 2, 5 on short ranges)."""
    from matplotlib.ticker import LogFormatterSciNotation, LogLocator

    axis = ax.yaxis if which == "y" else ax.xaxis
    (ax.set_yscale if which == "y" else ax.set_xscale)("log")
    lo, hi = (ax.get_ylim() if which == "y" else ax.get_xlim())
    short = lo > 0 and hi / lo < 1e3
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if short else (1.0,)))
    axis.set_major_formatter(LogFormatterSciNotation(labelOnlyBase=False))
    axis.set_minor_locator(LogLocator(base=10, subs=np.arange(2, 10) * 1.0))


def integer_axis(ax: Axes, which: str = "y") -> None:
    """Integer ticks only (counts, sample indices, iterations, epochs)."""
    from matplotlib.ticker import MaxNLocator

    (ax.yaxis if which == "y" else ax.xaxis).set_major_locator(MaxNLocator(integer=True))


def legend_beside(ax: Axes, *, fontsize: float = 8) -> None:
    """The legend right of the axes, outside them: for many lines that would cover the data
    (call ``fig.tight_layout()`` afterwards to make room)."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=fontsize, frameon=False)


def save(fig: Figure, path: Path, *, dpi: int = 110) -> Path:
    """Write ``fig`` as a PNG atomically and close it (pyplot figures are closed too)."""
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=dpi, format="png")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path


def fit_title(text: str, fig: Figure, *, fontsize: float = 10, share: float = 1.0) -> str:
    """``text`` broken into lines that fit ``share`` of the figure's width at ``fontsize``
    (about 0.55 em per character); existing line breaks are kept."""
    width = max(20, int(share * fig.get_figwidth() * 72 / (0.55 * fontsize)))
    return "\n".join(textwrap.fill(line, width) for line in text.split("\n"))

