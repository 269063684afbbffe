"""Human views for the terminal, built with Rich.  Machine output never passes through here."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from pecli.inspection import Window
from pecli.resources import human_bytes
from pecli.table import Table

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.table import Table as RichTable

ELLIPSIS = "…"


def fmt_value(v: Any, precision: int) -> str:
    v = float(v)
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    text = f"{v:.{precision}f}"
    # "-0.0000" reads as a sign error to most people; NumPy prints it as 0 too.
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def title(table: Table) -> str:
    """``sinusoidal (120, 8) float32  base=10000 layout=interleaved start=0``, after the file name
    when the table was read from a file."""
    n, d = table.shape
    head = f"({n}, {d}) {table.dtype.name}"
    where = "" if table.computed else f"{table.source}  "
    if table.recipe is None:
        return f"{where}{head}"
    return f"{where}{table.recipe.kind} {head}  {table.recipe.describe(short=True)}"


def _grid(win: Window, cols: list[int | None], start: int, precision: int) -> RichTable:
    from rich import box
    from rich.table import Table as RichTable

    grid = RichTable(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
    grid.add_column("pos", justify="right", style="bold", no_wrap=True)
    for c in cols:
        grid.add_column(ELLIPSIS if c is None else str(c), justify="right", no_wrap=True)
    c0 = win.col_range[0]
    for r in win.row_ids:
        if r is None:
            grid.add_row(ELLIPSIS, *[ELLIPSIS for _ in cols])
            continue
        row = win.values[r]
        grid.add_row(str(start + r), *[ELLIPSIS if c is None else fmt_value(row[c - c0], precision) for c in cols])
    return grid


def table_view(console: Console, table: Table, win: Window, precision: int) -> list[RenderableType]:
    """The header line, the grid (columns cut to the console width around an ellipsis) and,
    when anything is hidden, a line saying what is shown."""
    c0, c1 = win.col_range
    all_cols: list[int | None] = list(range(c0, c1))
    cols = all_cols
    width = console.width
    unbounded = console.options.update(max_width=1 << 30)

    def fits(trial: list[int | None]) -> bool:
        return console.measure(_grid(win, trial, table.start, precision), options=unbounded).maximum <= width

    if not fits(cols):
        # Largest k with k leading and k trailing columns that still fits.
        lo, hi = 1, (c1 - c0) // 2
        while lo < hi:
            k = (lo + hi + 1) // 2
            trial: list[int | None] = [*range(c0, c0 + k), None, *range(c1 - k, c1)]
            if fits(trial):
                lo = k
            else:
                hi = k - 1
        cols = [*range(c0, c0 + lo), None, *range(c1 - lo, c1)]
    out: list[RenderableType] = [title(table), _grid(win, cols, table.start, precision)]
    if win.summarised or None in cols:
        n, d = table.shape
        shown_r = sum(r is not None for r in win.row_ids)
        shown_c = sum(c is not None for c in cols)
        out.append(
            f"[dim]showing {shown_r} of {n} rows, {shown_c} of {d} columns: --rows A:B / --cols C:D pick a window[/dim]"
        )
    return out


def row_view(table: Table, pos: int, details: list[dict[str, Any]], precision: int) -> list[RenderableType]:
    from rich import box
    from rich.table import Table as RichTable

    grid = RichTable(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
    explained = any("fn" in e for e in details)
    heads = ["col", "i", "fn", "ω_i", "wavelength", "angle (rad)", "value"] if explained else ["col", "value"]
    for h in heads:
        grid.add_column(h, justify="left" if h == "fn" else "right", no_wrap=True)
    for e in details:
        value = fmt_value(e["value"], precision)
        if explained:
            known = "omega" in e  # a zero column (odd=zero) or the padding row has no frequency
            grid.add_row(
                str(e["col"]),
                str(e["i"]) if known else "",
                e.get("fn", "zero"),
                f"{e['omega']:.6g}" if known else "",
                f"{e['wavelength']:.6g}" if known else "",
                f"{e['angle']:.6g}" if known else "",
                value,
            )
        else:
            grid.add_row(str(e["col"]), value)
    return [f"{title(table)}  position {pos}", grid]


def _plain(v: Any) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() and abs(v) < 1e16 else str(v)


def _stored_recipe_line(meta: dict[str, Any]) -> str:
    """The stored recipe as ``describe()`` words it (changed parameters only); raw if unreadable."""
    from pecli.recipe import recipe_from_metadata

    recipe = recipe_from_metadata(meta)
    if recipe is not None:
        return recipe.describe()
    params = " ".join(f"{k}={_plain(v)}" for k, v in meta.items() if k not in ("schema", "kind", "pecli_version"))
    return f"{meta.get('kind')} {params}"


def describe_view(desc: dict[str, Any], precision: int) -> list[RenderableType]:
    """``h5dump -H``-style header lines, then a one-row statistics table."""
    from rich import box
    from rich.table import Table as RichTable
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
    else:
        lines.append(("recipe", "none stored"))
    width = max(len(k) for k, _ in lines) + 2
    out: list[RenderableType] = [Text.assemble((k.ljust(width), "bold"), v) for k, v in lines]
    stats = desc["stats"]
    st = RichTable(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
    keys = {
        "min": "min",
        "max": "max",
        "mean": "mean",
        "std": "std",
        "row_norm_min": "row norm min",
        "row_norm_max": "row norm max",
    }
    for name in keys.values():
        st.add_column(name, justify="right", no_wrap=True)
    st.add_row(*["—" if stats[k] is None else fmt_value(stats[k], precision) for k in keys])
    out += ["", st]
    if stats.get("skipped"):
        out.append(f"[dim]{stats['skipped']}[/dim]")
    if stats["nonfinite"]:
        out.append(f"[yellow]{stats['nonfinite']} values are NaN or infinite (left out of the statistics)[/yellow]")
    return out


def arrays_view(source: str, arrays: list[Any]) -> list[RenderableType]:
    """The arrays inside a multi-array file, one line each, and how to pick one."""
    from rich.text import Text

    rows = [("key", "shape", "dtype")] + [(a.key, "(" + ", ".join(map(str, a.shape)) + ")", a.dtype) for a in arrays]
    w0, w1 = (max(len(r[k]) for r in rows) for k in (0, 1))
    lines = [f"{k:<{w0}}  {shape:<{w1}}  {dtype}" for k, shape, dtype in rows]
    lines.insert(1, "─" * max(len(line) for line in lines))
    return [f"{source} holds {len(arrays)} arrays; pick one as {source}:KEY", *(Text(line) for line in lines)]


def _g(x: float | None, digits: int = 4) -> str:
    return "—" if x is None else f"{x:.{digits}g}"


def _at(e: Any) -> str:
    return f"at position {e.position}, dim {e.dim}: a = {e.a:.9g}, b = {e.b:.9g}"


def diff_view(c: Any) -> list[RenderableType]:
    """``diff``'s report, summary first: verdict, shapes/dtypes/metadata, statistics, likely
    causes, then the worst elements and rows."""
    from rich import box
    from rich.table import Table as RichTable
    from rich.text import Text

    tol = f"|a−b| ≤ {c.atol:g} + {c.rtol:g}·|b|"
    if not c.shapes_match:
        verdict = f"DIFFERENT: shapes differ, {c.shape_a} vs {c.shape_b}; no elements compared"
    elif c.same:
        verdict = f"SAME: all {c.compared} elements within {tol}"
    else:
        pct = 100 * c.mismatched / c.compared if c.compared else 0.0
        verdict = f"DIFFERENT: {c.mismatched} of {c.compared} elements ({pct:.3g}%) outside {tol}"
    out: list[RenderableType] = [
        Text(verdict, style="bold green" if c.same else "bold red"),
        f"A {c.source_a}  ({', '.join(map(str, c.shape_a))}) {c.dtype_a}",
        f"B {c.source_b}  ({', '.join(map(str, c.shape_b))}) {c.dtype_b}  (the reference)",
    ]
    if c.dtype_a != c.dtype_b:
        out.append(f"dtype differs: {c.dtype_a} vs {c.dtype_b}")
    for key, va, vb in c.metadata_differences:
        out.append(f"metadata {key}: {va!r} vs {vb!r}")
    if c.max_abs is not None:
        lines = [
            ("max |a−b|", f"{_g(c.max_abs)} {_at(c.max_abs_at)}" if c.max_abs_at else _g(c.max_abs)),
            ("max rel", f"{_g(c.max_rel)} {_at(c.max_rel_at)}" if c.max_rel_at else _g(c.max_rel)),
            ("max ulp", f"{_g(c.max_ulp)} (in B's {c.dtype_b})" if c.max_ulp is not None else "—"),
            ("rms", _g(c.rms)),
        ]
        if c.nonfinite_mismatched:
            lines.append(("non-finite", f"{c.nonfinite_mismatched} mismatches involve NaN or ±inf"))
        width = max(len(k) for k, _ in lines) + 2
        out += [Text.assemble((k.ljust(width), "bold"), v) for k, v in lines]
    if not c.same:
        if c.explanations:
            for x in c.explanations:
                out.append(
                    Text.assemble(
                        ("likely cause: ", "bold yellow"),
                        f"{x.name}: {x.detail} (largest |a−b| left: {x.residual:.3g})",
                    )
                )
        elif c.shapes_match:
            out.append(
                "no known cause fits (layout, cos-first, shifted rows, padding row, 2-D order, "
                "float32 angles, base): a real difference"
            )
    if c.worst and not c.same:
        grid = RichTable(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
        for head in ("pos", "dim", "a", "b", "|a−b|", "rel"):
            grid.add_column(head, justify="right", no_wrap=True)
        for e in c.worst:
            grid.add_row(str(e.position), str(e.dim), f"{e.a:.9g}", f"{e.b:.9g}", _g(e.abs), _g(e.rel))
        out += ["", Text("worst elements", style="bold"), grid]
    if c.worst_rows and not c.same:
        rows = RichTable(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
        for head in ("pos", "max |a−b|", "mismatched"):
            rows.add_column(head, justify="right", no_wrap=True)
        for r in c.worst_rows:
            rows.add_row(str(r.position), _g(r.max_abs), str(r.mismatched))
        out += ["", Text("worst rows", style="bold"), rows]
    return out


def presets_view(presets: list[Any], detail: bool) -> list[RenderableType]:
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
    grid.add_column("reproduces", no_wrap=True, overflow="ellipsis", ratio=1)
    for p in presets:
        n, d = p.recipe().shape
        what = p.source.split("::")[-1].split("(")[0].split(".")[0]
        grid.add_row(p.name, f"{n}×{d}", p.params.get("compute", "exact"), f"{what} ({p.framework})")
    return [grid, "pecli presets NAME shows one in full; pecli generate --preset NAME [--len N --dim D] builds it."]
