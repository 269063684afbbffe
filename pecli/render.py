"""Human views for the terminal, built with Rich.  Machine output never passes through here."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from pecli.resources import human_bytes

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
    from rich.measure import Measurement
    from rich.table import Table as RichTable
    from rich.text import Text

    from pecli.inspection import Window
    from pecli.table import Table

ELLIPSIS = "…"

#: C0 controls, DEL and C1 controls, each as the escape Python would write for it.
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))} | {
    0x09: "\\t",
    0x0A: "\\n",
    0x0D: "\\r",
}


def visible(text: str) -> str:
    """``text`` with its control characters shown as escapes (``\\x1b``, ``\\n``).

    For every human-facing string that comes from a file or a path (names, keys, metadata): an
    ESC or OSC sequence in a dataset name must not reach the terminal, nor a newline split a line.
    """
    return text.translate(_CONTROLS)


def literal_line(text: str) -> Text:
    """A line naming things from a file: controls escaped, and a Text, so Rich reads no markup in
    it (a file named ``a[bold]b.npy`` prints as it is)."""
    from rich.text import Text

    return Text(visible(text))


def fmt_value(v: Any, precision: int) -> str:
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    text = f"{v:.{precision}f}"
    # "-0.0000" reads as a sign error to most people; NumPy prints it as 0 too.
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def title(table: Table) -> str:
    """``sinusoidal (120, 8) float32  base=10000 layout=interleaved start=0``, after the file name
    when the table was read from a file."""
    n, d = table.shape
    head = f"({n}, {d}) {table.dtype_name}"
    if table.positions is not None:
        head += "  at the positions given"
    where = "" if table.computed else f"{table.source}  "
    if table.recipe is None:
        return visible(f"{where}{head}")
    return visible(f"{where}{table.recipe.kind} {head}  {table.recipe.describe(short=True)}")


class Line(str):
    """A line of literal text (never read as Rich markup) with an optional Rich style: written as
    it is where nothing is styled (a pipe, a file), through Rich on a terminal."""

    style: str

    def __new__(cls, text: str, style: str = "") -> Line:
        line = super().__new__(cls, text)
        line.style = style
        return line


def as_html(renderables: list[Any], width: int = 100) -> str:
    """``renderables`` as the HTML of what the terminal shows (colours inline, in a ``<pre>``): a
    result's ``_repr_html_``, so a notebook shows a comparison or an identification as ``pecli``
    prints it."""
    console = _recorded(renderables, width, colour=True)
    html: str = console.export_html(inline_styles=True, code_format='<pre style="font-family: monospace">{code}</pre>')
    return html


def as_text(renderables: list[Any], width: int = 100) -> str:
    """``renderables`` as the plain text ``pecli`` prints into a pipe: a result's ``str()``."""
    text: str = _recorded(renderables, width, colour=False).export_text()
    return text.rstrip("\n")


def _recorded(renderables: list[Any], width: int, colour: bool) -> Any:
    import io

    from rich.console import Console

    console = Console(
        record=True,
        file=io.StringIO(),
        width=width,
        color_system="truecolor" if colour else None,
        force_terminal=colour,
    )
    for r in renderables:
        console.print(r, soft_wrap=True)  # lines as the terminal holds them: a recipe longer than the width stays whole
    return console


def plain_text(renderables: list[Any], width: int) -> list[str] | None:
    """The text Rich prints for each of ``renderables`` on a console of ``width`` that styles
    nothing (not a terminal), when each is a :class:`Line` or a grid that fits; else ``None``
    (Rich prints them).  The small table of ``pecli generate`` then never imports Rich's console
    (~15 ms of start-up)."""
    parts = []
    for r in renderables:
        if isinstance(r, Line):
            parts.append(f"{r}\n")
        elif isinstance(r, _Grid) and r.width <= width:
            parts.append(r.plain())
        else:
            return None
    return parts


class _Grid:
    """Columns of text cells laid out like a ``rich.table.Table`` with ``box.SIMPLE_HEAD``, no
    edges and collapsed padding (two spaces between columns, a rule under the header), but
    written directly as lines of segments: Rich measuring and rendering a table cell by cell
    costs ~100 ms for a few hundred cells, this a millisecond.  ``left``: left-justified columns (the rest
    are right-justified); ``bold``: columns styled bold (as a Rich column ``style``)."""

    def __init__(self, heads: list[str], rows: list[list[str]], left: set[int] | None = None, bold: int = -1) -> None:
        self.heads, self.rows, self.left, self.bold = heads, rows, left or set(), bold
        self.widths = [max([len(h)] + [len(r[j]) for r in rows]) for j, h in enumerate(heads)]

    @property
    def width(self) -> int:
        return sum(self.widths) + 2 * (len(self.widths) - 1)

    def _line(self, cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if j in self.left else c.rjust(w)
            for j, (c, w) in enumerate(zip(cells, self.widths, strict=True))
        )

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.width > options.max_width:
            # Wider than the console: a rich.table.Table, which Rich squeezes to fit (as before).
            yield self.rich_table()
            return
        from rich.segment import Segment
        from rich.style import Style

        # Segments, not a Text: Rich would split and wrap a Text line by line.
        newline = Segment.line()
        yield Segment(self._line(self.heads), console.get_style("table.header"))
        yield newline
        yield Segment("─" * self.width)
        yield newline
        bold = Style(bold=True)
        if self.bold < 0:
            for r in self.rows:
                yield Segment(self._line(r))
                yield newline
            return
        skip = sum(self.widths[: self.bold]) + 2 * self.bold
        end = skip + self.widths[self.bold]
        for r in self.rows:
            line = self._line(r)
            yield Segment(line[:skip])
            yield Segment(line[skip:end], bold)
            yield Segment(line[end:])
            yield newline

    def plain(self) -> str:
        """The lines :meth:`__rich_console__` yields, without their styles."""
        lines = [self._line(self.heads), "─" * self.width, *(self._line(r) for r in self.rows)]
        return "".join(f"{line}\n" for line in lines)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        from rich.measure import Measurement

        return Measurement(self.width, self.width)

    def rich_table(self) -> RichTable:
        from rich import box
        from rich.table import Table as RichTable

        grid = RichTable(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
        for j, h in enumerate(self.heads):
            style = "bold" if j == self.bold else None
            grid.add_column(h, justify="left" if j in self.left else "right", no_wrap=True, style=style)
        for r in self.rows:
            grid.add_row(*r)
        return grid


def _window_grid(
    win: Window,
    cols: list[int | None],
    position_of: Callable[[int], int | float],
    cells: dict[int, list[str]],
    label: str = "pos",
) -> _Grid:
    heads = [label, *(ELLIPSIS if c is None else str(c) for c in cols)]
    rows = []
    for k, r in enumerate(win.row_ids):
        if r is None:
            rows.append([ELLIPSIS] * len(heads))
        else:
            rows.append([str(position_of(r)), *(ELLIPSIS if c is None else cells[c][k] for c in cols)])
    return _Grid(heads, rows, bold=0)


def table_view(width: int, table: Table, win: Window, precision: int) -> list[RenderableType]:
    """The header line, the grid (columns cut to the console's ``width`` around an ellipsis) and,
    when anything is hidden, a line saying what is shown."""
    c0, c1 = win.col_range
    # Every column takes at least 3 characters, so no more than width // 3 from each edge can show:
    # only those are formatted (a table a million columns wide must not format a million cells).
    edge = width // 3 + 1
    candidates = range(c0, c1) if c1 - c0 <= 2 * edge else [*range(c0, c0 + edge), *range(c1 - edge, c1)]
    # Each column's cells, formatted once (the width search below only adds up widths).
    cells = {
        c: [ELLIPSIS if r is None else fmt_value(win.values[r][c - c0], precision) for r in win.row_ids]
        for c in candidates
    }
    pos_width = max([3, len(ELLIPSIS)] + [len(str(table.position_of(r))) for r in win.row_ids if r is not None])
    col_width = {c: max([len(str(c)), *(len(x) for x in cells[c])]) for c in cells}

    def width_of(trial: list[int | None]) -> int:
        return pos_width + sum(2 + (1 if c is None else col_width[c]) for c in trial)

    cols: list[int | None] = list(range(c0, c1))
    limit = width
    if c1 - c0 > 2 * edge or width_of(cols) > limit:
        # Largest k with k leading and k trailing columns that still fits.
        lo, hi = 1, min((c1 - c0) // 2, edge)
        while lo < hi:
            k = (lo + hi + 1) // 2
            if width_of([*range(c0, c0 + k), None, *range(c1 - k, c1)]) <= limit:
                lo = k
            else:
                hi = k - 1
        cols = [*range(c0, c0 + lo), None, *range(c1 - lo, c1)]
    # What a row is: a position, unless the recipe says otherwise (ALiBi's bias has one per head,
    # its slopes one row of every head).
    label = "pos" if table.recipe is None else table.recipe.row_label
    if label == "head" and table.shape[0] == 1:
        label = "row"
    grid = _window_grid(win, cols, table.position_of, cells, label)
    out: list[RenderableType] = [Line(title(table)), grid]
    if win.summarised or None in cols:
        n, d = table.shape
        shown_r = sum(r is not None for r in win.row_ids)
        shown_c = sum(c is not None for c in cols)
        out.append(
            Line(
                f"showing {shown_r} of {n} rows, {shown_c} of {d} columns: --rows A:B / --cols C:D pick a window", "dim"
            )
        )
    return out


def row_view(table: Table, pos: int, details: list[dict[str, Any]], precision: int) -> list[RenderableType]:
    from rich.text import Text

    explained = any("fn" in e for e in details)
    heads = ["col", "i", "fn", "ω_i", "wavelength", "angle (rad)", "value"] if explained else ["col", "value"]
    rows = []
    for e in details:
        value = fmt_value(e["value"], precision)
        if explained:
            known = "omega" in e  # a zero column (odd=zero) or the padding row has no frequency
            rows.append(
                [
                    str(e["col"]),
                    str(e["i"]) if known else "",
                    e.get("fn", "zero"),
                    f"{e['omega']:.6g}" if known else "",
                    f"{e['wavelength']:.6g}" if known else "",
                    f"{e['angle']:.6g}" if known else "",
                    value,
                ]
            )
        else:
            rows.append([str(e["col"]), value])
    return [Text(f"{title(table)}  position {pos}"), _Grid(heads, rows, left={2} if explained else set())]


def _plain(v: Any) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() and abs(v) < 1e16 else str(v)


def _stored_recipe_line(meta: dict[str, Any]) -> str:
    """The stored recipe as ``describe()`` words it (changed parameters only); raw if unreadable."""
    from pecli.kinds import recipe_from_metadata

    recipe = recipe_from_metadata(meta)
    if recipe is not None:
        return recipe.describe()
    params = " ".join(f"{k}={_plain(v)}" for k, v in meta.items() if k not in ("schema", "kind", "pecli_version"))
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
    st = _Grid(list(keys.values()), [["—" if stats[k] is None else fmt_value(stats[k], precision) for k in keys]])
    out += [Text(""), st]
    if stats.get("skipped"):
        out.append(Text(str(stats["skipped"]), "dim"))
    if stats["nonfinite"]:
        out.append(Text(f"{stats['nonfinite']} values are NaN or infinite (left out of the statistics)", "yellow"))
    return out


def arrays_view(source: str, arrays: list[Any]) -> list[RenderableType]:
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


def short_number(x: float | None, digits: int = 4) -> str:
    """A number in a report: 4 significant digits, ``—`` for none."""
    return "—" if x is None else f"{x:.{digits}g}"


def element_at(e: Any) -> str:
    """Where an element of a report is, with both tables' values."""
    return f"at position {e.position}, dim {e.dim}: a = {e.a:.9g}, b = {e.b:.9g}"


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
    # Wrapped at word boundaries; a class name longer than the column ends in "…" (never broken mid-word).
    grid.add_column("reproduces", overflow="ellipsis", ratio=1, min_width=24)
    for p in presets:
        n, d = p.recipe().shape
        what = p.source.split("::")[-1].split("(")[0].split(".")[0]
        grid.add_row(p.name, f"{n}×{d}", p.params.get("compute", "exact"), f"{what} ({p.framework})")
    return [grid, "pecli presets NAME shows one in full; pecli generate --preset NAME builds it."]


#: Shades from −1 to 1, so the picture survives without colour (NO_COLOR, pipes, the docs).
_SHADES = " ░▒▓█"


def heatmap_view(table: Table, sample: Any, width: int = 80) -> list[RenderableType]:
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


#: identify's verdicts as the reports say them.
VERDICTS = {"match": "MATCH", "close": "CLOSE", "unknown": "NO KNOWN RECIPE", "learned": "LEARNED"}


def checkpoint_view(source: str, entries: list[Any]) -> list[RenderableType]:
    """``identify`` of a whole checkpoint (:mod:`pecli.checkpoints`): each positional array's
    verdict and the SOURCE that rebuilds it, then what was skipped and why."""
    found = [e for e in entries if e.positional]
    out: list[RenderableType] = [literal_line(f"{source}: {len(entries)} arrays, {len(found)} positional")]
    for e in found:
        f = e.found
        name = f" {f.best.name}" if f.best is not None else ""
        out.append(literal_line(f"{e.key}  ({', '.join(map(str, e.shape))}) {e.dtype}  {VERDICTS[f.verdict]}{name}"))
        if f.best is not None:
            out.append(literal_line(f"  rebuild it with  {f.best.spec}"))
        elif f.verdict == "learned":
            out.append(literal_line("  a learned table (no formula rebuilds it)"))
    out += [literal_line(f"skipped {e.key}: {e.error or e.why}") for e in entries if not e.positional]
    return out


def identify_view(found: Any) -> list[RenderableType]:
    """``identify``'s answer: the verdict, the recipe that rebuilds the table, notes, the nearest."""
    from rich import box
    from rich.table import Table as RichTable
    from rich.text import Text

    from pecli.presets import PRESETS

    n, d = found.shape
    out: list[RenderableType] = [Text(visible(f"{found.source}  ({n}, {d}) {found.dtype}"), style="bold")]
    verdict = VERDICTS[found.verdict]
    out.append(Text.assemble((verdict, "bold"), visible(f": {found.summary}")))
    best = found.best
    if best is not None:
        others = [n for n in found.names if n != best.name and n in PRESETS]
        if others:
            out.append(f"same table as    {', '.join(others)}")
        out.append(f"rebuild it with  {best.spec}")
        out.append(literal_line(f"check it with    {best.check_command(found.source)}"))
    # The best recipe computed by another of its kind's pipelines (``Recipe.pipelines``: exact or
    # float32, another form), named by no preset, is no other explanation of the table; --json
    # lists every alternative.
    twins = set(best.recipe.pipelines()) if best is not None else set()
    for c in found.alternatives:
        named = any(n in PRESETS for n in c.names)
        if c.atol and set(c.names) - set(found.names) and (named or c.recipe not in twins):
            names = ", ".join(n for n in c.names if n in PRESETS) or c.name
            out.append(f"also matches     {names}: {c.spec} (max |Δ| {short_number(c.atol, 3)})")
    out += [literal_line(f"note: {note}") for note in found.notes]
    proof = "compared with every row" if best is not None and best.verification is not None else "scored on the sample"
    out.append(f"sampled {found.sample}; {found.candidates_tried} candidates tried; the verdict {proof}")
    if found.nearest and found.verdict != "match":  # a proved match needs no runners-up (--json has them)
        grid = RichTable(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
        for head, justify in (
            ("candidate", "left"),
            ("max |Δ| (sample)", "right"),
            ("rel RMS", "right"),
            ("recipe", "left"),
        ):
            grid.add_column(head, justify=justify, no_wrap=head != "recipe")  # type: ignore[arg-type]
        for c in found.nearest:
            grid.add_row(c.name, short_number(c.max_abs, 3), short_number(c.rel_rms, 3), c.recipe.describe(short=True))
        out += ["", "nearest candidates", grid]
    return out


def analysis_view(table: Table, decay: Any, residual: Any, waves: Any) -> list[RenderableType]:
    """Decay (at k = 0, 1, 2, 4, …), the relative-position residual per k, and the wavelengths."""
    import numpy as np
    from rich import box
    from rich.table import Table as RichTable

    out: list[RenderableType] = [literal_line(title(table))]
    ks = sorted({0, *(2**e for e in range(0, 20) if 2**e <= int(decay.k[-1])), int(decay.k[-1])})
    grid = RichTable(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
    for head in ("k", "mean PE(p)·PE(p+k)", "mean cosine"):
        grid.add_column(head, justify="right")

    def number(x: float, spec: str) -> str:  # NaN and Inf are what could not be computed
        return format(x, spec) if math.isfinite(x) else "not a number"

    for k in ks:
        grid.add_row(str(k), number(decay.dot[k], ".4f"), number(decay.cosine[k], ".4f"))
    out += ["", f"decay ({decay.sample})", grid]
    grid = RichTable(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
    for head in ("k", "‖PE(p+k) − R_k·PE(p)‖ / ‖PE(p+k)‖"):
        grid.add_column(head, justify="right")
    for k, res in zip(residual.k, residual.residual, strict=True):
        grid.add_row(str(int(k)), number(res, ".3g") if math.isfinite(res) else "not computed")
    res = np.asarray(residual.residual, dtype=np.float64)
    if residual.unfitted or not res.size or not np.isfinite(res).all():
        verdict = f"not measured: {residual.unfitted or 'PE(p+k) holds NaN or Inf for some k'}"
    elif float(res.max()) < 1e-4:
        verdict = "a rotation of PE(p): the relative-position property holds"
    else:
        verdict = "not a linear function of PE(p)"
    out += [
        "",
        f"relative position: best linear map R_k ({residual.sample}; rank {residual.rank})",
        grid,
        f"PE(p+k) is {verdict}",
    ]
    w = np.asarray(waves, dtype=np.float64)
    finite = w[np.isfinite(w)]
    if finite.size:
        cols = " ".join(f"{x:.4g}" for x in w[: min(8, w.size)])
        out += [
            "",
            f"wavelengths 2π/ω (positions): {finite.min():.4g} … {finite.max():.4g}; columns 0..: {cols}"
            + (" …" if w.size > 8 else ""),
        ]
    return out
