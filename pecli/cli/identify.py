"""``pecli identify``: name the recipe that made a table, proved on every row."""

from __future__ import annotations

from typing import Any

import click

from pecli.cli.app import EPILOG, App
from pecli.cli.options import (
    PecliCommand,
    alias_option,
    complete_source,
    input_format_option,
    json_option,
    quiet_option,
    recipe_params,
    threads_option,
    top_option,
)
from pecli.cli.recipe_options import recipe_options
from pecli.cli.tables import echo_json, table_input


@click.command(cls=PecliCommand, epilog=EPILOG, short_help="Which recipe made this table? Proved on every row.")
@click.argument("source", required=False, metavar="[SOURCE]", shell_complete=complete_source)
@recipe_options
@top_option(5, 1)
@alias_option("--nearest", type=click.IntRange(1, 1000), target="top", use="--top")
@json_option
@input_format_option
@quiet_option
@threads_option
@click.pass_context
def identify(
    ctx: click.Context, /, source: str | None, top: int, as_json: bool, from_fmt: str | None, quiet: bool, **params: Any
) -> None:
    """Which recipe made this table?  Tries every kind and preset, then proves the answer.

    Each kind fits its parameters to the data: sinusoidal layout, base, frequency rule, start,
    padding row and pipeline; 2-D/3-D grid, order and temperature; RoPE part (cos, sin, angle,
    inv_freq), layout, θ and scaling; ALiBi slopes or bias.  Vectors and (X, Y, C) grids are
    read as the frameworks save them.  A MATCH is printed only after the whole table has been
    compared with the rebuild, as `pecli diff` compares it; the command that confirms it is
    printed too (`check it with`), with every other name that builds the same table, and the
    line says which match it is: bit for bit, within the rounding of the table's dtype, or
    within the named float32 pipeline's envelope (its size given).  Otherwise
    CLOSE (within a float32 pipeline's rounding), LEARNED (random-looking, like a learned table
    at initialisation: described, never matched) or NO KNOWN RECIPE with the nearest candidates.
    Exit status 0 whatever the verdict (2 on error).

    A multi-array file named without :KEY (a checkpoint: .safetensors, .npz, .h5, .pt, a GGUF
    file without RoPE keys) is scanned, the file opened once: each positional array is named, the
    others skipped by their name, dtype and first row (read no further).

    \b
      pecli identify checkpoint.safetensors:embed_positions.weight
      pecli identify rope_cos.npy --json
      pecli identify model.safetensors     every positional array of a checkpoint
    """
    from pecli.checkpoints import checkpoint_arrays
    from pecli.identification import identify as find
    from pecli.views.identify import identify_view

    app: App = ctx.obj
    arrays = checkpoint_arrays(source, from_fmt) if source is not None and not recipe_params(ctx) else None
    if arrays is not None:  # a checkpoint: each positional array, one at a time
        _identify_checkpoint(app, str(source), from_fmt, arrays, as_json)
        return
    with table_input(ctx, source, params, from_fmt) as table:
        with app.progress(table.shape[0], "proving", as_json) as advance:
            found = find(table, nearest=top, progress=advance)
    if as_json:
        echo_json(found.to_dict(), allow_nan=False)
    else:
        app.show(identify_view(found))


def _identify_checkpoint(app: App, source: str, fmt: str | None, arrays: list[Any], as_json: bool) -> None:
    from pecli.checkpoints import scan
    from pecli.sources import split_file_key
    from pecli.views.checkpoints import checkpoint_view

    with app.progress(len(arrays), "scanning", as_json) as advance:
        entries = list(scan(split_file_key(source)[0], fmt, arrays, advance))
    if as_json:
        echo_json({"source": source, "arrays": [e.to_dict() for e in entries]}, allow_nan=False)
    else:
        app.show(checkpoint_view(source, entries))
