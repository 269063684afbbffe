"""``pecli analyze``: what a table measures (similarity decay, relative-position residual, wavelengths)."""

from __future__ import annotations

import math
from typing import Any

import click

from pecli.cli.app import EPILOG, App, PecliError
from pecli.cli.options import (
    PecliCommand,
    complete_source,
    input_format_option,
    json_option,
    max_k_option,
    quiet_option,
    threads_option,
)
from pecli.cli.paramtypes import IntListType
from pecli.cli.recipe_options import recipe_options
from pecli.cli.tables import echo_json, table_input


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
    from pecli.views.analyze import analysis_view

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
