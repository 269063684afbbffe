"""The ``pecli`` command: the group and ``main`` live in :mod:`pecli.cli.app`, each command in a small module.

Only Click and pecli.options load here; a command's module loads when the command is looked up,
and every command imports what it needs when it runs, so ``pecli --help`` and ``pecli generate``
stay fast.
"""

from __future__ import annotations

from pecli.cli.app import LazyCommands, cli, main

# Registered in this order (cli.commands keeps it; `pecli --help` lists them alphabetically).
cli.commands = LazyCommands(
    generate="pecli.cli.make:generate",
    export="pecli.cli.make:export",
    inspect="pecli.cli.look:inspect",
    diff="pecli.cli.diff:diff",
    presets="pecli.cli.look:presets",
    identify="pecli.cli.study:identify",
    analyze="pecli.cli.study:analyze",
    plot="pecli.cli.study:plot",
    help="pecli.cli.guide:help_command",
)

__all__ = ["cli", "main"]
