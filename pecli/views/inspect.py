"""``pecli inspect``'s human views, built with Rich: a table's header and statistics (as ``h5dump -H``
words them), the arrays of a multi-array file, and the heat map."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pecli.resources import human_bytes
from pecli.views.console import Grid, fmt_value, literal_line, visible
from pecli.views.table import title

if TYPE_CHECKING:
    from rich.console import RenderableType

    from pecli.analysis import HeatmapSample
    from pecli.formats import ArrayInfo
    from pecli.table import Table


def _stored_recipe_line(meta: dict[str, Any]) -> str:
    """The stored recipe as ``describe()`` words it (changed parameters only); raw if unreadable."""
    from pecli.kinds import recipe_from_metadata
    from pecli.recipe import format_value

    recipe = recipe_from_metadata(meta)
    if recipe is not None:
        return recipe.describe()
    params = " ".join(f"{k}={format_value(v)}" for k, v in meta.items() if k not in ("schema", "kind", "pecli_version"))
    return f"{meta.get('kind')} {params}"


def describe_view(desc: dict[str, Any], precision: int) -> list[RenderableType]:
    """``h5dump -H``-style header lines, then a one-row statistics table."""
    from rich.text import Text

    lines: list[tuple[str, str]] = [
        ("source", str(desc["source"])),
        ("shape", f"({', '.join(map(str, desc['shape']))})"),
        ("dtype", f"{desc['dtype']}, {desc['byte_order']}"),
        ("data", human_bytes(desc["nbytes"])),
    ]
    lines += [(k, human_bytes(v) if k.endswith("size") else str(v)) for k, v in desc["storage"].items()]
    recipe = desc["recipe"]
    if recipe is not None:
        lines.append(("recipe", _stored_recipe_line(recipe)))
        lines.append(("written by", f"pecli {recipe.get('pecli_version', '?')} (schema {recipe.get('schema')})"))
    elif "recipe" not in desc["storage"]:  # else the storage lines said why a stored one is ignored
        lines.append(("recipe", "none stored"))
    lines += [(k.replace("_", " "), str(v)) for k, v in desc.get("provenance", {}).items()]
    lines = [(visible(k), visible(v)) for k, v in lines]
    width = max(len(k) for k, _ in lines) + 2
    out: list[RenderableType] = [Text.assemble((k.ljust(width), "bold"), v) for k, v in lines]
    stats = desc["stats"]
    keys = {
        "min": "min",
        "max": "max",
        "mean": "mean",
        "std": "std",
        "row_norm_min": "row norm min",
        "row_norm_max": "row norm max",
    }
    st = Grid(list(keys.values()), [["—" if stats[k] is None else fmt_value(stats[k], precision) for k in keys]])
    out += [Text(""), st]
    if stats.get("skipped"):
        out.append(Text(str(stats["skipped"]), "dim"))
    if stats["nonfinite"]:
        out.append(Text(f"{stats['nonfinite']} values are NaN or infinite (left out of the statistics)", "yellow"))
    return out


def arrays_view(source: str, arrays: list[ArrayInfo]) -> list[RenderableType]:
    """The arrays inside a multi-array file, one line each, and how to pick one."""
    from rich.text import Text

    rows = [("key", "shape", "dtype")] + [
        (visible(a.key), "(" + ", ".join(map(str, a.shape)) + ")", visible(a.dtype)) for a in arrays
    ]
    w0, w1 = (max(len(r[k]) for r in rows) for k in (0, 1))
    lines = [f"{k:<{w0}}  {shape:<{w1}}  {dtype}" for k, shape, dtype in rows]
    lines.insert(1, "─" * max(len(line) for line in lines))
    return [
        literal_line(f"{source} holds {len(arrays)} arrays; pick one as {source}:KEY"),
        *(Text(line) for line in lines),
    ]


#: Shades from −1 to 1, so the picture survives without colour (NO_COLOR, pipes, the docs).
_SHADES = " ░▒▓█"


def heatmap_view(table: Table, sample: HeatmapSample, width: int = 80) -> list[RenderableType]:
    """The table as grey cells, −1 black, 0 grey, 1 white (the picture of "The Illustrated
    Transformer"), each sampled value as wide as the terminal allows (up to 4 characters: a
    narrow table is not 8 characters wide); each cell also carries a shade character for
    terminals without colour."""
    import numpy as np
    from rich.text import Text

    if not len(sample.row_ids):
        return [literal_line(title(table)), "the table has no rows: nothing to draw"]
    values = np.clip(np.nan_to_num(np.asarray(sample.values, dtype=np.float64), nan=0.0), -1.0, 1.0)
    grey = np.rint((values + 1.0) * 127.5).astype(int)
    shade = np.rint((values + 1.0) * 2.0).astype(int)
    label = max(len(str(table.position_of(int(r)))) for r in sample.row_ids)
    cell = max(1, min(4, (width - label - 1) // max(1, grey.shape[1])))
    lines: list[RenderableType] = [literal_line(title(table)), f"{sample.description}; −1 black … 0 grey … 1 white"]
    for r, row in enumerate(grey):
        line = Text(f"{table.position_of(int(sample.row_ids[r])):>{label}} ", style="bold")
        for g, s in zip(row, shade[r], strict=True):
            line.append(_SHADES[s] * cell, style=f"rgb({g},{g},{g}) on rgb({g},{g},{g})")
        lines.append(line)
    return lines
