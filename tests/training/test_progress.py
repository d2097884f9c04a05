"""Training progress moves within an epoch, the first one included (bar and log lines)."""

from __future__ import annotations

import io
import logging
import re
import sys

import pytest

from neuralop_fem.models import PRESETS
from neuralop_fem.training import TrainConfig, Trainer
from neuralop_fem.training import progress as progress_module
from neuralop_fem.training.progress import TrainingProgress

from .conftest import TINY_BURGERS

# 20 training samples in batches of 4: 5 batches per epoch
CONFIG = TrainConfig(task="burgers", epochs=1, batch_size=4, n_train=20, n_val=2, n_test=2,
                     resolution=64, device="cpu")


class _Terminal(io.StringIO):
    """A stderr that says it is a terminal and keeps everything written to it."""

    def isatty(self) -> bool:
        return True


def _counts(text: str, total: int) -> list[int]:
    """The batch counts ``k/total`` the bar showed, in order."""
    return [int(k) for k in re.findall(rf"\b(\d+)/{total} \[", text)]


def test_the_bar_moves_with_every_batch(monkeypatch):
    monkeypatch.setattr(progress_module, "REFRESH_S", 0.0)
    out = io.StringIO()
    progress = TrainingProgress(epochs=2, steps_per_epoch=5, bar=True, file=out)
    progress.start_epoch(1)
    for k in range(3):
        progress.batch(1.0 + k)
    text = out.getvalue()
    assert _counts(text, 10)[-3:] == [1, 2, 3], text
    assert "epoch 1/2" in text
    assert "loss=2.000e+00" in text
    progress.batch(1.0)
    progress.batch(1.0)
    progress.end_epoch(loss=1.5, val=0.25, lr=1e-3)
    assert "val=2.500e-01" in out.getvalue()
    progress.close()


def test_a_resumed_run_starts_its_bar_where_it_stopped(monkeypatch):
    monkeypatch.setattr(progress_module, "REFRESH_S", 0.0)
    out = io.StringIO()
    progress = TrainingProgress(epochs=4, steps_per_epoch=5, done_epochs=2, bar=True, file=out)
    progress.start_epoch(3)
    progress.batch(1.0)
    assert _counts(out.getvalue(), 20)[-1] == 11
    progress.close()


def test_training_on_a_terminal_draws_the_bar_during_the_first_epoch(tmp_path, burgers_file,
                                                                     monkeypatch):
    monkeypatch.setattr(progress_module, "REFRESH_S", 0.0)
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    seen: list[str] = []
    model = PRESETS["burgers-galerkin"].replace(**TINY_BURGERS)
    with Trainer(tmp_path / "run", burgers_file, model_config=model, config=CONFIG) as trainer:
        trainer.fit(callback=lambda t, row: seen.append(terminal.getvalue()))
    # When the first (only) epoch ended the bar had already shown every batch of it.
    assert _counts(seen[0], 5)[:6] == [0, 1, 2, 3, 4, 5], seen[0]


class _Records(logging.Handler):
    """Keeps the messages of the records it handles."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_without_a_terminal_an_epoch_logs_its_batches(tmp_path, burgers_file, monkeypatch):
    monkeypatch.setattr(progress_module, "LOG_EVERY_S", 0.0)
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # not a terminal
    # a handler on the trainer's logger itself: an earlier command line in this process may
    # have stopped "neuralop_fem" records from reaching the root logger (and caplog)
    logger = logging.getLogger("neuralop_fem.training.trainer")
    records = _Records()
    logger.addHandler(records)
    level = logger.level
    logger.setLevel(logging.INFO)
    model = PRESETS["burgers-galerkin"].replace(**TINY_BURGERS)
    try:
        with Trainer(tmp_path / "run", burgers_file, model_config=model, config=CONFIG) as t:
            t.fit()
    finally:
        logger.removeHandler(records)
        logger.setLevel(level)
    lines = records.messages
    batches = [m for m in lines if m.startswith("epoch 1/1: batch")]
    assert [m.split()[3].rstrip(",") for m in batches] == ["1/5", "2/5", "3/5", "4/5"], lines
    end = next(i for i, m in enumerate(lines) if m.startswith("epoch 1/1 loss"))
    assert lines.index(batches[-1]) < end


@pytest.mark.parametrize("bar", [True, False])
def test_progress_with_nothing_to_show_is_silent(bar, monkeypatch, caplog):
    out = io.StringIO()
    progress = TrainingProgress(epochs=1, steps_per_epoch=3, bar=bar, log=False, file=out)
    progress.start_epoch(1)
    progress.close()
    progress.close()  # twice is fine
    assert not caplog.records
