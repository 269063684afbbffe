"""``pecli identify``, ``pecli analyze`` and ``pecli plot``: what made a table, what it measures, how it looks."""

from __future__ import annotations

import math
from typing import Any

import click

from pecli.cli.app import EPILOG, App, PecliError, echo_json, table_input
from pecli.options import (
    FactOption,
    PecliCommand,
    alias_option,
    complete_file,
    complete_source,
    force_option,
    input_format_option,
    json_option,
    max_k_option,
    output_help,
    quiet_option,
    threads_option,
    top_option,
)
from pecli.paramtypes import IntListType
from pecli.recipe_options import recipe_options


@click.command(cls=PecliCommand, epilog=EPILOG)
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

    \b
      pecli identify checkpoint.safetensors:embed_positions.weight
      pecli identify rope_cos.npy --json
    """
    from pecli.identification import identify as find
    from pecli.render import identify_view

    app: App = ctx.obj
    with table_input(ctx, source, params, from_fmt) as table:
        with app.progress(table.shape[0], "proving", as_json) as advance:
            found = find(table, nearest=top, progress=advance)
    if as_json:
        echo_json(found.to_dict(), allow_nan=False)
    else:
        app.show(identify_view(found))


@click.command(cls=PecliCommand, epilog=EPILOG)
@click.argument("source", required=False, metavar="[SOURCE]", shell_complete=complete_source)
@recipe_options
@max_k_option
@click.option(
    "--ks",
    type=IntListType("1,8,64"),
    default="1,2,4,8,16,64",
    show_default=True,
    help="Offsets k for the relative-position residual.",
)
@json_option
@input_format_option
@quiet_option
@threads_option
@click.pass_context
def analyze(
    ctx: click.Context,
    /,
    source: str | None,
    max_k: int | None,
    ks: list[int],
    as_json: bool,
    from_fmt: str | None,
    quiet: bool,
    **params: Any,
) -> None:
    """The properties the papers describe, measured on a table.

    Decay: mean PE(p)·PE(p+k) and mean cosine similarity against k (the long-range decay).
    Relative position: the residual of the best linear map R_k with PE(p+k) ≈ R_k·PE(p) over
    all p — about machine precision for an exact sinusoidal table, large for a learned or broken
    one.  Wavelengths: 2π/ω of each column (from the recipe, or measured from the data).

    \b
      pecli analyze --len 512 --dim 128
      pecli analyze pe.npy --ks 1,8,64 --json
    """
    from pecli import analysis
    from pecli.render import analysis_view

    app: App = ctx.obj
    with table_input(ctx, source, params, from_fmt) as table:
        n = table.shape[0]
        if n < 2:
            raise PecliError(f"the table has {n} row: the properties need at least 2 positions")
        decay = analysis.decay(table, min(max_k or analysis.default_max_k(n), n - 1))
        residual = analysis.relative_residual(table, sorted({k for k in ks if 0 < k < n}))
        known = table.recipe.wavelengths() if table.recipe is not None else None
        waves = known if known is not None else analysis.estimate_wavelengths(table).wavelength
    if as_json:
        payload = {
            "decay": decay.to_dict(),
            "relative_residual": residual.to_dict(),
            "wavelengths": [float(w) if math.isfinite(float(w)) else None for w in waves],
        }
        echo_json(payload, allow_nan=False)
    else:
        app.show(analysis_view(table, decay, residual, waves))


@click.command(cls=PecliCommand, epilog=EPILOG)
@click.argument("source", required=False, metavar="[SOURCE]", shell_complete=complete_source)
@recipe_options
@click.option(
    "-o", "--output", required=True, metavar="PATH", cls=FactOption, facts=output_help, shell_complete=complete_file
)
@click.option(
    "--what",
    type=click.Choice(["heatmap", "curves", "decay"]),
    default="heatmap",
    show_default=True,
    help="heatmap: the table (position × dimension) with a colour bar; curves: chosen dimensions "
    "across positions; decay: similarity against the offset k.",
)
@click.option(
    "--dims", type=IntListType("0,32,64"), default=None, help="curves: the dimensions to draw (default 0, d/4, d/2)."
)
@max_k_option
@force_option
@input_format_option
@quiet_option
@threads_option
@click.pass_context
def plot(
    ctx: click.Context,
    /,
    source: str | None,
    output: str,
    what: str,
    dims: list[int] | None,
    max_k: int | None,
    force: bool,
    from_fmt: str | None,
    quiet: bool,
    **params: Any,
) -> None:
    """Draw a table as a picture (PNG or SVG; needs matplotlib: pip install matplotlib).

    \b
      pecli plot --len 32 --dim 128 --start 1 -o heatmap.png
      pecli plot --len 512 --dim 128 --what curves --dims 0,32,64 -o curves.svg
      pecli plot pe.npy --what decay -o decay.png
    """
    from pecli import plot as plots

    app: App = ctx.obj
    with table_input(ctx, source, params, from_fmt) as table:
        if what == "heatmap":
            done = plots.heatmap(table, output, force=force)
        elif what == "curves":
            done = plots.curves(table, output, dims, force=force)
        else:
            done = plots.decay_plot(table, output, max_k, force=force)
    if not quiet:
        app.err.print(f"wrote {done.path} ({done.size[0]}×{done.size[1]} px; {done.description})", soft_wrap=True)
