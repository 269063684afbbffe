"""``pecli help``: a command's help, every recipe option kind by kind, and the option vocabulary."""

from __future__ import annotations

import click

from pecli.cli.app import EPILOG, App
from pecli.cli.options import SHOW_EVERY_RECIPE_OPTION, PecliCommand, RecipeOption


@click.command(
    "help", cls=PecliCommand, epilog=EPILOG, short_help="Help on a command, a kind's recipe options, or a topic."
)
@click.argument("topic", required=False, metavar="[COMMAND | recipes [KIND] | options]")
@click.argument("kind", required=False)
@click.pass_context
def help_command(ctx: click.Context, topic: str | None, kind: str | None) -> None:
    """Help on a command, on the recipe options of each kind, or on the option vocabulary.

    \b
      pecli help inspect         the same as pecli inspect --help
      pecli help recipes         every recipe option, kind by kind, with that kind's defaults
      pecli help recipes rope    the options of one kind
      pecli help options         every option, its one meaning and the commands that have it
    """
    app: App = ctx.obj
    group = ctx.parent.command if ctx.parent is not None else None
    if not isinstance(group, click.Group) or ctx.parent is None:
        raise click.UsageError("pecli help runs under pecli", ctx)
    if topic is None:
        click.echo(group.get_help(ctx.parent))
        return
    if topic == "recipes":
        click.echo(recipe_help(ctx, kind), nl=False)
        return
    if topic == "options":
        from pecli.views.console import Line

        app.show([Line(vocabulary_text(group))])  # literal: "[f0, f0, f1, f1, …]" is no markup
        return
    command = group.get_command(ctx.parent, topic)
    if command is None or kind is not None:
        names = ", ".join(sorted(group.list_commands(ctx.parent)))
        raise click.UsageError(f"no help topic {topic!r}: give a command ({names}), recipes or options", ctx)
    with click.Context(command, info_name=topic, parent=ctx.parent) as sub:
        click.echo(command.get_help(sub))


def recipe_help(ctx: click.Context, kind: str | None) -> str:
    """Every recipe option, kind by kind (``kind`` alone if given), with the kind's own defaults:
    read from the kinds' fields, so a new kind or parameter appears here by itself."""
    from dataclasses import MISSING, fields

    from pecli.kinds import kinds

    found = kinds()
    if kind is not None and kind not in found:
        raise click.UsageError(f"no kind {kind!r}: choose from {', '.join(found)}", ctx)
    group = ctx.parent.command if ctx.parent is not None else None
    command = group.get_command(ctx.parent, "generate") if isinstance(group, click.Group) and ctx.parent else None
    options = {p.name: p for p in (command.params if command is not None else []) if isinstance(p, RecipeOption)}
    formatter = ctx.make_formatter()
    ctx.meta[SHOW_EVERY_RECIPE_OPTION] = True
    try:
        for name, cls in found.items():
            if kind is not None and name != kind:
                continue
            rows = []
            for f in fields(cls):  # type: ignore[arg-type]
                option = options.get(f.name)
                record = option.get_help_record(ctx) if option is not None else None
                if record is None:
                    continue
                default = "required" if f.default is MISSING else "none" if f.default is None else f.default
                rows.append((record[0], f"{record[1]}  [{name} default: {default}]"))
            paragraph = " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split())
            doc = paragraph.replace("``", "").split(". ")[0].split(": ")[0].rstrip(".:")
            with formatter.section(f"{name}: {doc}"):
                formatter.write_dl(rows)
    finally:
        ctx.meta.pop(SHOW_EVERY_RECIPE_OPTION, None)
    formatter.write_paragraph()
    formatter.write_text(
        "Any command that takes recipe options takes these (generate, export, inspect, identify, analyze, plot), "
        "and a recipe SOURCE takes them as KIND:NAME=VALUE,... with the same names (len for --len)."
    )
    return formatter.getvalue()


def vocabulary(group: click.Group) -> dict[str, tuple[str, list[str]]]:
    """``{option: (its meaning, the commands that have it)}`` read from the commands themselves.

    An option's meaning is its help text: one option name, one text, wherever it appears (the
    test suite holds every command to it).  Deprecated names are left out: they are not options.
    """
    from pecli.cli.options import AliasOption

    ctx = click.Context(group, info_name="pecli")
    found: dict[str, tuple[str, list[str]]] = {}
    for name in sorted(group.list_commands(ctx)):
        command = group.get_command(ctx, name)
        if command is None:
            continue
        for p in command.params:
            if not isinstance(p, click.Option) or isinstance(p, AliasOption):
                continue
            key = " / ".join([*p.opts, *p.secondary_opts])
            meaning = (p.help or "").strip()
            found.setdefault(key, (meaning, []))[1].append(name)
    return found


def vocabulary_text(group: click.Group) -> str:
    lines = []
    for key, (meaning, commands) in vocabulary(group).items():
        lines.append(f"{key}  ({', '.join(commands)})\n    {meaning}")
    return "\n".join(lines)
