"""``pecli generate`` and ``pecli export``: make a table and print it or write it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from pecli.cli.app import (
    EPILOG,
    App,
    PecliError,
    recipe_from_options,
    show_table,
    split_params,
    table_input,
    write_output,
)
from pecli.options import (
    OUTPUT_PARAMS,
    ROW_PARAMS,
    PecliCommand,
    complete_source,
    from_option,
    output_options,
    positions_options,
    quiet_option,
    recipe_params,
    resample_options,
    span_options,
    threads_option,
    view_options,
)
from pecli.recipe_options import recipe_options

if TYPE_CHECKING:
    from pecli.table import Table


@click.command(cls=PecliCommand, epilog=EPILOG)
@recipe_options
@view_options
@positions_options
@resample_options
@output_options
@quiet_option
@threads_option
@click.pass_context
def generate(ctx: click.Context, /, rows: Any, cols: Any, decimals: int, quiet: bool, **params: Any) -> None:
    """Build a table from a recipe: print it, or write it with -o.

    With --compute exact (the default) the angle p·ω_i is carried in double-double precision and
    rounded once to --dtype: float32, float16 and bfloat16 are correctly rounded, float64 is
    within 1 ulp below position 2**44 (a framework pipeline's bfloat16 is rounded from its float32
    values, as torch does).
    --preset NAME reproduces a framework's own table, pipeline included (`pecli presets`).

    \b
      pecli generate --len 120 --dim 8
      pecli generate --len 120 --dim 8 --rows 0:4
      pecli generate --len 2048 --dim 512 --layout split -o pe.safetensors
      pecli generate --preset fairseq --len 2048 --dim 512 -o fairseq.npy
      pecli generate --preset mae --grid 14x14 --dim 768 -o mae.npy
      pecli generate --len 120 --dim 8 -o - --to csv > pe.csv
      pecli generate --len 4096 --dim 512 --rows 0:128 -o head.npy
      pecli generate --len 512 --dim 64 --positions 0:3,0:2
      pecli generate --preset fairseq --len 64 --dim 16 --token-ids @batch.npy -o pe.npy
    """
    from pecli.table import Table

    app: App = ctx.obj
    out = split_params(params, OUTPUT_PARAMS)
    chosen = split_params(params, ROW_PARAMS)
    # A recipe whose one row cannot be computed is refused here, before any work (Table checks it).
    recipe = recipe_from_options(ctx, params, ids_given=chosen["positions"] is not None)
    table = chosen_rows(Table.from_recipe(recipe), **chosen)
    if out["output"] is None:
        show_table(app, table, rows, cols, decimals)
    else:
        table = section(table, rows, cols)
        table.ensure_streamable()  # before the output is opened: nothing is written
        write_output(app, table, out)


@click.command(cls=PecliCommand, epilog=EPILOG)
@click.argument("source", required=False, metavar="[SOURCE]", shell_complete=complete_source)
@recipe_options
@span_options
@positions_options
@resample_options
@output_options
@from_option
@quiet_option
@threads_option
@click.pass_context
def export(
    ctx: click.Context, /, source: str | None, rows: Any, cols: Any, from_fmt: str | None, quiet: bool, **params: Any
) -> None:
    """Write a table to a file for another framework or runtime.

    SOURCE is a file, FILE:KEY (an array inside .h5/.npz/.safetensors/.pt) or a recipe such as
    sinusoidal:len=2048,dim=512; without SOURCE the recipe options apply.  Conversion is bit-exact
    when the dtype is unchanged; --dtype converts (a recipe is rebuilt in the new dtype, file
    data is cast and the metadata records the dtype it came from).  The recipe travels with the
    table in every format that can hold it.

    \b
      pecli export --len 2048 --dim 512 -o pe.safetensors --key pos_embed
      pecli export pe.h5 -o pe.npz
      pecli export model.safetensors:wpe.weight -o wpe.csv
      pecli export pe.npy -o pe.h --dtype float32
      pecli export pe.npy --rows 0:512 --cols 0:64 -o head.npy
      pecli export vit.safetensors:pos_embed --resample 24x24 -o pos_embed_384.safetensors
    """
    app: App = ctx.obj
    out = split_params(params, OUTPUT_PARAMS)
    chosen = split_params(params, ROW_PARAMS)
    if out["output"] is None:
        raise click.UsageError("Missing option -o/--output: give the file to write (or - for stdout).", ctx)
    dtype_given = "dtype" in recipe_params(ctx)
    ids_given = chosen["positions"] is not None
    with table_input(ctx, source, params, from_fmt, allow=("dtype",), ids_given=ids_given) as table:
        if source is not None and dtype_given:
            from pecli.table import ensure_values_fit

            table.ensure_streamable()
            # Values beyond the new dtype's range are refused before anything is written.
            ensure_values_fit(table, params["dtype"])
            table = table.converted(params["dtype"])
        table = section(chosen_rows(table, **chosen), rows, cols)
        table.ensure_streamable()
        write_output(app, table, out)


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
    from pecli.inspection import resolve_span

    r0, r1 = resolve_span(rows, table.start, table.shape[0], "--rows")
    c0, c1 = resolve_span(cols, 0, table.shape[1], "--cols")
    return table.section(r0, r1, c0, c1)
