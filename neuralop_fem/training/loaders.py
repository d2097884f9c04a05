"""Training data held on the training device: every item read once, a batch one index away.

The per-sample path (``Dataset.__getitem__``, the DataLoader's collation, pinning and a host
-> device copy per batch) costs a few milliseconds per batch on the host. On a CPU that is
nothing beside a step; on a GPU, where a small model's step takes tens of milliseconds, it halved
Darcy's training speed (an H100: 10.6 it/s in the trainer's loop against 21.6 on batches already
on the GPU; docs/training.md). :class:`ResidentDataset` stacks the items once into tensors on the
device; its ``__getitems__`` (which :class:`torch.utils.data.DataLoader` calls with a batch's
indices) gathers a batch there. The batches hold the same values as the per-sample path's, in
the same order (the sampler and the loader's draws from the RNG are unchanged), so a run trains
bit for bit the same either way on the same device.

``TrainConfig.data_on_device``: ``"auto"`` (the default) on CUDA when the stacked tensors take at
most :data:`AUTO_FRACTION` of the GPU's free memory, never on the CPU (there it saves nothing
worth the memory); ``"on"`` always (on the CPU: in host memory); ``"off"`` never.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, Sampler

from ..config_base import choice as check_choice
from ..metrics import relative_l2
from ..runs.train_config import DATA_ON_DEVICE_CHOICES

__all__ = ["AUTO_FRACTION", "BATCH_KEYS", "DATA_ON_DEVICE_CHOICES", "ResidentDataset",
           "collate_batch", "eval_loader", "item_bytes", "split_errors", "training_loader",
           "use_resident"]

#: ``"auto"`` keeps the data on a GPU when it takes at most this part of the free memory.
AUTO_FRACTION = 0.25
#: The keys of an item that training and evaluation read (the grids are not needed).
BATCH_KEYS = ("input", "target", "target_grad", "coefficient")
#: Items stacked per host -> device copy while the tensors are filled.
_CHUNK = 64


def item_bytes(dataset: Dataset, keys: Sequence[str]) -> int:
    """Bytes of ``keys`` of all of ``dataset``'s items, from its first item."""
    first = dataset[0]
    return len(dataset) * sum(first[k].numel() * first[k].element_size() for k in keys
                              if k in first)


def use_resident(choice: str, device: torch.device, nbytes: int) -> tuple[bool, str]:
    """Whether data of ``nbytes`` stays on ``device`` for ``data_on_device = choice``, and why
    (for the log).

    >>> use_resident("auto", torch.device("cpu"), 10**6)
    (False, 'per-sample loading (data_on_device=auto: not on the CPU)')
    >>> use_resident("on", torch.device("cpu"), 10**6)[0]
    True
    """
    check_choice(choice, "data_on_device", DATA_ON_DEVICE_CHOICES)
    size = f"{nbytes / 2**20:.0f} MiB" if nbytes >= 2**20 else f"{nbytes / 2**10:.0f} KiB"
    if choice == "off":
        return False, "per-sample loading (data_on_device=off)"
    if choice == "on":
        return True, f"training data on {device} ({size}; data_on_device=on)"
    if device.type != "cuda":
        return False, "per-sample loading (data_on_device=auto: not on the CPU)"
    free, _ = torch.cuda.mem_get_info(device)
    if nbytes <= AUTO_FRACTION * free:
        return True, (f"training data on {device} ({size}, {nbytes / free:.1%} of the free "
                      "memory; data_on_device=auto)")
    return False, (f"per-sample loading (data_on_device=auto: {size} is more than "
                   f"{AUTO_FRACTION:.0%} of the {free / 2**30:.1f} GiB free on {device})")


class ResidentDataset(Dataset):
    """The ``keys`` of every item of ``dataset``, stacked once into tensors on ``device``.

    Parameters
    ----------
    dataset : torch Dataset
        Items are dicts of tensors of one shape per key (the datasets of
        :mod:`neuralop_fem.data.datasets`).
    keys : sequence of str
        The keys to keep (those of the first item that are present; the others, e.g. a grid
        that is the same for every item, are dropped).
    device : torch.device

    Notes
    -----
    ``self[i]`` is the item's dict; ``self.__getitems__(indices)`` is the stacked batch
    ``{key: (len(indices), *item_shape)}``, equal to the default collation of the items. Use
    :func:`collate_batch` as the DataLoader's ``collate_fn`` and no worker processes.
    """

    def __init__(self, dataset: Dataset, keys: Sequence[str], device: torch.device) -> None:
        first = dataset[0]
        self.keys = tuple(k for k in keys if k in first)
        self.device = torch.device(device)
        n = len(dataset)
        self.tensors = {k: torch.empty((n, *first[k].shape), dtype=first[k].dtype,
                                       device=self.device) for k in self.keys}
        for start in range(0, n, _CHUNK):
            items = [dataset[i] for i in range(start, min(start + _CHUNK, n))]
            for k in self.keys:
                self.tensors[k][start:start + len(items)] = torch.stack([it[k] for it in items])

    def __len__(self) -> int:
        return len(self.tensors[self.keys[0]])

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        return {k: v[i] for k, v in self.tensors.items()}

    def __getitems__(self, indices: Sequence[int]) -> dict[str, torch.Tensor]:
        idx = torch.as_tensor(indices, dtype=torch.long).to(self.device, non_blocking=True)
        return {k: v.index_select(0, idx) for k, v in self.tensors.items()}


def collate_batch(batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The DataLoader's ``collate_fn`` for :class:`ResidentDataset`: the batch is stacked."""
    return batch


def training_loader(train: Dataset, val: Dataset, *, sampler: Sampler, choice: str,
                    device: torch.device, num_workers: int) -> tuple[DataLoader, Dataset, str]:
    """The trainer's DataLoader over ``train`` (batches from ``sampler``), the validation split
    to evaluate each epoch, and one line for the log saying where the data lives.

    With the data on the device (:func:`use_resident`) both splits become
    :class:`ResidentDataset` and the loader has no workers; otherwise the loader reads items
    one by one with ``num_workers`` processes, into pinned memory on CUDA (so the trainer's
    non-blocking copies are asynchronous).
    """
    on, why = use_resident(choice, device, item_bytes(train, BATCH_KEYS)
                           + item_bytes(val, BATCH_KEYS))
    if on:
        train, val = ResidentDataset(train, BATCH_KEYS, device), ResidentDataset(val, BATCH_KEYS,
                                                                                 device)
        if num_workers:
            why += f"; num_workers={num_workers} unused"
    loader = DataLoader(train, batch_sampler=sampler, num_workers=0 if on else num_workers,
                        pin_memory=device.type == "cuda" and not on,
                        collate_fn=collate_batch if on else None)
    return loader, val, why


def eval_loader(dataset: Dataset, batch_size: int) -> DataLoader:
    """Batches of ``dataset`` in order (a :class:`ResidentDataset` or a per-sample one)."""
    return DataLoader(dataset, batch_size=batch_size, collate_fn=collate_batch
                      if isinstance(dataset, ResidentDataset) else None)


@torch.no_grad()
def split_errors(module: nn.Module, dataset: Dataset, *, device: torch.device,
                 batch_size: int) -> np.ndarray:
    """Per-sample relative L2 errors, shape ``(len(dataset),)``, of ``module`` (put in eval
    mode) on ``dataset`` read in batches of ``batch_size``. The trainer passes the float32
    operator also under ``amp="bf16"``: validation, test errors and every later use of the
    weights (``load_trained``, ``Surrogate``) agree."""
    module.eval()
    out = [relative_l2(module(b["input"].to(device)).to("cpu", torch.float64).numpy(),
                       b["target"].to("cpu", torch.float64).numpy())
           for b in eval_loader(dataset, batch_size)]
    return np.concatenate(out)
