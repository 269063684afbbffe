"""The pieces of every human view: control characters escaped, numbers formatted, plain lines,
fast text grids, and a list of renderables exported as the HTML or text the terminal shows."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.measure import Measurement
    from rich.table import Table as RichTable
    from rich.text import Text

ELLIPSIS = "…"
#: Decimals a value is shown with unless ``--decimals`` says otherwise.
DECIMALS = 4
#: The width, in characters, of what a notebook shows (the HTML of a report or a table).
NOTEBOOK_WIDTH = 100

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


def short_number(x: float | None, digits: int = 4) -> str:
    """A number in a report: 4 significant digits, ``—`` for none."""
    return "—" if x is None else f"{x:.{digits}g}"


def fmt_value(v: Any, precision: int) -> str:
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    text = f"{v:.{precision}f}"
    # "-0.0000" reads as a sign error to most people; NumPy prints it as 0 too.
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


class Line(str):
    """A line of literal text (never read as Rich markup) with an optional Rich style: written as
    it is where nothing is styled (a pipe, a file), through Rich on a terminal."""

    style: str

    def __new__(cls, text: str, style: str = "") -> Line:
        line = super().__new__(cls, text)
        line.style = style
        return line


def as_html(renderables: list[Any], width: int = NOTEBOOK_WIDTH) -> str:
    """``renderables`` as the HTML of what the terminal shows (colours inline, in a ``<pre>``): a
    result's ``_repr_html_``, so a notebook shows a comparison or an identification as ``pecli``
    prints it."""
    console = _recorded(renderables, width, colour=True)
    html: str = console.export_html(inline_styles=True, code_format='<pre style="font-family: monospace">{code}</pre>')
    return html


def as_text(renderables: list[Any], width: int = NOTEBOOK_WIDTH) -> str:
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
        elif isinstance(r, Grid) and r.width <= width:
            parts.append(r.plain())
        else:
            return None
    return parts


class Grid:
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
