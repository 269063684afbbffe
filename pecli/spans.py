"""Spans of positions or columns a user asks for (``--rows A:B``, ``--cols C:D``) as row and column
indices, and the window of a table a view shows.  Plain indices over anything with ``shape``,
``start`` and ``rows`` (:class:`Windowed`: a :class:`~pecli.table.Table` or a recipe), so nothing
here names either, even for typing: the views a table and a recipe show themselves with use it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from pecli.errors import PecliInputError

if TYPE_CHECKING:
    import numpy as np

Span = tuple[int | None, int | None]
"""A half-open span ``A:B`` of positions or columns; ``None`` means the table's edge."""


def resolve_span(span: Span | None, first: int, count: int, option: str) -> tuple[int, int]:
    """Turn a user span (in positions for rows, indices for columns) into ``[a, b)`` indices."""
    if span is None:
        return 0, count
    a = first if span[0] is None else span[0]
    b = first + count if span[1] is None else span[1]
    if not first <= a < b <= first + count:
        raise PecliInputError(
            f"{option} {'' if span[0] is None else span[0]}:{'' if span[1] is None else span[1]} is outside "
            f"{first}:{first + count} or empty: give A:B with {first} ≤ A < B ≤ {first + count}"
        )
    return a - first, b - first


class Windowed(Protocol):
    """What a window is taken of: a :class:`~pecli.table.Table` or a recipe."""

    @property
    def shape(self) -> tuple[int, int]: ...

    @property
    def start(self) -> int:
        """The position of row 0."""
        ...

    def rows(self, r0: int, r1: int) -> np.ndarray:
        """Rows ``[r0, r1)`` as an in-memory array."""
        ...


@dataclass(frozen=True)
class Window:
    """Rows picked for display: ``row_ids`` are row indices with ``None`` where rows are elided."""

    row_ids: list[int | None]
    values: dict[int, np.ndarray]
    row_range: tuple[int, int]
    col_range: tuple[int, int]
    summarised: bool


def window(
    table: Windowed,
    rows: Span | None = None,
    cols: Span | None = None,
    *,
    edgeitems: int = 3,
    threshold: int = 1000,
    max_rows: int = 10_000,
) -> Window:
    """The rows to show, NumPy style: all of them when the window has at most ``threshold``
    values, else the first and last ``edgeitems`` around an ellipsis.  An explicit ``rows``
    span is shown whole, up to ``max_rows``."""
    n, d = table.shape
    r0, r1 = resolve_span(rows, table.start, n, "--rows")
    c0, c1 = resolve_span(cols, 0, d, "--cols")
    count = r1 - r0
    if rows is not None and count > max_rows:
        from pecli.errors import TableTooLargeError

        raise TableTooLargeError(
            f"--rows asks for {count} rows, more than the {max_rows} a terminal view shows: "
            "use a narrower span or write the table with -o"
        )
    summarised = rows is None and count > 2 * edgeitems and count * (c1 - c0) > threshold
    if summarised:
        ids: list[int | None] = [*range(r0, r0 + edgeitems), None, *range(r1 - edgeitems, r1)]
        head, tail = table.rows(r0, r0 + edgeitems), table.rows(r1 - edgeitems, r1)
        values = {r0 + k: head[k, c0:c1] for k in range(edgeitems)}
        values.update({r1 - edgeitems + k: tail[k, c0:c1] for k in range(edgeitems)})
    else:
        ids = list(range(r0, r1))
        block = table.rows(r0, r1)
        values = {r0 + k: block[k, c0:c1] for k in range(count)}
    return Window(ids, values, (r0, r1), (c0, c1), summarised)
