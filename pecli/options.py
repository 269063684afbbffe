"""Every option is defined once here and stacked by name on the commands that use it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from pecli.recipe import DTYPES, LAYOUTS

F = TypeVar("F", bound=Callable[..., Any])

FORMAT_NAMES = ("npy", "h5", "csv")  # kept in step with pecli.formats.FORMATS by a test


class SpanType(click.ParamType):
    """``A:B`` (half-open), ``A:``, ``:B`` or ``A`` (just A)."""

    name = "A:B"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, tuple):
            return value
        text = str(value).strip()
        try:
            if ":" not in text:
                a = int(text)
                return (a, a + 1)
            left, right = text.split(":", 1)
            return (int(left) if left.strip() else None, int(right) if right.strip() else None)
        except ValueError:
            self.fail(f"{value!r} is not a span like 10:20, 10: or :20", param, ctx)


def _stack(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    def apply(f: F) -> F:
        for dec in reversed(decorators):
            f = dec(f)
        return f

    return apply


recipe_options = _stack(
    click.option("--len", "length", type=int, metavar="N", help="Number of positions (rows)."),
    click.option("--dim", type=int, metavar="D", help="Model width d_model (columns); odd D is allowed."),
    click.option(
        "--base", type=float, default=10000.0, show_default=True, metavar="B", help="Frequency base: ω_i = B^(−2i/D)."
    ),
    click.option(
        "--layout",
        type=click.Choice(LAYOUTS),
        default="interleaved",
        show_default=True,
        help="interleaved: sin,cos,sin,cos… (the paper); split: all sin columns, then all cos (HuggingFace).",
    ),
    click.option(
        "--start",
        type=int,
        default=0,
        show_default=True,
        metavar="P",
        help="Position of the first row (e.g. a past-key-values offset).",
    ),
    click.option(
        "--dtype",
        type=click.Choice(DTYPES),
        default="float32",
        show_default=True,
        help="Output dtype; values are computed in extended precision and rounded once.",
    ),
)
RECIPE_PARAMS = ("length", "dim", "base", "layout", "start", "dtype")

view_options = _stack(
    click.option("--rows", type=SpanType(), default=None, help="Show positions A:B (half-open) instead of a summary."),
    click.option("--cols", type=SpanType(), default=None, help="Show columns C:D (half-open)."),
    click.option(
        "--precision",
        type=click.IntRange(0, 17),
        default=4,
        show_default=True,
        metavar="N",
        help="Digits after the decimal point on the terminal (files keep every bit).",
    ),
)

output_options = _stack(
    click.option(
        "-o",
        "--output",
        metavar="PATH",
        help="Write the table to PATH (format from the extension: .npy, .h5/.hdf5, .csv); "
        "'-' writes .npy bytes or CSV text to stdout.",
    ),
    click.option(
        "--format",
        "fmt",
        type=click.Choice(FORMAT_NAMES, case_sensitive=False),
        default=None,
        help="File format, overriding the extension (required with -o -).",
    ),
    click.option("--force", is_flag=True, help="Overwrite an existing output file."),
    click.option(
        "--sidecar/--no-sidecar",
        default=True,
        show_default=True,
        help="For .npy and .csv, store the recipe in PATH.json beside the file.",
    ),
    click.option("-q", "--quiet", is_flag=True, help="No progress bar."),
)

pos_option = click.option(
    "--pos", type=int, metavar="P", default=None, help="Explain the row of position P column by column."
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print the same content as JSON on stdout.")
