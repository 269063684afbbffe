"""``pecli generate``: build a table from a recipe, and print it or write it."""

from __future__ import annotations

from typing import Any

import click

from pecli.cli.app import EPILOG, App
from pecli.cli.options import (
    OUTPUT_PARAMS,
    ROW_PARAMS,
    PecliCommand,
    output_options,
    positions_options,
    quiet_option,
    resample_options,
    threads_option,
    view_options,
)
from pecli.cli.recipe_options import recipe_options
from pecli.cli.rows import chosen_rows, section
from pecli.cli.tables import show_table, split_params, table_from_options, write_output


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
    rounded once to --dtype: float32 within 1 ulp of the exact value (correctly rounded in every
    value checked against mpmath), float16 and bfloat16 correctly rounded from the float64 table,
    float64 within 1 ulp below position 2**44 (a framework pipeline's bfloat16 is rounded from its
    float32 values, as torch does).
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

    app: App = ctx.obj
    out = split_params(params, OUTPUT_PARAMS)
    chosen = split_params(params, ROW_PARAMS)
    # A recipe whose one row cannot be computed is refused here, before any work (Table checks it).
    table = chosen_rows(table_from_options(ctx, params, ids_given=chosen["positions"] is not None), **chosen)
    if out["output"] is None:
        if out["transpose"]:
            raise click.UsageError("--transpose writes a file: add -o PATH (the terminal shows positions as rows)", ctx)
        show_table(app, table, rows, cols, decimals)
    else:
        table = section(table, rows, cols)
        table.ensure_streamable()  # before the output is opened: nothing is written
        write_output(app, table, out)
