"""Tables stored the other way round: ``(columns, rows)``, positions along the columns.

Some runtimes keep a cache as ``(dim, positions)`` (a channels-first layout, ``pe.T`` saved by
hand).  ``export --transpose`` / ``generate --transpose`` write a table that way
(:func:`transposed`); ``identify`` tells when a table it cannot name is the transpose of one it
can (:func:`transposed_note`); ``diff`` names a transposition as a cause
(:mod:`pecli.diff.transforms`).  A transposed table is built whole in memory, and its file keeps
no recipe: the recipe's shape is the other one, and a stored recipe must describe the data as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pecli.table import Table

#: The largest table ``identify`` also tries transposed (values), and the most rows it may have
#: (the transpose's width, a model width: identify's time grows with the width): a second identify,
#: so kept small.
TRY_TRANSPOSED_VALUES, TRY_TRANSPOSED_ROWS = 1 << 20, 4096


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


def transposed_note(table: Table, identify: Callable[..., Any]) -> str | None:
    """When ``table`` (small) is the transpose of a table ``identify`` (given by the identification
    module, which imports this one) names: a note saying so, with the command that rebuilds it; else
    None.  The verdict stays the table's own: no recipe builds it as it is."""
    n, d = table.shape
    if not (2 <= n <= TRY_TRANSPOSED_ROWS and d >= 2 and n * d <= TRY_TRANSPOSED_VALUES):
        return None

    found = identify(transposed(table), flip=False)
    if found.verdict != "match" or found.best is None:
        return None
    best = found.best
    return (
        f"its transpose ({d}×{n}, positions along the rows) matches {best.recipe.describe()} "
        f"({best.how_close()}): the file holds (columns, positions); rebuild it with "
        f"pecli export '{best.spec}' --transpose -o FILE"
    )
