"""``pecli export``: write a table (a file's, or a recipe's) to a file for another framework or runtime."""

from __future__ import annotations

from typing import Any

import click

from pecli.cli.app import EPILOG, App
from pecli.cli.options import (
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
)
from pecli.cli.recipe_options import recipe_options
from pecli.cli.rows import chosen_rows, section
from pecli.cli.tables import split_params, table_input, write_output


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
      pecli export rope:len=4096,dim=128 --transpose -o cos_dim_first.npy
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
