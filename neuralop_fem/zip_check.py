"""The one check of a torch ``.pt`` archive before ``torch.load`` reads it.

``torch.save`` writes an *uncompressed* zip archive (entries ``ZIP_STORED``), so what
``torch.load`` allocates is bounded by the file's size. A hostile or damaged file can declare
compressed entries (a few hundred KiB that inflate to gigabytes) or entries larger than the
file, and a legacy (pre-zip) torch file allocates the storages it declares before reading
them. :func:`archive_problem` finds each of these from the zip directory alone, without
reading an entry; model files and checkpoints (:mod:`neuralop_fem.models.io`) and peer data
files (:mod:`neuralop_fem.data.peers.safe_torch`) are both checked with it.
"""

from __future__ import annotations

import os
import zipfile
from typing import BinaryIO

__all__ = ["MAX_ENTRIES", "archive_problem"]

#: Most entries read from an archive's directory (a torch file holds one per tensor storage).
MAX_ENTRIES = 1_000_000


def archive_problem(fh: BinaryIO) -> str | None:
    """What makes the open file ``fh`` unsafe to give ``torch.load``, or None.

    Parameters
    ----------
    fh : binary file
        Positioned anywhere; left at the start.

    Returns
    -------
    str or None
        A clause for a message (``"it holds compressed entries, ..."``), or None for an
        uncompressed zip archive whose entries fit in the file.

    Raises
    ------
    zipfile.BadZipFile
        Not a zip archive: truncated, damaged, another format, or torch's legacy format
        (before 1.6), which ``torch.load`` would read by allocating what it declares.
    """
    size = os.fstat(fh.fileno()).st_size
    try:
        with zipfile.ZipFile(fh) as archive:
            entries = archive.infolist()
    finally:
        fh.seek(0)
    if len(entries) > MAX_ENTRIES:
        return f"it holds {len(entries):,} entries; the limit is {MAX_ENTRIES:,}"
    if any(e.compress_type != zipfile.ZIP_STORED for e in entries):
        return ("it holds compressed entries, which torch.save never writes (loading would "
                "inflate them to any size)")
    total = sum(e.file_size for e in entries)
    if total > size:
        return (f"its entries declare {total:,} bytes, more than the file's {size:,}; it is "
                "damaged or forged")
    return None
