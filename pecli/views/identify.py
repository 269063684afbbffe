"""``pecli identify``'s human views: the verdict, the recipe that rebuilds the table and the nearest
candidates (:func:`identify_view`, from an :class:`~pecli.identification.Identification`); a
whole checkpoint's scan is :mod:`pecli.views.checkpoints`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pecli.views.console import literal_line, short_number, visible

if TYPE_CHECKING:
    from rich.console import RenderableType

    from pecli.identified import Identification


#: identify's verdicts as the reports say them.
VERDICTS = {"match": "MATCH", "close": "CLOSE", "unknown": "NO KNOWN RECIPE", "learned": "LEARNED"}


def identify_view(found: Identification) -> list[RenderableType]:
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
            ("max |Δ|", "right"),
            ("rel RMS", "right"),
            ("on", "left"),
            ("recipe", "left"),
        ):
            grid.add_column(head, justify=justify, no_wrap=head != "recipe")  # type: ignore[arg-type]
        for c in found.nearest:
            grid.add_row(
                c.name,
                short_number(c.max_abs, 3),
                short_number(c.rel_rms, 3),
                c.scored_on,
                c.recipe.describe(short=True),
            )
        out += ["", "nearest candidates", grid]
    return out
