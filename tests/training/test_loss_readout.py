"""Losses read from the device in groups: the same run whatever the readout interval.

On a GPU the trainer reads the per-step losses every :data:`GPU_READOUT_INTERVAL` steps instead of
after each step (one host sync per group). The interval is forced here on the CPU: a run that
reads every 4 steps (with a within-epoch checkpoint and resume through a group, and with an
experiment logger that needs every step's loss) must equal, bit for bit, the run that reads
every step.
"""

from __future__ import annotations

import pytest
import torch

from neuralop_fem.training import trainer as trainer_module
from neuralop_fem.training.loss_readout import (
    GPU_READOUT_INTERVAL,
    LossReadout,
    readout_interval,
)

from .test_loaders import BURGERS_MODEL, _burgers, _fit
from .test_partial_checkpoint import _assert_same_run, _interrupt_after, _Stop


def test_the_readout_hands_over_every_loss_in_order_with_one_read_per_group(monkeypatch):
    got: list[float] = []
    readout = LossReadout(3, got.append, total=10.0)  # a resumed epoch's sum so far
    stacks = []
    stack = torch.stack
    monkeypatch.setattr(torch, "stack", lambda ts: stacks.append(len(ts)) or stack(ts))
    losses = [torch.tensor(v, dtype=torch.float32) for v in (0.1, 0.2, 0.3, 0.4, 0.5)]
    sizes = [2, 2, 1, 2, 2]  # groups of two steps, one of one
    for loss, size in zip(losses[:2], sizes[:2], strict=True):
        readout.add(loss, size)
    assert got == []  # nothing read before the third
    assert readout.take_group() == float(losses[0]) / 2 + float(losses[1]) / 2  # reads now
    readout.add(losses[2], sizes[2])
    readout.add(losses[3], sizes[3])
    readout.add(losses[4], sizes[4])  # the third queued: read
    assert readout.take_group() == float(losses[2]) + (float(losses[3]) + float(losses[4])) / 2
    readout.flush()  # nothing queued: nothing read
    # the same Python floats as float(loss), each read once, summed in order
    values = [float(loss) for loss in losses]
    assert got == values
    total = 10.0
    for v in values:
        total += v
    assert readout.total == total
    assert stacks == [2, 3]
    assert len(readout) == 0


def test_the_interval_is_one_on_the_cpu_and_a_group_elsewhere():
    assert readout_interval(torch.device("cpu")) == 1
    assert readout_interval(torch.device("cuda", 0)) == GPU_READOUT_INTERVAL > 1
    with pytest.raises(ValueError, match="every must be an integer >= 1; got 0"):
        LossReadout(0, lambda value: None)


def test_a_run_reading_every_fourth_step_equals_the_run_reading_every_step(tmp_path,
                                                                         burgers_file,
                                                                         monkeypatch):
    config = _burgers(data_on_device="off")
    _fit(tmp_path / "every", burgers_file, BURGERS_MODEL, config)
    monkeypatch.setattr(trainer_module, "readout_interval", lambda device: 4)
    _fit(tmp_path / "grouped", burgers_file, BURGERS_MODEL, config)
    _assert_same_run(tmp_path / "grouped", tmp_path / "every")
    # stopped within an epoch (after 3 of 6 batches: the group of 4 not full) and resumed
    run = tmp_path / "resumed"
    with monkeypatch.context() as m:
        _interrupt_after(m, 3)
        with pytest.raises(_Stop):
            _fit(run, burgers_file, BURGERS_MODEL, _burgers(data_on_device="off",
                                                           checkpoint_minutes=1e-9))
    _fit(run, burgers_file, BURGERS_MODEL, _burgers(data_on_device="off",
                                                   checkpoint_minutes=1e-9))
    _assert_same_run(run, tmp_path / "every")
