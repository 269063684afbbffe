"""Tables stored the other way round: ``(columns, rows)``, positions along the columns.

Some runtimes keep a cache as ``(dim, positions)`` (a channels-first layout, ``pe.T`` saved by
hand).  ``export --transpose`` / ``generate --transpose`` write a table that way
(:func:`transposed`); ``identify`` tells when a table it cannot name is the transpose of one it
can (:func:`transposed_note`), and when a 3-D array it cannot name is a channels-first map
``(C, H, W)`` of one (:func:`channels_first_note`: DETR's sine maps); ``diff`` names a transposition as a cause
(:mod:`pecli.diff.transforms`).  A transposed table is built whole in memory, and its file keeps
no recipe: the recipe's shape is the other one, and a stored recipe must describe the data as it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from pecli.table import Table

#: The largest table ``identify`` also tries transposed (values), and the most rows it may have
#: (the transpose's width, a model width: identify's time grows with the width): a second identify,
#: so kept small.
TRY_TRANSPOSED_VALUES, TRY_TRANSPOSED_ROWS = 1 << 20, 4096
#: The largest 3-D array identify also reads channels-first (values, read whole: LoFTR's default
#: 256×256 map of 256 channels, 64 MB in float32); its rows are many, its width the channels.
TRY_CHANNELS_FIRST_VALUES = 1 << 24


def transposed(table: Table) -> Table:
    """``table``'s transpose, ``(columns, rows)``, built whole (refused with the fix when it cannot
    fit in memory); a recipe's table loses its recipe (the file says ``recipe: none``)."""
    n, d = table.shape
    table.ensure_rows_fit(n, fix="write fewer rows with --rows, or leave out --transpose")
    values = np.ascontiguousarray(np.asarray(table.rows(0, n)).T)
    flipped = Table.from_array(values, f"{table.source} transposed")
    flipped.info["note"] = f"the transpose of {table.source} ({n}×{d}): positions along the columns"
    # A CSV header of the positions its columns hold (p1000,p1001,… for --start 1000).
    flipped.info["column names"] = [f"p{table.position_of(r)}" for r in range(n)]
    return flipped


def _named(other: Table, identify: Callable[..., Any]) -> Any:
    """The candidate ``identify`` proves for ``other`` (another reading of a table it could not
    name), or None: a MATCH only."""
    found = identify(other, flip=False)
    return found.best if found.verdict == "match" else None


def transposed_note(table: Table, identify: Callable[..., Any]) -> str | None:
    """When ``table`` (small) is the transpose of a table ``identify`` (given by the identification
    module, which imports this one) names: a note saying so, with the command that rebuilds it; else
    None.  The verdict stays the table's own: no recipe builds it as it is."""
    n, d = table.shape
    if not (2 <= n <= TRY_TRANSPOSED_ROWS and d >= 2 and n * d <= TRY_TRANSPOSED_VALUES):
        return None

    best = _named(transposed(table), identify)
    if best is None:
        return None
    return (
        f"its transpose ({d}×{n}, positions along the rows) matches {best.recipe.describe()} "
        f"({best.how_close()}): the file holds (columns, positions); rebuild it with "
        f"pecli export '{best.spec}' --transpose -o FILE"
    )


def stored_shape(info: Mapping[str, Any]) -> tuple[int, ...] | None:
    """The shape an array had before it was read as ``(rows, width)`` (its ``reshaped`` fact,
    ``(256, 25, 34) → (6400, 34)``), or None for a 2-D one."""
    found = re.match(r"\(([\d, ]+)\) →", str(info.get("reshaped", "")))
    return tuple(int(s) for s in found.group(1).split(",") if s.strip()) if found else None


def channels_first_note(table: Table, identify: Callable[..., Any]) -> str | None:
    """When ``table`` (small) was stored as a channels-first map ``(C, H, W)`` (leading axes of 1
    dropped; read as ``C·H`` rows of ``W``) whose ``(H·W, C)`` reading ``identify`` names (DETR's
    ``PositionEmbeddingSine`` returns ``(1, C, H, W)``): a note saying so, with the command that
    rebuilds it; else None."""
    shape = stored_shape(table.info) or ()
    while len(shape) > 3 and shape[0] == 1:  # (1, C, H, W): the batch axis, as the reader drops it
        shape = shape[1:]
    if len(shape) != 3:
        return None
    c, h, w = shape
    if not (2 <= c <= TRY_TRANSPOSED_ROWS and h * w >= 2 and c * h * w <= TRY_CHANNELS_FIRST_VALUES):
        return None
    values = np.ascontiguousarray(np.asarray(table.rows(0, table.shape[0])).reshape(c, h * w).T)
    best = _named(Table.from_array(values, f"{table.source} read channels-first"), identify)
    if best is None:
        return None
    return (
        f"read channels-first, ({c}, {h}, {w}) as {h * w}×{c} (a row per cell, h-major), it matches "
        f"{best.recipe.describe()} ({best.how_close()}): the file holds (channels, H, W); rebuild it with "
        f"pecli export '{best.spec}' --transpose -o FILE, then reshape to ({c}, {h}, {w})"
    )
