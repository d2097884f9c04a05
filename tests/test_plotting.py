"""Shared plot conventions (neuralop_fem.plotting)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from neuralop_fem.plotting import fit_title, legend_beside  # noqa: E402


def test_a_long_title_is_wrapped_to_fit_the_figure():
    fig = plt.figure(figsize=(6.4, 4.4))
    long = "data misfit against work: " + "a solver with a very long description, " * 5
    text = fit_title(long, fig, fontsize=10)
    fig.suptitle(text, fontsize=10)
    fig.canvas.draw()
    box = fig._suptitle.get_window_extent()
    assert "\n" in text
    assert box.width <= fig.bbox.width  # nothing cut off at the figure's edges
    assert text.replace("\n", " ").split() == long.split()  # no word lost
    plt.close(fig)


def test_short_titles_and_given_breaks_are_kept():
    fig = plt.figure(figsize=(6.4, 4.4))
    assert fit_title("accuracy against cost\nA vs B", fig) == "accuracy against cost\nA vs B"
    plt.close(fig)


def test_a_legend_beside_the_axes_covers_none_of_the_data():
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for i in range(8):
        ax.plot([0, 1], [i, i + 1], label=f"a line with a long label {i}")
    legend_beside(ax)
    fig.tight_layout()
    fig.canvas.draw()
    legend, axes = ax.get_legend().get_window_extent(), ax.get_window_extent()
    assert legend.x0 >= axes.x1  # right of the axes
    assert legend.x1 <= fig.bbox.width + 1  # and inside the figure after tight_layout
    assert len(ax.get_legend().get_texts()) == 8
    plt.close(fig)
