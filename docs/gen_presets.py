"""The preset table of docs/presets.md, generated from the preset registry (``pecli.presets.PRESETS``).

docs/presets.md calls :func:`table` from a cog block; regenerate with ``cog -r docs/presets.md``
and check with ``cog --check docs/presets.md`` (tests/project/test_generated_docs.py does that).  Run as a
script to print the table.
"""

from __future__ import annotations

from pecli.presets import PRESETS, Preset

HEADER = "| preset | reproduces | formula and layout | rows | values |\n|---|---|---|---|---|\n"


def _cell(text: str) -> str:
    """Markdown table cell text: a literal ``|`` would end the cell."""
    return text.replace("|", "\\|")


def row(preset: Preset) -> str:
    """One table row: name, framework and source, summary, offsets and default size, exactness."""
    n, d = preset.recipe().shape
    cells = [
        f"`{preset.name}`",
        f"{preset.framework}: `{preset.source}`",
        _cell(preset.summary),
        f"{preset.offsets}; default {n}×{d}",
        preset.exactness,
    ]
    return "| " + " | ".join(cells) + " |\n"


def table() -> str:
    """The whole table, header first, presets in registry order."""
    return HEADER + "".join(row(p) for p in PRESETS.values())


if __name__ == "__main__":
    print(table(), end="")
