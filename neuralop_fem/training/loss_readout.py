"""Training losses read back from the device in groups, not one host sync per step.

Reading a loss as a Python float (``float(loss)``) makes the host wait until the device has
finished every kernel queued so far. On a GPU that wait, once per optimizer step, keeps the host
from queueing the next step's kernels while the current ones run: for the small models of the
paper the device then idles between steps. :class:`LossReadout` keeps the detached loss tensors
of the last steps on the device and reads them in one transfer (``torch.stack(...).tolist()``)
when the values are needed: every ``every`` steps, before a within-epoch checkpoint, for an
experiment logger's per-step value and at the end of the epoch.

The values are the same Python floats as ``float(loss)`` gives, summed in the same order, so a
run's losses, checkpoints and resumes are bitwise the same whatever ``every`` is; on the CPU,
where reading costs nothing, :func:`readout_interval` reads every step (the progress bar moves
with each batch).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

#: Steps between two reads on a GPU: the host runs up to this many steps ahead of the device.
GPU_READOUT_INTERVAL = 32


def readout_interval(device: torch.device) -> int:
    """Steps between two reads of the losses: 1 on the CPU, :data:`GPU_READOUT_INTERVAL` else."""
    return 1 if device.type == "cpu" else GPU_READOUT_INTERVAL


class LossReadout:
    """Detached per-step losses, read from the device ``every`` steps in one transfer, and
    their sums: ``total`` (the epoch's) and the current accumulation group's.

    Parameters
    ----------
    every : int
        Steps between two automatic reads (>= 1).
    on_value : callable
        ``on_value(value)`` receives every step's loss as a Python float, in step order (the
        progress display).
    total : float
        The sum of the losses read before (a resumed epoch's).
    """

    def __init__(self, every: int, on_value: Callable[[float], None], total: float = 0.0) -> None:
        if every < 1:
            msg = f"every must be an integer >= 1; got {every!r}"
            raise ValueError(msg)
        self.every, self.total, self._group = every, total, 0.0
        self._on_value = on_value
        self._pending: list[torch.Tensor] = []
        self._sizes: list[int] = []

    def __len__(self) -> int:
        return len(self._pending)

    def add(self, loss: torch.Tensor, size: int) -> None:
        """Queue one step's loss (a 0-d tensor; detached here) whose accumulation group has
        ``size`` steps; reads all when ``every`` are queued."""
        self._pending.append(loss.detach())
        self._sizes.append(size)
        if len(self._pending) >= self.every:
            self.flush()

    def flush(self) -> None:
        """Read every queued loss (one host sync) and add each to the sums, in order."""
        if not self._pending:
            return
        values = (torch.stack(self._pending).tolist() if len(self._pending) > 1
                  else [self._pending[0].item()])
        sizes = self._sizes
        self._pending, self._sizes = [], []
        for value, size in zip(values, sizes, strict=True):
            value = float(value)
            self._group += value / size
            self.total += value
            self._on_value(value)

    def take_group(self) -> float:
        """The group's mean loss (each loss divided by its group's size, summed) after a
        :meth:`flush`; the next group starts from zero."""
        self.flush()
        group, self._group = self._group, 0.0
        return group
