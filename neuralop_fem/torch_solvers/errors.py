"""The error of the torch solvers that callers catch without importing torch.

:class:`DeviceMemoryError` is raised when a batch does not fit the device's memory; it names
the batch size that was tried and a smaller one to try. It subclasses :class:`MemoryError`
(the command line reports it as one line, exit status 2) and
:class:`~solvers.errors.NeuralopFemError`.
"""

from __future__ import annotations

from ..errors import NeuralopFemError

__all__ = ["DeviceMemoryError"]


class DeviceMemoryError(NeuralopFemError, MemoryError):
    """A batch of samples did not fit the device's memory.

    Attributes
    ----------
    batch_size : int
        Samples of the batch that failed.
    suggested : int
        A batch size to try instead (half of ``batch_size``, at least 1).
    device : str
        The torch device, e.g. ``"cuda:0"``.
    """

    def __init__(self, message: str, *, batch_size: int, device: str) -> None:
        super().__init__(message)
        self.batch_size = int(batch_size)
        self.suggested = max(1, self.batch_size // 2)
        self.device = device

    def __reduce__(self) -> tuple[object, ...]:
        # keyword-only arguments: rebuilt explicitly when it crosses a process boundary
        return (_rebuild, (str(self), self.batch_size, self.device))


def _rebuild(message: str, batch_size: int, device: str) -> DeviceMemoryError:
    return DeviceMemoryError(message, batch_size=batch_size, device=device)
