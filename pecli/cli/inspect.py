"""``pecli inspect``: look at a table, one position's vector, or the arrays inside a file."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from pecli.cli.app import EPILOG, App, PecliError
from pecli.cli.options import (
    PecliCommand,
    complete_source,
    input_format_option,
    json_option,
    pos_option,
    quiet_option,
    recipe_params,
    threads_option,
    view_options,
)
from pecli.cli.recipe_options import recipe_options
from pecli.cli.tables import echo_json, table_input

if TYPE_CHECKING:
    from pecli.table import Table


@click.command(
    cls=PecliCommand, epilog=EPILOG, short_help="Look at a table: its header, statistics and rows, or one position."
)
@click.argument("source", required=False, metavar="[SOURCE]", shell_complete=complete_source)
@recipe_options
@pos_option
@view_options
@click.option(
    "--heatmap",
    is_flag=True,
    help="Draw the table in the terminal: −1 black, 0 grey, 1 white (sampled to fit; the sampling is stated).",
)
@json_option
@input_format_option
@quiet_option
@threads_option
@click.pass_context
def inspect(
    ctx: click.Context,
    /,
    source: str | None,
    pos: int | None,
    rows: Any,
    cols: Any,
    decimals: int,
    heatmap: bool,
    as_json: bool,
    from_fmt: str | None,
    quiet: bool,
    **params: Any,
) -> None:
    """Look at a table: a file, one array of a file, or the table a recipe makes.

    SOURCE is a file, FILE:KEY or a recipe such as sinusoidal:len=120,dim=8 (or use the recipe
    options).  A file holding several arrays (a checkpoint) has them listed first.  Without
    --pos: a header (shape, dtype, byte order, storage, the stored recipe), statistics (min,
    max, mean, std, row norms) and the edge rows.  With --pos P: row P column by column; for a
    recipe also the frequency index i, sin or cos, ω_i, wavelength 2π/ω_i and the angle p·ω_i.

    \b
      pecli inspect --len 120 --dim 8 --pos 2
      pecli inspect pe.h5
      pecli inspect model.safetensors:embeddings.position_embeddings.weight --pos 0
      pecli inspect pe.npy --pos 2 --json
      pecli inspect --len 32 --dim 128 --start 1 --heatmap
    """
    app: App = ctx.obj
    if heatmap:
        if pos is not None or as_json:
            raise PecliError("--heatmap draws the whole table: drop --pos/--json (or use `pecli plot` for a file)")
        with table_input(ctx, source, params, from_fmt) as table:
            from pecli.analysis import heatmap_sample
            from pecli.views.inspect import heatmap_view

            width = app.out.width
            sample = heatmap_sample(table, max_rows=64, max_cols=max(8, width - 7))
            app.show(heatmap_view(table, sample, width))
        return
    from pecli.checkpoints import checkpoint_arrays

    arrays = None if source is None or recipe_params(ctx) else checkpoint_arrays(source, from_fmt)
    if arrays is not None and pos is None:
        from pecli.errors import FormatError
        from pecli.sources import split_file_key

        _show_arrays(app, source or "", arrays, as_json)
        try:
            from pathlib import Path

            from pecli.formats import choose_key

            choose_key(Path(split_file_key(source or "")[0]), None, arrays)
        except FormatError:
            return  # nothing to pick by default: the listing is the answer
        if as_json:
            return
        app.out.print()
    with table_input(ctx, source, params, from_fmt) as table:
        _inspect(app, table, pos, rows, cols, decimals, as_json)


def _show_arrays(app: App, source: str, arrays: list[Any], as_json: bool) -> None:
    if as_json:
        echo_json(
            {"source": source, "arrays": [{"key": a.key, "shape": list(a.shape), "dtype": a.dtype} for a in arrays]}
        )
        return
    from pecli.views.inspect import arrays_view

    app.show(arrays_view(source, arrays))


def _inspect(app: App, table: Table, pos: int | None, rows: Any, cols: Any, precision: int, as_json: bool) -> None:
    from pecli import inspection as d
    from pecli.dtypes import json_number
    from pecli.spans import window
    from pecli.views.inspect import describe_view
    from pecli.views.table import row_view, table_view

    if pos is not None:
        if rows is not None:
            raise PecliError("--rows and --pos exclude each other: --pos P explains one position")
        table.ensure_rows_fit(1)  # the one row, before it is read or computed
        details = d.row_details(table, pos, cols)
        if as_json:
            payload = {
                **d.header(table),
                "position": pos,
                "columns": [{**e, "value": json_number(e["value"])} for e in details],
            }
            echo_json(payload)
        else:
            app.show(row_view(table, pos, details, precision))
        return
    with app.progress(table.shape[0], "statistics", as_json) as advance:
        desc = d.describe(table, advance)
    # A header view shows a taste of the data: edge rows only, unless --rows asks for more.
    if as_json and cols is None and table.shape[1] > d.MAX_LISTED_COLUMNS:
        cols = (0, d.MAX_LISTED_COLUMNS)  # a window, not every column of a 5·10⁶-wide table (1.9 GB)
    win = window(table, rows, cols, threshold=0)
    if as_json:
        desc["window"] = {
            "positions": [None if r is None else table.start + r for r in win.row_ids],
            "columns": list(range(*win.col_range)),
            "columns_in_table": table.shape[1],
            "values": [None if r is None else [json_number(v) for v in win.values[r]] for r in win.row_ids],
        }
        echo_json(desc)
        return
    app.show(describe_view(desc, precision))
    app.out.print()
    app.show(table_view(app.width, table, win, precision)[1:])
