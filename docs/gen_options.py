"""The option table of docs/options.md, generated from the commands themselves
(:func:`pecli.cli.help.vocabulary`): every option, its one meaning and the commands that have it.

docs/options.md calls :func:`table` from a cog block; regenerate with ``cog -r docs/options.md``
(tests/project/test_generated_docs.py checks it is current).
"""

from __future__ import annotations

from pecli.cli import cli
from pecli.cli.help import vocabulary

HEADER = "| option | meaning | commands |\n|---|---|---|\n"


def table() -> str:
    rows = [
        f"| `{key}` | {meaning.replace('|', chr(92) + '|')} | {', '.join(commands)} |\n"
        for key, (meaning, commands) in vocabulary(cli).items()
    ]
    return HEADER + "".join(rows)


if __name__ == "__main__":
    print(table(), end="")
