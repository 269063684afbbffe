"""The ``pecli`` command: the group and ``main`` live in :mod:`pecli.cli.app`, each command in a small module.

Only Click and pecli.cli.options load here; a command's module loads when the command is looked up,
and every command imports what it needs when it runs, so ``pecli --help`` and ``pecli generate``
stay fast.
"""

from __future__ import annotations

from pecli.cli.app import LazyCommands, cli, main

# Registered in this order (cli.commands keeps it; `pecli --help` lists them alphabetically).
cli.commands = LazyCommands(
    generate="pecli.cli.generate:generate",
    export="pecli.cli.export:export",
    inspect="pecli.cli.inspect:inspect",
    diff="pecli.cli.diff:diff",
    presets="pecli.cli.presets:presets",
    identify="pecli.cli.identify:identify",
    analyze="pecli.cli.analyze:analyze",
    plot="pecli.cli.plot:plot",
    rotation="pecli.cli.rotation:rotation",
    help="pecli.cli.help:help_command",
)

__all__ = ["cli", "main"]
