"""Goals beyond the paper: the errors some rows of ``reproduction.json`` aim at, met or not.

A goal (an entry of the results file's ``"goals"`` list) names a preset, a dataset (the stem of
its file name, e.g. ``"darcy_n421_N1224"``), a resolution of the rows' errors, the relative L2
error to reach (``at_most``) and how many seeds the mean must pool (``seeds``). The rows decide
its status; nothing is typed in by hand but the goal itself and, in words, what else was tried:

* ``met``: a recipe pooled over at least ``seeds`` seeds has a mean error <= ``at_most``;
* ``missed``: no such recipe, though some recipe has the seeds (its best mean is shown, and any
  recipe below the goal on fewer seeds);
* ``open``: no recipe has the seeds yet.

>>> goal = Goal.from_dict({"preset": "p", "data": "d", "n": "512", "at_most": 1e-3,
...                        "seeds": 2, "reference": "paper 1.1e-3"}, where="goals[0]")
>>> group = {"preset": "p", "data": {"path": "x/d.nc"}, "seeds": [1, 2], "label": "long",
...          "mode": "paper", "errors": {"512": {"mean": 9e-4}}}
>>> goal_status(goal, [group]).status
'met'
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from ..errors import DatasetError

__all__ = ["Goal", "GoalStatus", "goal_status", "goals_markdown", "load_goals"]


@dataclass(frozen=True, kw_only=True)
class Goal:
    """One goal of the reproduction.

    Attributes
    ----------
    preset : str
        The model preset of the rows it judges.
    data : str
        The stem of the rows' dataset file name.
    n : str
        The resolution (a key of the rows' ``errors``) at which the error is read.
    at_most : float
        The relative L2 test error to reach (mean over seeds), > 0.
    seeds : int
        The fewest seeds a recipe's mean must pool to count, >= 1.
    reference : str
        What the goal is measured against, in words (e.g. ``"paper Table 3: 8.39e-3"``).
    curves : tuple of str
        Figures of the learning curves, paths relative to the results file.
    tried : str
        What else was tried or is still running, in words.
    """

    preset: str
    data: str
    n: str
    at_most: float
    seeds: int
    reference: str
    curves: tuple[str, ...] = ()
    tried: str = ""

    @classmethod
    def from_dict(cls, raw: Any, *, where: str) -> Goal:
        """The goal of a results file's entry ``raw``, checked field by field.

        Raises
        ------
        DatasetError
            ``raw`` is not an object, lacks a field, has an unknown one, or a field has the
            wrong type or range; the message names ``where`` and the field.
        """
        if not isinstance(raw, dict):
            msg = f"{where}: must be an object; got {type(raw).__name__}"
            raise DatasetError(msg)
        unknown = sorted(set(raw) - _FIELDS)
        if unknown:
            msg = (f"{where}: unknown field(s) {unknown}; expected some of "
                   f"{sorted(_FIELDS)}")
            raise DatasetError(msg)
        for name in ("preset", "data", "n", "reference"):
            if not isinstance(raw.get(name), str) or not raw[name]:
                msg = (f"{where}.{name}: must be a non-empty string; got "
                       f"{raw.get(name)!r}")
                raise DatasetError(msg)
        at_most = raw.get("at_most")
        if (isinstance(at_most, bool) or not isinstance(at_most, (int, float))
                or not math.isfinite(at_most) or at_most <= 0):
            msg = f"{where}.at_most: must be a finite number > 0; got {at_most!r}"
            raise DatasetError(msg)
        seeds = raw.get("seeds")
        if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
            msg = f"{where}.seeds: must be an int >= 1; got {seeds!r}"
            raise DatasetError(msg)
        curves = raw.get("curves", [])
        if not isinstance(curves, list) or not all(isinstance(c, str) and c for c in curves):
            msg = f"{where}.curves: must be a list of file names; got {curves!r}"
            raise DatasetError(msg)
        tried = raw.get("tried", "")
        if not isinstance(tried, str):
            msg = f"{where}.tried: must be a string; got {tried!r}"
            raise DatasetError(msg)
        return cls(preset=raw["preset"], data=raw["data"], n=raw["n"], at_most=float(at_most),
                   seeds=seeds, reference=raw["reference"], curves=tuple(curves), tried=tried)


#: The fields a goal entry may have.
_FIELDS = {f.name for f in fields(Goal)}


def load_goals(results: dict[str, Any]) -> list[Goal]:
    """The goals of a results file's contents (none if it has no ``"goals"``).

    Raises
    ------
    DatasetError
        ``"goals"`` is not a list, or one of its entries is not a goal.
    """
    raw = results.get("goals", [])
    if not isinstance(raw, list):
        msg = f"goals: must be a list; got {type(raw).__name__}"
        raise DatasetError(msg)
    return [Goal.from_dict(g, where=f"goals[{i}]") for i, g in enumerate(raw)]


@dataclass(frozen=True, kw_only=True)
class GoalStatus:
    """Where a goal stands: ``status`` (``met``, ``missed`` or ``open``), the best recipe that
    pools enough seeds (``best``; None if none does), how many recipes were tried and the
    recipes below the goal on too few seeds (``promising``)."""

    status: str
    best: dict[str, Any] | None
    tried: int
    promising: tuple[dict[str, Any], ...]


def _recipe(group: dict[str, Any]) -> str:
    return group.get("label") or group.get("mode") or "?"


def _mean(group: dict[str, Any], n: str) -> float:
    return float(group["errors"][n]["mean"])


def goal_status(goal: Goal, groups: list[dict[str, Any]]) -> GoalStatus:
    """Judge ``goal`` on the seed-pooled rows ``groups``
    (:func:`neuralop_fem.reproduce.tables.aggregate`)."""
    mine = [g for g in groups if g["preset"] == goal.preset and goal.n in g["errors"]
            and Path(g["data"]["path"]).stem == goal.data]
    pooled = [g for g in mine if len(g["seeds"]) >= goal.seeds]
    best = min(pooled, key=lambda g: _mean(g, goal.n)) if pooled else None
    promising = tuple(sorted((g for g in mine if len(g["seeds"]) < goal.seeds
                              and _mean(g, goal.n) <= goal.at_most),
                             key=lambda g: _mean(g, goal.n)))
    if best is None:
        status = "open"
    else:
        status = "met" if _mean(best, goal.n) <= goal.at_most else "missed"
    return GoalStatus(status=status, best=best, tried=len(mine), promising=promising)


def goals_markdown(goals: list[Goal], groups: list[dict[str, Any]]) -> list[str]:
    """The lines of reproduction.md's goals section (none without goals)."""
    if not goals:
        return []
    lines = ["## Goals beyond the paper", "",
             "Each goal is judged on the rows above: `met` when a recipe's mean over at least "
             "the goal's seeds is at or below it, `missed` when no recipe with those seeds is, "
             "`open` while no recipe has the seeds yet.", "",
             "| preset | data | n | goal (seeds) | reference | best recipe with the seeds | "
             "its error | recipes tried | status |",
             "|---|---|---|---|---|---|---|---|---|"]
    notes = []
    for goal in goals:
        st = goal_status(goal, groups)
        best = (f"{_recipe(st.best)} ({len(st.best['seeds'])} seeds)" if st.best is not None
                else "-")
        error = f"{_mean(st.best, goal.n):.3e}" if st.best is not None else "-"
        lines.append(f"| {goal.preset} | {goal.data} | {goal.n} | <= {goal.at_most:.2e} "
                     f"({goal.seeds}) | {goal.reference} | {best} | {error} | {st.tried} | "
                     f"**{st.status}** |")
        said = [f"{_recipe(g)} is below the goal on {len(g['seeds'])} of {goal.seeds} seeds "
                f"({_mean(g, goal.n):.3e})." for g in st.promising]
        said += [goal.tried] if goal.tried else []
        images = [f"  ![{goal.preset} learning curves]({c})" for c in goal.curves]
        if said or images:
            notes += [f"- **{goal.preset}, {goal.data}, {goal.n}**: " + " ".join(said), *images]
    return [*lines, "", *notes, ""] if notes else [*lines, ""]
