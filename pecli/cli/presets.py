"""``pecli presets``: list the presets, or show some of them in full."""

from __future__ import annotations

import click

from pecli.cli.app import EPILOG, App
from pecli.cli.options import PecliCommand, json_option
from pecli.cli.tables import echo_json


@click.command(cls=PecliCommand, epilog=EPILOG, short_help="List the presets: recipes of the frameworks' own tables.")
@click.argument("names", nargs=-1, metavar="[NAME]...")
@json_option
@click.pass_obj
def presets(app: App, names: tuple[str, ...], as_json: bool) -> None:
    """List the presets: named recipes that reproduce a framework's own table.

    With NAME, show that preset in full: the framework, class or function and version it
    reproduces, the formula, offsets, how exact it is and its default recipe.  Use one with
    `pecli generate --preset NAME [--len N --dim D ...]`, or as a SOURCE: NAME:len=N,dim=D.
    """
    from pecli.presets import PRESETS, get_preset
    from pecli.views.presets import presets_view

    chosen = [get_preset(n) for n in names] if names else list(PRESETS.values())
    if as_json:
        rows = [
            {
                "name": p.name,
                "kind": p.kind,
                "framework": p.framework,
                "source": p.source,
                "formula": p.summary,
                "offsets": p.offsets,
                "precision": p.exactness,
                "recipe": p.recipe().to_metadata(),
            }
            for p in chosen
        ]
        echo_json(rows)
        return
    app.show(presets_view(chosen, detail=bool(names)))
