"""``pecli diff``: compare two tables and say why they differ."""

from __future__ import annotations

from typing import Any

import click

from pecli.cli.app import EPILOG, App
from pecli.cli.options import (
    PecliCommand,
    complete_source,
    from_option,
    json_option,
    quiet_option,
    threads_option,
    tolerance_options,
)
from pecli.cli.tables import echo_json


@click.command(cls=PecliCommand, epilog=EPILOG)
@click.argument("a", metavar="A", shell_complete=complete_source)
@click.argument("b", metavar="B", shell_complete=complete_source)
@tolerance_options
@json_option
@click.option("-s", "--brief", is_flag=True, help="Print nothing on stdout; the exit status says it all (like cmp -s).")
@from_option
@quiet_option
@threads_option
@click.pass_context
def diff(
    ctx: click.Context,
    /,
    a: str,
    b: str,
    atol: float,
    rtol: float,
    ulps: int,
    equal_nan: bool,
    top: int,
    as_json: bool,
    brief: bool,
    from_fmt: str | None,
    quiet: bool,
) -> None:
    """Compare table A against the reference B, and say why they differ.

    A and B are SOURCEs: files, FILE:KEY, recipes such as sinusoidal:len=120,dim=8, or a model's
    config.json or GGUF file (the cache it implies; the keys that differ are named).  Exact by
    default; with --atol/--rtol an element matches when |a−b| ≤ atol + rtol·|b|, B being the
    reference (NumPy's isclose); with --ulps N also when at most N values of the narrower dtype lie
    between a and b (bfloat16 when both hold bfloat16 values, files read as float32 too). The report
    starts with a verdict, then shape, dtype and metadata differences, the count of elements outside
    tolerance, max abs/rel/ulp differences with where they are, RMS, and the likely cause, in the
    words of the table's own kind: rounding or a storage dtype; the recipe parameters that had to
    change (one side's recipe, the other table fitted by its kind: base, scaling, part, layout,
    attention factor, start, 2-D order, ALiBi slopes and origin, M-RoPE sections; for tables of
    different lengths, the recipe resized first: a class row, another grid); else a column
    permutation, shifted or padding rows, rows in another order, a transposed grid or table, a
    constant factor, float32 angles. Causes are tested on sampled rows of long tables (the line
    says so); when none fits, the nearest recipe tried for A is shown.

    Exit status 0 when the tables match, 1 when they differ (a shape mismatch too), 2 on error.

    \b
      pecli diff exported.npy sinusoidal:len=2048,dim=512,layout=split
      pecli diff mine.safetensors:pe theirs.h5 --atol 1e-6
      pecli diff a.npy b.npy --json
      pecli diff -s a.npy b.npy && echo same
      pecli diff old.safetensors new.safetensors   each positional array, key by key
    """
    from pecli.checkpoints import checkpoint_arrays
    from pecli.diff import compare
    from pecli.sources import open_source

    app: App = ctx.obj
    arrays = checkpoint_arrays(a, from_fmt), checkpoint_arrays(b, from_fmt)
    if arrays[0] is not None and arrays[1] is not None:  # two checkpoints: key by key, as h5diff compares
        tolerances = {"atol": atol, "rtol": rtol, "ulps": ulps, "equal_nan": equal_nan}
        ctx.exit(_diff_checkpoints(app, a, b, from_fmt, (arrays[0], arrays[1]), tolerances, as_json, brief))
    with open_source(a, from_fmt) as ta, open_source(b, from_fmt) as tb:
        with app.progress(max(ta.shape[0], tb.shape[0]), "comparing", brief or as_json) as advance:
            result = compare(ta, tb, atol=atol, rtol=rtol, ulps=ulps, equal_nan=equal_nan, top=top, progress=advance)
    if as_json:
        echo_json(result.to_dict(), allow_nan=False)
    elif not brief:
        from pecli.views.diff import diff_view

        app.show(diff_view(result))
    ctx.exit(result.exit_code)


def _diff_checkpoints(
    app: App,
    a: str,
    b: str,
    fmt: str | None,
    arrays: tuple[list[Any], list[Any]],
    tolerances: dict[str, Any],
    as_json: bool,
    brief: bool,
) -> int:
    """Two checkpoints' positional arrays compared key by key: one line each, exit 1 if any differs."""
    from pecli.checkpoints import compare_checkpoints
    from pecli.sources import split_file_key
    from pecli.views.checkpoints import checkpoints_diff_view

    paths = split_file_key(a)[0], split_file_key(b)[0]
    keys = len({i.key for side in arrays for i in side})
    with app.progress(keys, "comparing", brief or as_json) as advance:
        results = list(compare_checkpoints(*paths, fmt, arrays, advance, **tolerances))
    same = all(r.same for r in results)
    if as_json:
        echo_json(
            {
                "same": same,
                "a": a,
                "b": b,
                "keys": [
                    {"key": r.key, "same": r.same, "note": r.note or None, "comparison": r.comparison.to_dict()}
                    if r.comparison is not None
                    else {"key": r.key, "same": False, "note": r.note, "comparison": None}
                    for r in results
                ],
            },
            allow_nan=False,
        )
    elif not brief:
        app.show(checkpoints_diff_view(a, b, results))
    return 0 if same else 1
