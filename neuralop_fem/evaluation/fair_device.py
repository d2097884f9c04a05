"""The like-for-like verdict: the surrogate against the solver's torch twins on the same device.

A surrogate on a GPU placed against CPU solvers answers "GPU model or CPU code?", not "model or
solver?" (McGreivy & Hakim's second rule: the baseline efficient *on the same hardware*). The
ladder's rungs that have a torch twin (:mod:`neuralop_fem.torch_solvers`: the spectral Burgers
and FD Darcy solvers, same settings, same answers to round-off) are measured again on a device,
one sample per call and in a batch, and the surrogate, timed on its own device, is placed on
that front as on the CPU's (:func:`~neuralop_fem.evaluation.fair.place`).

By default this runs when the surrogate is on a GPU, on that GPU; ``compare --solver-device
cpu`` puts the twins on this CPU instead (a second implementation of the same solvers,
measurable anywhere). The result is stored beside the CPU verdict: variables on the
``device_rung`` dimension (``device_ladder_rel_l2``, ``device_ladder_time``,
``device_ladder_time_batch1``), attributes ``fair_device_*`` and the sentence ``verdict_device``,
which a report prints first.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from solvers.ladder import Rung

from ..environment import cpu_model
from ..problems.twins import twin_name, twin_of
from .fair import place, verdict_sentence

__all__ = ["add_device_verdict", "device_where", "twin_device", "twin_rungs"]


def twin_device(surrogate_device: object, requested: str | None) -> str | None:
    """Where the twins run: ``requested`` when given ("none": nowhere), else the surrogate's
    device when it is a GPU, else nowhere (None): on a CPU the one-thread and all-cores
    verdicts already compare like with like."""
    if requested is not None:
        return None if requested == "none" else str(torch.device(requested))
    dev = torch.device(str(surrogate_device))
    return str(dev) if dev.type == "cuda" else None


def twin_rungs(rungs: list[Rung], device: str) -> tuple[list[Rung], list[str]]:
    """The rungs whose solver has a torch twin, as twins on ``device`` (same grid, label with
    the device), and the labels of the rungs without one."""
    twins, missing = [], []
    for rung in rungs:
        if twin_name(rung.solver) is None:
            missing.append(rung.label)
            continue
        twins.append(Rung(solver=twin_of(rung.solver, device=device),
                          resolution=rung.resolution, label=rung.label))
    return twins, missing


def device_where(device: str) -> str:
    """The hardware words of the like-for-like verdict."""
    dev = torch.device(device)
    if dev.type == "cuda":
        name = torch.cuda.get_device_name(dev)
        return f"with the surrogate and the solver's torch twin both on {device} ({name})"
    return (f"against the solver's torch twin on this CPU ({cpu_model()}, "
            f"{torch.get_num_threads()} torch thread{'' if torch.get_num_threads() == 1 else 's'})")


def add_device_verdict(ds: Any, ladder: dict[str, Any], sur_errors: np.ndarray,
                       sur_timing: dict[str, Any], *, device: str, missing: list[str],
                       solver: str = "the solver") -> None:
    """Store the twins' ladder (:func:`~neuralop_fem.evaluation.fair.measure_ladder` of
    :func:`twin_rungs`) and the surrogate's place on its front in ``ds`` (in place): the
    ``device_rung`` variables, ``fair_device_*`` attributes and ``verdict_device`` (batch) /
    ``verdict_device_batch1`` (one sample per call)."""
    ds.coords["device_rung"] = list(ladder["labels"])
    ds["device_ladder_rel_l2"] = (("device_rung", "sample"), ladder["rel_l2"])
    ds["device_ladder_time"] = (("device_rung", "sample"), ladder["time"])
    where = device_where(device)
    ds.attrs["fair_device"] = device
    ds.attrs["fair_device_where"] = where
    ds.attrs["fair_device_missing_rungs"] = " | ".join(missing)
    placed = place(ladder, sur_errors, sur_timing["time"])
    for key in ("solver_time", "surrogate_time", "speedup", "status"):
        ds.attrs[f"fair_device_{key}"] = placed[key]
    ds.attrs["fair_device_bracket"] = " | ".join(placed["bracket"] or [])
    n = len(sur_errors)
    ds.attrs["verdict_device"] = verdict_sentence(
        placed, where=f"{where}, {n} sample{'' if n == 1 else 's'} per call", solver=solver)
    if ladder.get("time_batch1") is not None and sur_timing.get("time_batch1"):
        ds["device_ladder_time_batch1"] = (("device_rung", "sample"), ladder["time_batch1"])
        one = place(ladder, sur_errors, sur_timing["time_batch1"], time_key="time_batch1")
        for key in ("solver_time", "surrogate_time", "speedup", "status"):
            ds.attrs[f"fair_device_batch1_{key}"] = one[key]
        ds.attrs["verdict_device_batch1"] = verdict_sentence(
            one, where=where + ", one sample per call", solver=solver)
