"""The ``pecli`` command: the group and ``main`` live in :mod:`pecli.cli.app`, each command in a small module.

Only Click and pecli.options load here; every command imports what it needs when it runs,
so ``pecli --help`` stays fast.
"""

from __future__ import annotations

from pecli.cli import diff, guide, look, make, study
from pecli.cli.app import cli, main

# Registered in this order (cli.commands keeps it; `pecli --help` lists them alphabetically).
for _command in (
    make.generate,
    make.export,
    look.inspect,
    diff.diff,
    look.presets,
    study.identify,
    study.analyze,
    study.plot,
    guide.help_command,
):
    cli.add_command(_command)
del _command

__all__ = ["cli", "main"]
