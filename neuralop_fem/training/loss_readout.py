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
    """Detached per-step losses, read from the device ``every`` steps in one transfer.

    Parameters
    ----------
    every : int
        Steps between two automatic reads (>= 1).
    consume : callable
        ``consume(value, weight)`` receives every step's loss as a Python float, in step order,
        with the weight given to :meth:`add` (the step's share of its accumulation group).
    """

    def __init__(self, every: int, consume: Callable[[float, int], None]) -> None:
        if every < 1:
            msg = f"every must be an integer >= 1; got {every!r}"
            raise ValueError(msg)
        self.every = every
        self._consume = consume
        self._pending: list[torch.Tensor] = []
        self._sizes: list[int] = []

    def __len__(self) -> int:
        return len(self._pending)

    def add(self, loss: torch.Tensor, size: int) -> None:
        """Queue one step's loss (a 0-d tensor; detached here); reads all when ``every`` are
        queued."""
        self._pending.append(loss.detach())
        self._sizes.append(size)
        if len(self._pending) >= self.every:
            self.flush()

    def flush(self) -> None:
        """Read every queued loss (one host sync) and hand each to ``consume`` in order."""
        if not self._pending:
            return
        values = (torch.stack(self._pending).tolist() if len(self._pending) > 1
                  else [self._pending[0].item()])
        sizes = self._sizes
        self._pending, self._sizes = [], []
        for value, size in zip(values, sizes, strict=True):
            self._consume(float(value), size)
