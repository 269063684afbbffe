"""``pecli diff``'s report as the terminal shows it (:func:`diff_view`, from a
:class:`~pecli.diff.Comparison`); two checkpoints compared key by key are
:mod:`pecli.views.checkpoints`."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from pecli.lists import list_difference
from pecli.views.console import literal_line, short_number

if TYPE_CHECKING:
    from rich.console import RenderableType

    from pecli.diff.report import Comparison
    from pecli.diff.statistics import Element


def element_at(e: Element) -> str:
    """Where an element of a report is, with both tables' values."""
    return f"at position {e.position}, dim {e.dim}: a = {e.a:.9g}, b = {e.b:.9g}"


def diff_view(c: Comparison) -> list[RenderableType]:
    """``diff``'s report, summary first: verdict, shapes/dtypes/metadata, statistics, likely
    causes, then the worst elements and rows."""
    from rich import box
    from rich.table import Table as RichTable
    from rich.text import Text

    tol = f"|a−b| ≤ {c.atol:g} + {c.rtol:g}·|b|" + (f" or {c.ulps} ulp" if c.ulps else "")
    if not c.shapes_match:
        verdict = f"DIFFERENT: shapes differ, {c.shape_a} vs {c.shape_b}; no elements compared"
    elif c.same:
        verdict = f"SAME: all {c.compared} elements within {tol}"
    else:
        pct = 100 * c.mismatched / c.compared if c.compared else 0.0
        verdict = f"DIFFERENT: {c.mismatched} of {c.compared} elements ({pct:.3g}%) outside {tol}"
    out: list[RenderableType] = [
        Text(verdict, style="bold green" if c.same else "bold red"),
        literal_line(f"A {c.source_a}  ({', '.join(map(str, c.shape_a))}) {c.dtype_a}"),
        literal_line(f"B {c.source_b}  ({', '.join(map(str, c.shape_b))}) {c.dtype_b}  (the reference)"),
    ]
    if c.dtype_a != c.dtype_b:
        out.append(f"dtype differs: {c.dtype_a} vs {c.dtype_b}")
    said = [_metadata_line(*m) for m in c.metadata_differences]
    out += [literal_line(text) for text in ([f"setting {k}" for k in c.keys] or said)]  # a settings file's keys say it
    if c.max_abs is not None:
        lines = [
            (
                "max |a−b|",
                f"{short_number(c.max_abs)} {element_at(c.max_abs_at)}" if c.max_abs_at else short_number(c.max_abs),
            ),
            (
                "max rel",
                f"{short_number(c.max_rel)} {element_at(c.max_rel_at)}" if c.max_rel_at else short_number(c.max_rel),
            ),
            (
                "max ulp",
                f"{short_number(c.max_ulp)} (in {c.ulp_dtype}{_narrower(c)})" if c.max_ulp is not None else "—",
            ),
            ("rms", short_number(c.rms)),
        ]
        if c.nonfinite_mismatched:
            lines.append(("non-finite", f"{c.nonfinite_mismatched} mismatches involve NaN or ±inf"))
        width = max(len(k) for k, _ in lines) + 2
        out += [Text.assemble((k.ljust(width), "bold"), v) for k, v in lines]
    if not c.same:
        if c.explanations:
            for x in c.explanations:
                measured = not x.proved and not math.isnan(x.residual)
                left = f"largest |a−b| left: {x.residual:.3g}" if measured else ""
                where = f"checked on {c.causes_checked_on}" if c.causes_checked_on and not x.proved else ""
                note = "; ".join(t for t in (left, where) if t)
                out.append(Text.assemble(("likely cause: ", "bold yellow"), x.text + (f" ({note})" if note else "")))
        elif c.shapes_match:
            out.append(
                "no known cause fits (the recipes' parameters, rounding, storage dtype, a column permutation, "
                "shifted rows, padding rows, rows in another order, a transposed grid, a constant factor, float32 "
                "angles): a real difference"
            )
            if c.nearest:
                out.append(literal_line(f"nearest recipe for A: {c.nearest}"))
        elif c.shape_a[1] == c.shape_b[1]:
            out.append(
                "no known cause relates the two lengths (the recipes' parameters at A's size, shifted or padding "
                "rows, rows in another order): a real difference"
            )
            if c.nearest:
                out.append(literal_line(f"nearest recipe for A: {c.nearest}"))
    if c.worst and not c.same:
        grid = RichTable(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
        for head in ("pos", "dim", "a", "b", "|a−b|", "rel"):
            grid.add_column(head, justify="right", no_wrap=True)
        for e in c.worst:
            grid.add_row(
                str(e.position), str(e.dim), f"{e.a:.9g}", f"{e.b:.9g}", short_number(e.abs), short_number(e.rel)
            )
        out += ["", Text("worst elements", style="bold"), grid]
    if c.worst_rows and not c.same:
        rows = RichTable(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
        for head in ("pos", "max |a−b|", "mismatched"):
            rows.add_column(head, justify="right", no_wrap=True)
        for r in c.worst_rows:
            rows.add_row(str(r.position), short_number(r.max_abs), str(r.mismatched))
        out += ["", Text("worst rows", style="bold"), rows]
    return out


def _narrower(c: Comparison) -> str:
    """Which table's dtype the ulps are counted in."""
    if c.dtype_a == c.dtype_b:
        return ""
    return ", A's dtype" if c.ulp_dtype == c.dtype_a else ", B's dtype"


def _metadata_line(key: str, va: Any, vb: Any) -> str:
    """A metadata difference as diff prints it (``none stored`` rather than Python's ``None``)."""
    values = " vs ".join("none stored" if v is None else repr(v) for v in (va, vb))
    return f"metadata {key}: {list_difference(va, vb, ('', '')) or values}"
