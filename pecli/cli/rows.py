"""Which rows ``generate`` and ``export`` write: ``--resample``, ``--positions``/``--token-ids``, and
``--rows``/``--cols``, each calling the library's own function (:mod:`pecli.resample`,
:mod:`pecli.positions`, :meth:`pecli.Table.section`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pecli.cli.app import PecliError

if TYPE_CHECKING:
    from pecli.table import Table


def chosen_rows(
    table: Table,
    positions: str | None,
    token_ids: str | None,
    resample: str | None,
    resample_from: str | None,
    prefix_tokens: int | None,
    interpolation: str,
    antialias: bool,
) -> Table:
    """The rows --resample and then --positions/--token-ids make of ``table`` (itself without them)."""
    table = resampled(table, resample, resample_from, prefix_tokens, interpolation, antialias)
    return at_positions(table, positions, token_ids)


def resampled(table: Table, to: str | None, grid: str | None, prefix: int | None, mode: str, antialias: bool) -> Table:
    """The table resized by --resample (the table itself without it)."""
    if to is None:
        if grid is not None or prefix is not None:
            raise PecliError(
                "--resample-from and --prefix-tokens describe the table for --resample: add --resample HxW"
            )
        return table
    from pecli.resample import parse_grid, resample_table

    old = parse_grid(grid, "--resample-from") if grid is not None else None
    return resample_table(table, parse_grid(to, "--resample"), old, prefix, mode, antialias)  # type: ignore[arg-type]


def at_positions(table: Table, positions: str | None, token_ids: str | None) -> Table:
    """The rows --positions or --token-ids name (the table itself when neither is given)."""
    if positions is None and token_ids is None:
        return table  # pecli.positions (and pathlib with it) need not load
    from pecli.positions import rows_at_positions

    return rows_at_positions(table, positions, token_ids)


def section(table: Table, rows: Any, cols: Any) -> Table:
    """The part of ``table`` that --rows (positions) and --cols select, for writing."""
    from pecli.spans import resolve_span

    r0, r1 = resolve_span(rows, table.start, table.shape[0], "--rows")
    c0, c1 = resolve_span(cols, 0, table.shape[1], "--cols")
    return table.section(r0, r1, c0, c1)
