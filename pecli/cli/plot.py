"""``pecli plot``: draw a table as a picture (PNG or SVG, with matplotlib)."""

from __future__ import annotations

from typing import Any

import click

from pecli.cli.app import EPILOG, App
from pecli.cli.options import (
    FactOption,
    PecliCommand,
    complete_file,
    complete_source,
    force_option,
    input_format_option,
    max_k_option,
    output_help,
    quiet_option,
    threads_option,
)
from pecli.cli.paramtypes import IntListType
from pecli.cli.recipe_options import recipe_options
from pecli.cli.tables import table_input


@click.command(cls=PecliCommand, epilog=EPILOG, short_help="Draw a table as a PNG or SVG picture (needs matplotlib).")
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
    """Draw a table as a picture (PNG or SVG; needs matplotlib: the plot extra, pip install '.[plot]' in a checkout).

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
