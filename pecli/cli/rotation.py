"""``pecli rotation``: which rotary cache turned activations BEFORE into AFTER (:mod:`pecli.rotation`)."""

from __future__ import annotations

from typing import Any

import click

from pecli.cli.app import EPILOG, App
from pecli.cli.options import PecliCommand, complete_source, input_format_option, json_option, quiet_option
from pecli.cli.tables import echo_json


@click.command(cls=PecliCommand, epilog=EPILOG, short_help="Which rotary cache turned BEFORE into AFTER?")
@click.argument("before", metavar="BEFORE", shell_complete=complete_source)
@click.argument("after", metavar="AFTER", shell_complete=complete_source)
@click.option(
    "--expected",
    metavar="SOURCE",
    shell_complete=complete_source,
    help="A rope recipe (or preset, or model config) the model should rotate with: say how the rotation differs.",
)
@click.option(
    "--split-heads",
    "heads",
    type=click.IntRange(1),
    default=None,
    metavar="H",
    help="Rows per position when the files hold (positions × H, head_dim) rows (H heads). "
    "Default: the stored array's shape (positions, heads, head_dim), else 1.",
)
@json_option
@input_format_option
@quiet_option
@click.pass_context
def rotation(
    ctx: click.Context,
    /,
    before: str,
    after: str,
    expected: str | None,
    heads: int | None,
    as_json: bool,
    from_fmt: str | None,
    quiet: bool,
) -> None:
    """Which rotary cache turned BEFORE into AFTER, read from the activations themselves.

    BEFORE and AFTER are q (or k) before and after the rotary embedding, of shape (positions,
    head_dim) or (positions, heads, head_dim), row p at position p.  pecli finds the rotated dims
    (the partial rotary width), how they pair (half: k with k+r/2, transformers' rotate_half;
    pairs: 2k with 2k+1, GPT-J's rotate_every_two) by which pairing keeps every pair's length,
    each pair's angle at each position, and the cache that makes them, proved by rotating BEFORE
    with it.  A cos/sin cache equal to the model's byte for byte can still be applied wrongly:
    this sees it.  With --expected RECIPE it says how the rotation differs from that recipe's
    ("pairs (A) vs half (B) on dims 0–31").  Exit status 0, 1 when --expected differs, 2 on
    error (also "not a rotation: …", with the measured evidence).

    \b
      pecli rotation q.npy q_rot.npy
      pecli rotation q.npy q_rot.npy --expected rope:len=64,dim=128,base=500000
    """
    import numpy as np

    from pecli.rotation import differences, rotation_of
    from pecli.sources import open_source

    app: App = ctx.obj
    arrays = []
    for source in (before, after):
        with open_source(source, from_fmt) as table:
            values = np.asarray(table)  # the whole activations, refused when they cannot fit in memory
            arrays.append(_positions_heads_dims(values, table.info, heads))
    found = rotation_of(*arrays)
    said: list[str] = []
    if expected is not None:
        with open_source(expected, None) as table:
            if table.recipe is None:
                raise click.BadParameter(f"{expected} is a file: give a recipe such as rope:len=64,dim=128", ctx)
            said = differences(found, table.recipe)
    if as_json:
        echo_json({**found.to_dict(), "differences": said if expected is not None else None}, allow_nan=False)
    else:
        lines = [f"AFTER is BEFORE {found.describe()}"]
        lines.append(f"pairs' lengths kept to {found.norm_change:.2g} of the largest squared value")
        if found.recipe is not None:
            lines.append(f"cache            {found.recipe.spec()}")
            lines.append(f"proved           rotating BEFORE with it gives AFTER within max |Δ| {found.max_abs:.3g}")
        else:
            lines.append(
                f"cache            no known recipe rotates BEFORE into AFTER (closest max |Δ| {found.max_abs:.3g})"
            )
        if expected is not None:
            lines.append("vs expected      " + ("; ".join(said) if said else "the same rotation"))
        from pecli.views.console import Line

        app.show([Line(line) for line in lines])
    ctx.exit(1 if said else 0)


def _positions_heads_dims(values: Any, info: dict[str, Any], heads: int | None) -> Any:
    """Rows as (positions, heads, head_dim): ``heads`` given, else the stored shape's second axis."""
    n, d = values.shape
    if heads is None:
        from pecli.transposition import stored_shape

        stored = stored_shape(info)
        heads = stored[1] if stored is not None and len(stored) == 3 else 1
    if n % heads:
        raise click.BadParameter(f"{n} rows do not split into {heads} heads per position", param_hint="--split-heads")
    return values.reshape(n // heads, heads, d)
