"""What ``inspect`` reports, as plain data: header, statistics, one row explained."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from pecli.dtypes import json_number
from pecli.errors import PecliInputError
from pecli.spans import Span, resolve_span
from pecli.table import Progress, Table, TableLike, as_table


def position_to_row(table: Table, pos: int, option: str = "--pos") -> int:
    n = table.shape[0]
    first = table.start
    if not first <= pos < first + n:
        raise PecliInputError(f"{option} {pos} is outside the table's positions {first}..{first + n - 1}")
    return pos - first


#: The most columns ``--pos`` lists, and an ``inspect --json`` window holds unless ``--cols`` says.
MAX_LISTED_COLUMNS = 65536


def row_details(table: Table, pos: int, cols: Span | None = None) -> list[dict[str, Any]]:
    """Row ``pos`` column by column: index and value, plus for a recipe what the column computes.

    Sinusoidal recipes add the frequency index ``i``, the function, ``ω_i``, the wavelength
    ``2π/ω_i`` and the angle ``p·ω_i``; grid recipes add the axis and its coordinate.
    """
    r = position_to_row(table, pos)
    c0, c1 = resolve_span(cols, 0, table.shape[1], "--cols")
    if c1 - c0 > MAX_LISTED_COLUMNS:  # each column is a line (a dict in JSON): 5·10⁶ of them took 3.6 GB
        from pecli.errors import TableTooLargeError

        raise TableTooLargeError(
            f"position {pos} has {c1 - c0} columns, more than the {MAX_LISTED_COLUMNS} --pos lists: "
            f"pick some with --cols C:D (e.g. --cols {c0}:{c0 + 1024}), or write the table with -o"
        )
    values = table.rows(r, r + 1)[0]
    explain = _explainer(table, r, pos)
    out: list[dict[str, Any]] = []
    for j in range(c0, c1):
        entry: dict[str, Any] = {"col": j, **explain(j), "value": values[j]}
        out.append(entry)
    return out


def _explainer(table: Table, r: int, pos: int) -> Any:
    """What each column of row ``r`` computes, as the table's kind says (nothing for file data)."""
    return table.recipe.column_meaning(r) if table.recipe is not None else (lambda j: {})


@dataclass
class Stats:
    """Streaming statistics over row blocks (Chan et al.'s parallel mean/variance update)."""

    count: int = 0
    nonfinite: int = 0
    mean: float = 0.0
    m2: float = 0.0
    min: float = math.inf
    max: float = -math.inf
    norm_min: float = math.inf
    norm_max: float = -math.inf

    def add(self, block: np.ndarray) -> None:
        b = block.astype(np.float64, copy=False)
        finite = np.isfinite(b)
        if not finite.all():
            self.nonfinite += int(b.size - finite.sum())
            b = np.where(finite, b, np.nan)
        vals = b[np.isfinite(b)]
        if vals.size:
            n_b = vals.size
            mean_b = float(vals.mean())
            m2_b = float(((vals - mean_b) ** 2).sum())
            delta = mean_b - self.mean
            total = self.count + n_b
            self.mean += delta * n_b / total
            self.m2 += m2_b + delta * delta * self.count * n_b / total
            self.count = total
            self.min = min(self.min, float(vals.min()))
            self.max = max(self.max, float(vals.max()))
        norms = np.sqrt(np.einsum("ij,ij->i", b, b))
        norms = norms[np.isfinite(norms)]
        if norms.size:
            self.norm_min = min(self.norm_min, float(norms.min()))
            self.norm_max = max(self.norm_max, float(norms.max()))

    def as_dict(self) -> dict[str, float | int | None]:
        fin = json_number
        return {
            "min": fin(self.min),
            "max": fin(self.max),
            "mean": self.mean if self.count else None,
            "std": math.sqrt(self.m2 / self.count) if self.count else None,
            "row_norm_min": fin(self.norm_min),
            "row_norm_max": fin(self.norm_max),
            "nonfinite": self.nonfinite,
        }


def table_stats(table: Table, progress: Progress | None = None) -> dict[str, float | int | None]:
    """min, max, mean, std (population) and the range of row norms, over finite values."""
    stats = Stats()
    for block in table.blocks(progress):
        stats.add(block)
    return stats.as_dict()


def header(table: Table) -> dict[str, Any]:
    """What a file or recipe is, without reading its data (like ``h5dump -H``)."""
    info = dict(table.info) if table.info else {"format": "computed from the recipe"}
    byte_order = info.pop("byte order", "little-endian" if sys.byteorder == "little" else "big-endian")
    return {
        "source": table.source,
        "shape": list(table.shape),
        "dtype": table.dtype_name,
        "byte_order": byte_order,
        "nbytes": table.nbytes,
        "storage": info,
        "recipe": table.recipe.to_metadata() if table.recipe is not None else None,
        "provenance": dict(table.provenance),
    }


#: Computed tables larger than this get no statistics by default: they would take minutes to
#: hours to compute, and a recipe's range is known anyway.  Files are always read in full.
MAX_COMPUTED_STATS = 1 << 28


#: Statistics read whole rows (for the row norms) and work in float64: a wider row gets none.
MAX_STATS_ROW_BYTES = 64 << 20


#: float64 copies of a block that :meth:`Stats.add` holds at once (the block, its finite values, squares).
STATS_COPIES = 4
_STATS_FIX = "look at rows with --rows or --pos instead (statistics read whole blocks of rows)"


def _stats_skipped(table: Table) -> str | None:
    """Why ``describe`` computes no statistics for ``table`` (None: it does)."""
    from pecli.resources import human_bytes

    n, d = table.shape
    if n == 0:
        return "no statistics: the table has no rows"
    if table.computed and n * d > MAX_COMPUTED_STATS:
        return (
            f"statistics skipped: the recipe makes {n * d:.3g} values; export it and inspect the file, "
            "or look at one position with --pos"
        )
    unstored = table.mostly_unstored()
    if unstored is not None:
        return f"statistics skipped: {unstored}; look at rows with --rows or --pos"
    row = d * table.dtype.itemsize
    if row > MAX_STATS_ROW_BYTES:
        return f"statistics skipped: one row is {human_bytes(row)}, and statistics read whole rows"
    return None


def describe(table: TableLike, progress: Progress | None = None) -> dict[str, Any]:
    """Header and statistics of a table (the statistics read every row once, in blocks)."""
    table = as_table(table, "the array")
    skipped = _stats_skipped(table)
    if skipped is not None:
        stats: dict[str, Any] = {k: None for k in Stats().as_dict()}
        stats["skipped"] = skipped
        return {**header(table), "stats": stats}
    # A block of rows and Stats.add's float64 copies of it (values, finite ones, squares).
    table.ensure_rows_fit(table.block_rows(), copies=STATS_COPIES, fix=_STATS_FIX)
    return {**header(table), "stats": table_stats(table, progress)}
