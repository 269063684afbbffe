"""The table a command works on and where it goes: a recipe from the options or a SOURCE, the
terminal view, a file or stdout, and JSON."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from pecli.cli.app import App, PecliError
from pecli.cli.options import recipe_params

if TYPE_CHECKING:
    from pecli.recipe import Recipe
    from pecli.table import Table


def recipe_from_options(ctx: click.Context, params: dict[str, Any], ids_given: bool = False) -> Recipe:
    """The recipe the options describe.  ``ids_given``: --positions gives the rows' ids, so a kind
    whose tokens carry their own ids (M-RoPE) needs no sequence to derive them from."""
    from pecli.kinds import DEFAULT_KIND, implied_kind
    from pecli.making import make_recipe

    given = {name: params[name] for name in recipe_params(ctx)}
    preset, kind, config = given.pop("preset", None), given.pop("kind", None), given.pop("hf_config", None)
    if preset is None and config is None and (kind or implied_kind(given)) == DEFAULT_KIND:
        missing = [opt for opt, name in (("--len", "length"), ("--dim", "dim")) if params[name] is None]
        if missing:
            raise click.UsageError(
                f"Missing option {' and '.join(missing)}: a recipe needs --len N and --dim D (or --preset NAME).",
                ctx,
            )
    return make_recipe(given, preset, kind, hf_config=config, ids_given=ids_given)


def table_from_options(ctx: click.Context, params: dict[str, Any], ids_given: bool = False) -> Table:
    """The recipe's table; ``--dtype complex64``/``complex128`` stores its (real, imaginary)
    column pairs as complex numbers (:meth:`Table.converted`)."""
    from pecli.dtypes import COMPLEX
    from pecli.table import Table

    stored = params.get("dtype")
    parts = {**params, "dtype": COMPLEX[stored]} if stored in COMPLEX else params
    table = Table.from_recipe(recipe_from_options(ctx, parts, ids_given))
    return table.converted(stored) if stored in COMPLEX else table


@contextmanager
def table_input(
    ctx: click.Context,
    source: str | None,
    params: dict[str, Any],
    fmt: str | None,
    allow: tuple[str, ...] = (),
    ids_given: bool = False,
) -> Iterator[Table]:
    """The table a command works on: SOURCE (file[:key] or KIND:params) or the recipe options.

    ``allow`` names recipe options that still make sense with a SOURCE (export's --dtype).
    """
    from pecli.sources import open_source

    given = [n for n in recipe_params(ctx) if n not in allow]
    if source is not None and given:
        from pecli.params import spell

        opts = ", ".join(spell(n) for n in given)
        raise click.UsageError(f"give a SOURCE or recipe options, not both ({opts} given with {source})", ctx)
    if source is None:
        if not recipe_params(ctx):
            raise click.UsageError(
                "give a SOURCE (a file, FILE:KEY or sinusoidal:len=N,dim=D) "
                "or recipe options such as --len 120 --dim 8",
                ctx,
            )
        yield table_from_options(ctx, params, ids_given)
        return
    with open_source(source, fmt) as table:
        yield table


def show_table(app: App, table: Table, rows: Any, cols: Any, precision: int) -> None:
    from pecli.spans import window
    from pecli.views.table import table_view

    app.show(table_view(app.width, table, window(table, rows, cols), precision))


def write_output(app: App, table: Table, out: dict[str, Any]) -> None:
    """Write ``table`` as the output options in ``out`` say (to a path, or stdout for ``-``)."""
    from pecli.formats import Format, WriteOptions, resolve_format, write_table

    options = WriteOptions(key=out["key"], compress=out["compress"], digits=out["digits"])
    output, fmt = out["output"], out["fmt"]
    if out["transpose"]:
        from pecli.transposition import transposed

        table = transposed(table)
    if out["compress"] is not None and (output == "-" or not resolve_format(output, fmt, "--to").compresses):
        from pecli.cli.options import extensions, titles

        def can(f: Format) -> bool:
            return f.compresses

        raise PecliError(f"--compress applies to {titles(can)} output only ({extensions(can, '/', every=True)})")
    if output == "-":
        if fmt is None:
            raise PecliError("writing to stdout needs --to, e.g. --to npy or --to csv")
        with app.progress(table.shape[0], "writing") as advance:
            write_table(table, sys.stdout.buffer, fmt, options=options, progress=advance)
            sys.stdout.buffer.flush()
        return
    with app.progress(table.shape[0], f"writing {output}") as advance:
        write_table(table, output, fmt, options=options, force=out["force"], sidecar=out["sidecar"], progress=advance)


def echo_json(payload: Any, allow_nan: bool = True) -> None:
    """Machine output on stdout (json is imported here: `pecli --help` never needs it)."""
    import json

    click.echo(json.dumps(payload, indent=2, allow_nan=allow_nan))


def split_params(params: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {name: params.pop(name) for name in names}
