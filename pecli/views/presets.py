"""``pecli presets``' human view: the preset registry, one line each or every field of one."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import RenderableType

    from pecli.presets import Preset


def presets_view(presets: list[Preset], detail: bool) -> list[RenderableType]:
    """The preset registry: one line each, or every field of the presets asked for."""
    from rich import box
    from rich.table import Table as RichTable
    from rich.text import Text

    if detail:
        out: list[RenderableType] = []
        for p in presets:
            recipe = p.recipe()
            n, d = recipe.shape
            lines = [
                ("preset", p.name),
                ("reproduces", f"{p.framework}: {p.source}"),
                ("formula", p.summary),
                ("offsets", p.offsets),
                ("precision", p.exactness),
                ("default", f"({n}, {d})  {recipe.describe()}"),
            ]
            width = max(len(k) for k, _ in lines) + 2
            out += [Text.assemble((k.ljust(width), "bold"), v) for k, v in lines]
        return out
    grid = RichTable(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
    name_width = max(len(p.name) for p in presets)
    grid.add_column("preset", no_wrap=True, style="bold", min_width=name_width)
    grid.add_column("shape", no_wrap=True, justify="right", min_width=9)
    grid.add_column("values", no_wrap=True, min_width=7)
    # Wrapped at word boundaries; a class name longer than the column ends in "…" (never broken mid-word).
    grid.add_column("reproduces", overflow="ellipsis", ratio=1, min_width=24)
    for p in presets:
        n, d = p.recipe().shape
        what = p.source.split("::")[-1].split("(")[0].split(".")[0]
        grid.add_row(p.name, f"{n}×{d}", p.params.get("compute", "exact"), f"{what} ({p.framework})")
    return [grid, "pecli presets NAME shows one in full; pecli generate --preset NAME builds it."]
