"""The view of a table's values: a title line, the first and last rows in a grid cut to the
width, and what is hidden; one row column by column.  ``pecli generate`` and ``inspect`` print
it, and a notebook shows it for a :class:`~pecli.table.Table` or a recipe (``_repr_html_``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pecli.spans import window
from pecli.views.console import DECIMALS, ELLIPSIS, NOTEBOOK_WIDTH, Grid, Line, as_html, fmt_value, visible

if TYPE_CHECKING:
    from rich.console import RenderableType

    from pecli.recipe import Recipe
    from pecli.spans import Window
    from pecli.table import Table

#: How a reader picks another window: on the command line, and in a notebook.
CLI_PICK = "--rows A:B / --cols C:D pick a window"
NOTEBOOK_PICK = "Table.section(r0, r1, c0, c1) picks a window"


def title(table: Table) -> str:
    """``sinusoidal (120, 8) float32  base=10000 layout=interleaved start=0``, after the file name
    when the table was read from a file."""
    where = "" if table.computed else f"{table.source}  "
    return _heading(where, table.shape, table.dtype_name, table.positions is not None, table.recipe)


def _heading(where: str, shape: tuple[int, int], dtype: str, positions_given: bool, recipe: Recipe | None) -> str:
    n, d = shape
    head = f"({n}, {d}) {dtype}"
    if positions_given:
        head += "  at the positions given"
    if recipe is None:
        return visible(f"{where}{head}")
    return visible(f"{where}{recipe.kind} {head}  {recipe.describe(short=True)}")


@dataclass(frozen=True)
class Shown:
    """What the values view says around the values: its title line, what a row is (a position,
    unless the recipe says otherwise: ALiBi's bias has one row per head), each row's label, and
    how a reader picks another window."""

    title: str
    shape: tuple[int, int]
    label: str
    position_of: Callable[[int], int | float]
    pick: str

    @classmethod
    def of_table(cls, table: Table, pick: str = CLI_PICK) -> Shown:
        label = _row_label(table.recipe, table.shape)
        return cls(title(table), table.shape, label, table.position_of, pick)

    @classmethod
    def of_recipe(cls, recipe: Recipe, pick: str = NOTEBOOK_PICK) -> Shown:
        """A recipe's table as ``Table.from_recipe(recipe)`` shows it (rows are ``start + r``)."""
        shape = recipe.shape
        head = _heading("", shape, str(recipe.dtype), False, recipe)
        start = recipe.start
        return cls(head, shape, _row_label(recipe, shape), lambda r: start + r, pick)


def _row_label(recipe: Recipe | None, shape: tuple[int, int]) -> str:
    label = "pos" if recipe is None else recipe.row_label
    return "row" if label == "head" and shape[0] == 1 else label


def _window_grid(
    win: Window,
    cols: list[int | None],
    position_of: Callable[[int], int | float],
    cells: dict[int, list[str]],
    label: str = "pos",
) -> Grid:
    heads = [label, *(ELLIPSIS if c is None else str(c) for c in cols)]
    rows = []
    for k, r in enumerate(win.row_ids):
        if r is None:
            rows.append([ELLIPSIS] * len(heads))
        else:
            rows.append([str(position_of(r)), *(ELLIPSIS if c is None else cells[c][k] for c in cols)])
    return Grid(heads, rows, bold=0)


def table_view(width: int, table: Table, win: Window, precision: int) -> list[RenderableType]:
    """What ``pecli generate`` and ``inspect`` print of ``table``: :func:`values_view`."""
    return values_view(width, Shown.of_table(table), win, precision)


def values_view(width: int, shown: Shown, win: Window, precision: int) -> list[RenderableType]:
    """The header line, the grid (columns cut to the console's ``width`` around an ellipsis) and,
    when anything is hidden, a line saying what is shown."""
    c0, c1 = win.col_range
    # Every column takes at least 3 characters, so no more than width // 3 from each edge can show:
    # only those are formatted (a table a million columns wide must not format a million cells).
    edge = width // 3 + 1
    candidates = range(c0, c1) if c1 - c0 <= 2 * edge else [*range(c0, c0 + edge), *range(c1 - edge, c1)]
    # Each column's cells, formatted once (the width search below only adds up widths).
    cells = {
        c: [ELLIPSIS if r is None else fmt_value(win.values[r][c - c0], precision) for r in win.row_ids]
        for c in candidates
    }
    pos_width = max([3, len(ELLIPSIS)] + [len(str(shown.position_of(r))) for r in win.row_ids if r is not None])
    col_width = {c: max([len(str(c)), *(len(x) for x in cells[c])]) for c in cells}

    def width_of(trial: list[int | None]) -> int:
        return pos_width + sum(2 + (1 if c is None else col_width[c]) for c in trial)

    cols: list[int | None] = list(range(c0, c1))
    limit = width
    if c1 - c0 > 2 * edge or width_of(cols) > limit:
        # Largest k with k leading and k trailing columns that still fits.
        lo, hi = 1, min((c1 - c0) // 2, edge)
        while lo < hi:
            k = (lo + hi + 1) // 2
            if width_of([*range(c0, c0 + k), None, *range(c1 - k, c1)]) <= limit:
                lo = k
            else:
                hi = k - 1
        cols = [*range(c0, c0 + lo), None, *range(c1 - lo, c1)]
    grid = _window_grid(win, cols, shown.position_of, cells, shown.label)
    out: list[RenderableType] = [Line(shown.title), grid]
    if win.summarised or None in cols:
        n, d = shown.shape
        shown_r = sum(r is not None for r in win.row_ids)
        shown_c = sum(c is not None for c in cols)
        out.append(Line(f"showing {shown_r} of {n} rows, {shown_c} of {d} columns: {shown.pick}", "dim"))
    return out


def row_view(table: Table, pos: int, details: list[dict[str, Any]], precision: int) -> list[RenderableType]:
    from rich.text import Text

    explained = any("fn" in e for e in details)
    heads = ["col", "i", "fn", "ω_i", "wavelength", "angle (rad)", "value"] if explained else ["col", "value"]
    rows = []
    for e in details:
        value = fmt_value(e["value"], precision)
        if explained:
            known = "omega" in e  # a zero column (odd=zero) or the padding row has no frequency
            rows.append(
                [
                    str(e["col"]),
                    str(e["i"]) if known else "",
                    e.get("fn", "zero"),
                    f"{e['omega']:.6g}" if known else "",
                    f"{e['wavelength']:.6g}" if known else "",
                    f"{e['angle']:.6g}" if known else "",
                    value,
                ]
            )
        else:
            rows.append([str(e["col"]), value])
    return [Text(f"{title(table)}  position {pos}"), Grid(heads, rows, left={2} if explained else set())]


def table_html(table: Table) -> str:
    """What ``pecli generate``/``inspect`` print of ``table`` (first and last rows, the columns that
    fit 100 characters, ``--decimals`` 4), as HTML: a notebook shows a table so."""
    return as_html(values_view(NOTEBOOK_WIDTH, Shown.of_table(table, NOTEBOOK_PICK), window(table), DECIMALS))


def recipe_html(recipe: Recipe) -> str:
    """:func:`table_html` of the table ``recipe`` computes (only the rows shown are computed)."""
    return as_html(values_view(NOTEBOOK_WIDTH, Shown.of_recipe(recipe), window(recipe), DECIMALS))
