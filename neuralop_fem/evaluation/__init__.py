"""Evaluation of surrogates: against a dataset's labels, against a classical solver, reports.

This package owns every judgement of a trained model: its errors on a dataset's labels, its
comparison with the classical solver on the same samples (speed and accuracy, the fair verdict
at equal accuracy, the break-even), the samples a run has already seen
(:mod:`.training_overlap`), and the reports and plots that show them. It reads runs through
:mod:`neuralop_fem.runs` and models through :class:`~neuralop_fem.surrogate.Surrogate`;
nothing below it imports it.

- :mod:`.comparison`: :func:`compare`, any two solvers of one problem, sample by sample, and
  :func:`repeated_timings`, their speedup over repeats (median and spread);
- :mod:`.run_evaluation`: :func:`evaluate_run`, a training run on a dataset's labels at any
  reachable resolution;
- :mod:`.run_comparison`: :func:`compare_run`, a training run against the classical solver
  on a dataset file, with a report;
- :mod:`.fair`: the fair verdict, :func:`measure_ladder` (a solver ladder on the same samples),
  :func:`pareto_front` and :func:`place` (speed-up at equal accuracy, accuracy at equal cost);
- :mod:`.report`: the report (netCDF, markdown, plots).

Every number comes from :mod:`neuralop_fem.metrics`.
"""

from __future__ import annotations

from ..metrics import summarize
from .comparison import METRICS, STATISTICS, compare, repeated_timings
from .fair import measure_ladder, pareto_front, place
from .report import summary_markdown, write_report
from .run_comparison import compare_run, reference_solver
from .run_evaluation import evaluate_run, parse_indices

__all__ = [
    "METRICS",
    "STATISTICS",
    "compare",
    "compare_run",
    "evaluate_run",
    "measure_ladder",
    "pareto_front",
    "place",
    "parse_indices",
    "reference_solver",
    "repeated_timings",
    "summarize",
    "summary_markdown",
    "write_report",
]
