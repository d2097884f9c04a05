"""Test helpers: observed convergence orders with readable failure messages."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def observed_order(h: Sequence[float], err: Sequence[float]) -> float:
    """Least-squares slope of log(err) against log(h)."""
    slope, _ = np.polyfit(np.log(np.asarray(h, float)), np.log(np.asarray(err, float)), 1)
    return float(slope)


def assert_order(h: Sequence[float], err: Sequence[float], expected: float, tol: float) -> None:
    """Assert |observed - expected| < tol, printing the error table on failure."""
    p = observed_order(h, err)
    table = "\n".join(f"  h={hi:.4e}  err={ei:.4e}" for hi, ei in zip(h, err, strict=True))
    assert abs(p - expected) < tol, f"observed order {p:.3f}, expected {expected} +- {tol}\n{table}"


def corrupt_chunk(src, dst, variable: str) -> None:
    """Copy the netCDF file ``src`` to ``dst`` and overwrite 16 bytes in the middle of the
    first stored chunk of ``variable`` (as a failing disk would): opening still works, reading
    that chunk fails its Fletcher-32 checksum."""
    import shutil

    import h5py

    shutil.copyfile(src, dst)
    with h5py.File(dst, "r") as f:
        info = f[variable].id.get_chunk_info(0)
    with open(dst, "r+b") as fh:
        fh.seek(info.byte_offset + info.size // 2)
        fh.write(b"\x00\xff" * 8)
