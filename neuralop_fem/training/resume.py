"""The run directory as the :class:`~neuralop_fem.training.Trainer` finds it: checks and resume.

* :func:`prepare_run_dir`: :meth:`neuralop_fem.runs.RunDir.prepare` (a real directory, the
  trainer's files in it regular files, locked).
* :func:`read_last`: ``last.pt`` read as untrusted (:func:`~neuralop_fem.models.io.load_torch_file`)
  and its structure checked: format, identity, epoch, history, best epoch, wall time, RNG states.
* :func:`restore`: model weights (keys and shapes checked against the model), optimizer
  (hyper-parameters equal to the run's, moment shapes equal to the parameters'), scheduler (the
  run's schedule, at step ``epoch * steps_per_epoch``) and every RNG state, each failure a
  :class:`~neuralop_fem.errors.RunDirectoryError` naming ``last.pt`` and the field.
* :func:`capture_rng`: the RNG states saved in ``last.pt``.
"""

from __future__ import annotations

import math
import os
import random
from pathlib import Path
from typing import Any, NamedTuple, NotRequired, TypedDict

import numpy as np
import torch

from solvers.checks import is_int, is_real

from ..errors import ConfigError, RunDirectoryError
from ..files import ExclusiveLock
from ..models.io import check_state_dict, load_torch_file
from ..runs import RunDir
from ..runs.run_dir import LOCK, RETRY
from ..runs.train_config import TrainConfig, added_defaults
from . import checkpoint as ck
from .distributed import GlobalBatchSampler
from .optim import (
    LR_GROUP_KEYS,
    PER_EPOCH,
    SCHEDULER_PROGRESS,
    scheduler_steps,
    stopped_early,
)

__all__ = ["LOCK", "RETRY", "RNG_STATES", "LastState", "Progress", "capture_rng",
           "check_resumable", "code_history", "fail", "lock_run_dir",
           "prepare_run_dir", "read_last", "restore", "restore_rng"]

_HISTORY = ("train_loss", "val_rel_l2", "lr", "epoch_time_s")
#: The RNG states of :func:`capture_rng`.
RNG_STATES = ("torch", "cuda", "numpy", "python", "loader")
#: Optimizer group entries that the schedule changes every step.
_GROUP_PROGRESS = ("lr", "betas")


def fail(source: Any, field: str, expected: str, value: Any = None) -> RunDirectoryError:
    got = f"; got {value!r}" if value is not None and len(repr(value)) <= 80 else ""
    return RunDirectoryError(f"{source}: field `{field}` must be {expected}{got}. {RETRY}")


def prepare_run_dir(run_dir: Path, *, overwrite: bool, is_main: bool) -> ExclusiveLock | None:
    """Lock, check (and with ``overwrite`` clear) ``run_dir``: :meth:`RunDir.prepare
    <neuralop_fem.runs.RunDir.prepare>`."""
    return RunDir(run_dir).prepare(overwrite=overwrite, is_main=is_main)


def lock_run_dir(run_dir: Path) -> ExclusiveLock:
    """The exclusive lock of a run directory:
    :meth:`RunDir.lock <neuralop_fem.runs.RunDir.lock>`."""
    return RunDir(run_dir).lock()


def _is_plain(value: Any) -> bool:
    """None, bool, int, float, str or a flat list of them (the values of a run's identity)."""
    scalar = (type(None), bool, int, float, str)
    return isinstance(value, scalar) or (
        isinstance(value, list | tuple) and all(isinstance(v, scalar) for v in value))


def _check_history(history: Any, epoch: int, source: Any) -> None:
    ok = isinstance(history, dict) and set(history) == set(_HISTORY)
    if ok:
        ok = all(isinstance(history[k], list) and len(history[k]) == epoch
                 and all(is_real(v) for v in history[k]) for k in _HISTORY)
    if not ok:
        raise fail(source, "history", f"lists {', '.join(_HISTORY)} of {epoch} numbers each "
                                       "(one per epoch completed)")


class LastState(TypedDict):
    """The contents of ``last.pt`` (:func:`read_last`): the run's identity, the state dicts of
    the model, optimizer and scheduler, the RNG states (:func:`capture_rng`), the per-epoch
    history, the best epoch so far and the wall time."""

    format: str
    epoch: int
    identity: dict[str, object]
    model: dict[str, torch.Tensor]
    optimizer: dict[str, Any]
    scheduler: dict[str, Any]
    rng: dict[str, Any]
    history: dict[str, list[float]]
    best_epoch: int
    best_val: float
    wall_time_s: float
    # The code commits the run trained under (:func:`code_history`); absent before 2026-11.
    code_history: NotRequired[list[dict[str, Any]]]
    # The epochs undone by the divergence guard (:mod:`.divergence`); absent: none.
    rollbacks: NotRequired[list[dict[str, Any]]]
    # Written for a reader of the file; not checked, not used to resume.
    train_config: NotRequired[dict[str, Any]]
    model_family: NotRequired[str]
    model_config: NotRequired[dict[str, Any]]


def read_last(path: Path, *, fmt: str = ck.LAST_FORMAT, what: str | None = None) -> LastState:
    """``last.pt`` read and its structure checked (the weights are checked by :func:`restore`);
    ``fmt`` and ``what``: the ``format`` and the description of another file of that structure
    (``partial.pt``, :mod:`.partial_checkpoint`).

    Raises
    ------
    RunDirectoryError
        Naming ``path`` and the field.
    """
    try:
        state = load_torch_file(path, what=what or f"a resume checkpoint ({ck.LAST})",
                                error=RunDirectoryError, map_location="cpu")
    except RunDirectoryError as exc:
        msg = f"{exc} {RETRY}"
        raise RunDirectoryError(msg) from None
    if not isinstance(state, dict) or state.get("format") != fmt:
        raise fail(path, "format", repr(fmt))
    epoch = state.get("epoch")
    if not is_int(epoch) or epoch < 0:
        raise fail(path, "epoch", "an integer >= 0", epoch)
    identity = state.get("identity")
    if not isinstance(identity, dict) or not all(
        isinstance(k, str) and _is_plain(v) for k, v in identity.items()
    ):
        raise fail(path, "identity", "an object of plain values (the run's settings)")
    for key in ("model", "optimizer", "scheduler", "rng"):
        if not isinstance(state.get(key), dict):
            raise fail(path, key, "an object")
    _check_history(state.get("history"), epoch, path)
    best_epoch, best_val = state.get("best_epoch"), state.get("best_val")
    if not is_int(best_epoch) or not 0 <= best_epoch <= epoch:
        raise fail(path, "best_epoch", f"an integer in [0, epoch={epoch}]", best_epoch)
    if not is_real(best_val):
        raise fail(path, "best_val", "a number", best_val)
    wall = state.get("wall_time_s")
    if not is_real(wall) or not 0 <= wall < math.inf:
        raise fail(path, "wall_time_s", "a finite number >= 0", wall)
    if set(state["rng"]) != set(RNG_STATES):
        raise fail(path, "rng", f"an object with the states {', '.join(RNG_STATES)}")
    _check_code_history(state.get("code_history"), epoch, path)
    return state


def _check_code_history(history: Any, epoch: int, path: Path) -> None:
    if history is None:
        return
    expected = ("a list of {commit, dirty, from_epoch} with from_epoch rising from 1 to at "
                f"most epoch + 1 = {epoch + 1}")
    if not isinstance(history, list) or not history:
        raise fail(path, "code_history", expected)
    previous = 0
    for entry in history:
        if (not isinstance(entry, dict) or set(entry) != {"commit", "dirty", "from_epoch"}
                or not isinstance(entry["commit"], str | None)
                or not isinstance(entry["dirty"], bool | None)
                or not is_int(entry["from_epoch"])
                or not previous < entry["from_epoch"] <= epoch + 1
                or (previous == 0 and entry["from_epoch"] != 1)):
            raise fail(path, "code_history", expected)
        previous = entry["from_epoch"]


def code_history(recorded: list[dict[str, Any]] | None, current: dict[str, Any], *,
                 next_epoch: int) -> list[dict[str, Any]]:
    """The code commits a run has trained under, each from the first epoch it trained.

    Parameters
    ----------
    recorded : list of dict or None
        The ``code_history`` of the ``last.pt`` resumed from (checked by :func:`read_last`);
        None for a fresh run or a ``last.pt`` written before the field existed (then the
        epochs before ``next_epoch`` are listed under an unknown commit).
    current : dict
        ``{"commit", "dirty"}`` of the code running now
        (:func:`neuralop_fem.environment.code_version`).
    next_epoch : int
        The first epoch this call trains (1 for a fresh run).

    Returns
    -------
    list of dict
        ``{"commit", "dirty", "from_epoch"}`` entries; ``current`` is appended when it differs
        from the last entry, so a run resumed under the same code keeps one entry.

    >>> for entry in code_history(None, {"commit": "b", "dirty": False}, next_epoch=24):
    ...     print(entry)
    {'commit': None, 'dirty': None, 'from_epoch': 1}
    {'commit': 'b', 'dirty': False, 'from_epoch': 24}
    """
    now = {"commit": current.get("commit"), "dirty": current.get("dirty")}
    if recorded is None:
        history = [] if next_epoch == 1 else [{"commit": None, "dirty": None, "from_epoch": 1}]
    else:
        history = [dict(entry) for entry in recorded]
    if not history or {k: history[-1][k] for k in now} != now:
        history.append({**now, "from_epoch": next_epoch})
    return history


def _expected(key: str, value: Any, lr_scale: float) -> Any:
    """A setting's value in a checkpoint whose learning rates are ``lr_scale`` times the
    run's (the rollbacks of :mod:`.divergence`); ``key``: an optimizer group entry or
    ``base_lrs``."""
    if lr_scale == 1 or (key not in LR_GROUP_KEYS and key != "base_lrs"):
        return value
    if isinstance(value, list):
        return [v * lr_scale for v in value]
    return value * lr_scale if is_real(value) else value


def _same(saved: Any, expected: Any) -> bool:
    if is_real(saved) and is_real(expected):
        return math.isclose(saved, expected, rel_tol=1e-12, abs_tol=0.0)
    if isinstance(saved, list) and isinstance(expected, list) and len(saved) == len(expected):
        return all(_same(a, b) for a, b in zip(saved, expected, strict=True))
    return bool(saved == expected)


def _restore_optimizer(optimizer: torch.optim.Optimizer, saved: dict[str, Any],
                       source: Any, lr_scale: float = 1.0) -> None:
    fresh = [{k: v for k, v in g.items() if k != "params"}
             for g in optimizer.state_dict()["param_groups"]]
    try:
        optimizer.load_state_dict(saved)
    except (KeyError, TypeError, ValueError, RuntimeError, IndexError, AttributeError):
        raise fail(source, "optimizer", "the Adam state of this model's parameters") from None
    for i, (group, ref) in enumerate(zip(optimizer.param_groups, fresh, strict=True)):
        for key, value in ref.items():
            value = _expected(key, value, lr_scale)
            if key not in _GROUP_PROGRESS and not _same(group.get(key), value):
                raise fail(source, f"optimizer.param_groups[{i}].{key}",
                           f"{value!r} (from the run's settings)", group.get(key))
        lr, betas = group.get("lr"), group.get("betas")
        if not (is_real(lr) and 0 <= lr < math.inf):
            raise fail(source, f"optimizer.param_groups[{i}].lr", "a finite number >= 0", lr)
        if not (isinstance(betas, list | tuple) and len(betas) == 2
                and all(is_real(b) and 0 <= b < 1 for b in betas)):
            raise fail(source, f"optimizer.param_groups[{i}].betas", "two numbers in [0, 1)",
                        betas)
        for p in group["params"]:
            for key, value in optimizer.state.get(p, {}).items():
                fits = isinstance(value, torch.Tensor) and value.shape == p.shape
                if key != "step" and not fits:
                    raise fail(source, f"optimizer.state.{key}",
                                f"a tensor of the parameter's shape {tuple(p.shape)}")


def _restore_scheduler(scheduler: Any, saved: dict[str, Any], steps: int, source: Any, *,
                       steps_are: str, lr_scale: float = 1.0) -> None:
    fresh = scheduler.state_dict()
    if set(saved) != set(fresh):
        raise fail(source, "scheduler",
                    f"a {type(scheduler).__name__} state with keys {sorted(fresh)}")
    for key, value in fresh.items():
        value = _expected(key, value, lr_scale)
        if key not in SCHEDULER_PROGRESS and not _same(saved[key], value):
            raise fail(source, f"scheduler.{key}", f"{value!r} (from the run's settings)",
                       saved[key])
    if saved["last_epoch"] != steps or saved.get("_step_count", steps + 1) != steps + 1:
        raise fail(source, "scheduler.last_epoch",
                    f"{steps} ({steps_are})",
                    saved["last_epoch"])
    last_lr = saved["_last_lr"]
    if not (isinstance(last_lr, list) and len(last_lr) == len(fresh["_last_lr"])
            and all(is_real(v) and math.isfinite(v) for v in last_lr)):
        raise fail(source, "scheduler._last_lr", "a list of finite learning rates", last_lr)
    scheduler.load_state_dict(saved)


def capture_rng(sampler: GlobalBatchSampler) -> dict[str, Any]:
    """Every RNG state a run draws from: torch, CUDA, numpy, python, the batch order."""
    np_state = np.random.get_state()  # noqa: NPY002 - the legacy global state is saved
    py_state = random.getstate()
    return {
        "torch": torch.get_rng_state(),
        "cuda": [s for s in torch.cuda.get_rng_state_all()] if torch.cuda.is_available() else [],
        "numpy": [np_state[0], np_state[1].tolist(), int(np_state[2]), int(np_state[3]),
                  float(np_state[4])],
        "python": [py_state[0], list(py_state[1]), py_state[2]],
        "loader": sampler.generator.get_state(),
    }


def restore_rng(state: dict[str, Any], sampler: GlobalBatchSampler | None, source: Any) -> None:
    """Set the RNG states of :func:`capture_rng` (the batch order's only with a ``sampler``)."""
    key = "torch"
    try:
        torch.set_rng_state(state["torch"])
        key = "cuda"
        if state["cuda"] and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(state["cuda"])
        key = "numpy"
        n = state["numpy"]
        np.random.set_state((n[0], np.asarray(n[1], dtype=np.uint32), n[2], n[3], n[4]))  # noqa: NPY002
        key = "python"
        p = state["python"]
        random.setstate((p[0], tuple(p[1]), p[2]))
        key = "loader"
        if sampler is not None:
            sampler.generator.set_state(state["loader"])
    except (KeyError, TypeError, ValueError, RuntimeError, IndexError, OverflowError):
        raise fail(source, f"rng.{key}", "the saved state of that generator") from None


class Progress(NamedTuple):
    """Where a resumed run stands: epochs completed, per-epoch history, best epoch and its
    validation error, wall time (s) spent before this process."""

    epoch: int
    history: dict[str, list[float]]
    best_epoch: int
    best_val: float
    wall_time_s: float


def restore(state: LastState, source: str | os.PathLike[str], *, operator: torch.nn.Module,
            optimizer: torch.optim.Optimizer, scheduler: Any, sampler: GlobalBatchSampler,
            config: TrainConfig, steps_per_epoch: int, steps_within: int = 0,
            lr_scale: float = 1.0) -> Progress:
    """Load :func:`read_last` output into the model, optimizer, scheduler, RNGs and sampler
    of a run (everything checked first); return the run's :class:`Progress`. ``config`` and
    ``steps_per_epoch`` (optimizer steps) give the scheduler's expected step count, plus
    ``steps_within`` the next epoch's steps done (``partial.pt``, per-step schedules);
    ``lr_scale``: the checkpoint's learning rates over those of ``optimizer`` and
    ``scheduler`` (the rollbacks of :mod:`.divergence`)."""
    epoch = int(state["epoch"])
    try:
        check_state_dict(operator, state["model"], source=str(source), field="model",
                         error=RunDirectoryError, finite=False)
    except RunDirectoryError as exc:
        msg = f"{exc} {RETRY}"
        raise RunDirectoryError(msg) from None
    operator.load_state_dict(state["model"])
    _restore_optimizer(optimizer, state["optimizer"], source, lr_scale)
    steps = scheduler_steps(config, epochs_done=epoch, steps_per_epoch=steps_per_epoch)
    steps += 0 if config.scheduler in PER_EPOCH else steps_within
    _restore_scheduler(scheduler, state["scheduler"], steps, source,
                       steps_are="the epoch" if config.scheduler in PER_EPOCH
                       else "epoch x steps per epoch"
                       + (" + steps within the next epoch" if steps_within else ""),
                       lr_scale=lr_scale)
    restore_rng(state["rng"], sampler, source)
    return Progress(
        epoch=epoch,
        history={k: [float(v) for v in state["history"][k]] for k in _HISTORY},
        best_epoch=int(state["best_epoch"]), best_val=float(state["best_val"]),
        wall_time_s=float(state["wall_time_s"]))


def check_resumable(state: LastState, last: Path, *, config: TrainConfig,
                    identity: dict[str, Any], status: str | None) -> None:
    """Refuse to resume the ``last.pt`` ``state`` (read from ``last``) with other settings
    (``identity``: the new run's, compared with the recorded one, settings added since it
    started at their defaults), past its ``config.epochs``, or once it is finished (``status``
    of ``run.json``)."""
    run_dir = last.parent
    old = {**added_defaults(state["identity"]), **state["identity"]}
    diff = sorted(k for k in old.keys() | identity.keys() if old.get(k) != identity.get(k))
    if diff:
        # another preset or problem: its model and training fields differ as a consequence
        lead = [k for k in ("task", "preset", "data_path") if k in diff]
        if not {"task", "preset"} & set(lead):
            lead = diff
        shown = "; ".join(f"{k}: {old.get(k)!r} (run) vs {identity.get(k)!r} (now)" for k in lead)
        if len(diff) > len(lead):
            shown += f"; {len(diff) - len(lead)} other settings differ as well"
        msg = (f"{run_dir} holds a run with other settings: {shown}. Use another --out or pass "
               "--overwrite to discard it.")
        raise ConfigError(msg)
    if state["epoch"] > config.epochs:
        msg = (f"{last}: field `epoch` must be at most the run's {config.epochs} epochs; "
               f"got {state['epoch']}. Pass overwrite=True to start again.")
        raise RunDirectoryError(msg)
    done = state["epoch"] == config.epochs or stopped_early(
        config, epoch=state["epoch"], best_epoch=state["best_epoch"])
    if done and status == "finished":
        msg = (f"{run_dir} holds a finished run ({state['epoch']} epochs); pass overwrite=True "
               "to train it again.")
        raise ConfigError(msg)
