"""Is this dataset file the data of those reproduction rows?

Each row of ``results/reproduction.json`` records its dataset's generation settings, the
SHA-256 checksum of its values and their sketch (:mod:`neuralop_fem.data.fingerprint`). A file
regenerated with the row's ``generate_command`` where numpy and BLAS choose the same kernels
(:mod:`neuralop_fem.data.float_paths`) has the same checksum. On another CPU (AVX-512 against
AVX2, say) the last bits differ: the checksum differs, the sketch shows the values agree to
rounding. This module compares one file
with the rows and says which of the three it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..data.fingerprint import SAME_VALUES_RTOL, sketch_difference
from ..errors import DatasetError

__all__ = ["DataMatch", "data_matches", "record_identical", "same_values_checksum"]


@dataclass(frozen=True)
class DataMatch:
    """How a file compares with the data of some rows (all of one recorded checksum).

    ``verdict`` is ``"identical"`` (same checksum), ``"same values"`` (other checksum, sketch
    difference at most the tolerance), ``"different"`` (beyond it) or ``"unverifiable"`` (the
    rows record no sketch, and the checksums differ). ``difference`` is the sketch difference
    (None when not computed).
    """

    verdict: str
    checksum: str | None
    keys: tuple[str, ...]
    difference: float | None

    def describe(self, file_checksum: str, rtol: float) -> str:
        """The verdict as a sentence about the file (checksum ``file_checksum``)."""
        rows = f"{len(self.keys)} row{'s' if len(self.keys) != 1 else ''} ({self.checksum})"
        if self.verdict == "identical":
            return f"bit-identical to the data of {rows}"
        if self.verdict == "same values":
            return (f"the same values as the data of {rows} up to rounding: estimated relative "
                    f"difference {self.difference:.1e} <= {rtol:g}; the checksum "
                    f"{file_checksum} differs, as a regeneration does where numpy or BLAS "
                    "choose other kernels (another CPU)")
        if self.verdict == "different":
            return (f"NOT the data of {rows}: estimated relative difference "
                    f"{self.difference:.1e} > {rtol:g}")
        return f"unverifiable against {rows}: the checksums differ and those rows record no sketch"


def _generated_alike(row: dict[str, Any], data_row: dict[str, Any]) -> bool:
    """Whether a row's data was generated like ``data_row``: problem, seed, sample count and
    the settings both record (settings added to the generator later count as unknown)."""
    if any(row.get(k) != data_row.get(k) for k in ("problem", "dataset_seed", "n_samples")):
        return False
    mine, theirs = data_row.get("settings"), row.get("settings")
    if not mine or not theirs:
        return False
    return all(mine[k] == theirs[k] for k in set(mine) & set(theirs))


def data_matches(results: dict[str, Any], data_row: dict[str, Any], *,
                 rtol: float = SAME_VALUES_RTOL) -> list[DataMatch]:
    """Compare a file's ``dataset_record`` with the data of every row generated alike.

    One :class:`DataMatch` per recorded checksum among those rows, best first (identical,
    same values, unverifiable, different); empty when no row's data was generated with the
    file's settings.
    """
    by_checksum: dict[str | None, list[tuple[str, dict[str, Any]]]] = {}
    for key, entry in results.get("runs", {}).items():
        row = entry.get("data")
        if isinstance(row, dict) and _generated_alike(row, data_row):
            by_checksum.setdefault(row.get("checksum"), []).append((key, row))
    matches = []
    for checksum, rows in by_checksum.items():
        keys = tuple(k for k, _ in rows)
        if checksum is not None and checksum == data_row.get("checksum"):
            matches.append(DataMatch("identical", checksum, keys, 0.0))
            continue
        sketch = next((r["sketch"] for _, r in rows if r.get("sketch")), None)
        if sketch is None or data_row.get("sketch") is None:
            matches.append(DataMatch("unverifiable", checksum, keys, None))
            continue
        try:
            diff = sketch_difference(sketch, data_row["sketch"])
        except ValueError as exc:
            msg = f"the data sketch of row {keys[0]!r} cannot be compared: {exc}"
            raise DatasetError(msg) from None
        matches.append(DataMatch("same values" if diff <= rtol else "different", checksum,
                                 keys, diff))
    order = {"identical": 0, "same values": 1, "unverifiable": 2, "different": 3}
    return sorted(matches, key=lambda m: (order[m.verdict], m.difference or 0.0))


def _rows_on(results: dict[str, Any], checksum: str | None) -> list[tuple[str, dict[str, Any]]]:
    """``(key, data record)`` of the rows whose data has ``checksum`` (none for None)."""
    if checksum is None:
        return []
    return [(key, entry["data"]) for key, entry in results.get("runs", {}).items()
            if isinstance(entry, dict) and isinstance(entry.get("data"), dict)
            and entry["data"].get("checksum") == checksum]


def same_values_checksum(results: dict[str, Any], data_row: dict[str, Any], *,
                         rtol: float = SAME_VALUES_RTOL) -> dict[str, Any] | None:
    """For a row about to be recorded: the rows' checksum whose values the file holds up to
    rounding (``{"checksum", "difference"}``), None when some row's data is identical or none
    holds the same values. Rows on either file then form one group. A row already recorded on
    this very file (same checksum) that points to another file's rows passes that on, so that
    every row on the file joins the same group (several runs recorded one after the other)."""
    for _, row in _rows_on(results, data_row.get("checksum")):
        if isinstance(row.get("same_values_as"), dict):
            return dict(row["same_values_as"])
    matches = data_matches(results, data_row, rtol=rtol)
    if not matches or matches[0].verdict != "same values":
        return None
    return {"checksum": matches[0].checksum, "difference": matches[0].difference}


def record_identical(results: dict[str, Any], data_row: dict[str, Any]) -> list[str]:
    """Complete the rows whose data is bit-identical to the file (same checksum): a row that
    lacks a sketch gets the file's, and ``reproduced_by`` gains the file's kernel choices
    (its ``float_paths``: the processes that generated it) not yet listed. Returns the keys
    of the rows changed."""
    done = []
    for key, row in _rows_on(results, data_row.get("checksum")):
        listed = row.get("reproduced_by", [])
        new: list[dict[str, Any]] = []
        for paths in data_row.get("float_paths") or []:
            if paths is not None and paths not in listed and paths not in new:
                new.append(paths)
        if new:
            row["reproduced_by"] = [*listed, *new]
        if not row.get("sketch"):
            row["sketch"] = data_row["sketch"]
        elif not new:
            continue
        done.append(key)
    return done
