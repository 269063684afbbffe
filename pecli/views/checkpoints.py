"""A whole checkpoint's reports (:mod:`pecli.checkpoints`): ``pecli identify CHECKPOINT``'s scan
(:func:`checkpoint_view`) and ``pecli diff A B`` of two checkpoints key by key
(:func:`checkpoints_diff_view`).  Apart from the views of one table's report (``identify``,
``diff``): that report's data calls its view to show itself (``str``, ``_repr_html_``), and no
data calls these."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pecli.views.console import Line, short_number, visible
from pecli.views.identify import VERDICTS

if TYPE_CHECKING:
    from rich.console import RenderableType

    from pecli.checkpoints import Entry, KeyComparison

#: Arrays a checkpoint's report names for each reason it skipped them (then "and N more").
SKIPPED_NAMED = 3


def _line(text: str) -> Line:
    """A report line naming keys and paths from a file: controls escaped, never read as markup, and
    written as it is into a pipe or a file (no Rich console imported: 15 ms of a scan's start-up)."""
    return Line(visible(text))


def checkpoint_view(source: str, entries: list[Entry]) -> list[RenderableType]:
    """``identify`` of a whole checkpoint (:mod:`pecli.checkpoints`): each positional array's
    verdict and the SOURCE that rebuilds it, then what was skipped and why: each array that could
    not be read, the others one line a reason (the first :data:`SKIPPED_NAMED` named)."""
    found = [e for e in entries if e.positional]
    out: list[RenderableType] = [_line(f"{source}: {len(entries)} arrays, {len(found)} positional")]
    for e in found:
        f = e.found
        if f is None:  # a positional array is always identified (checkpoints.scan)
            continue
        name = f" {f.best.name}" if f.best is not None else ""
        out.append(_line(f"{e.key}  ({', '.join(map(str, e.shape))}) {e.dtype}  {VERDICTS[f.verdict]}{name}"))
        if f.best is not None:
            out.append(_line(f"  rebuild it with  {f.best.spec}"))
        elif f.verdict == "learned":
            out.append(_line("  a learned table (no formula rebuilds it)"))
    skipped = [e for e in entries if not e.positional]
    out += [_line(f"skipped {e.key}: {e.error}") for e in skipped if e.error]  # each one: it is a fault
    reasons: dict[str, list[str]] = {}
    for e in skipped:
        if not e.error:
            reasons.setdefault(e.why, []).append(e.key)
    for why, keys in reasons.items():  # a model's hundreds of weights in a line a reason
        more = f" and {len(keys) - SKIPPED_NAMED} more" if len(keys) > SKIPPED_NAMED + 1 else ""
        named = keys if not more else keys[:SKIPPED_NAMED]
        json_hint = " (--json lists each)" if more else ""
        out.append(_line(f"skipped {', '.join(named)}{more}: {why}{json_hint}"))
    return out


def checkpoints_diff_view(a: str, b: str, results: list[KeyComparison]) -> list[RenderableType]:
    """Two checkpoints compared key by key (:mod:`pecli.checkpoints`): one verdict line per
    positional array, with its likely cause, and the overall verdict first."""
    differ = [r for r in results if not r.same]
    arrays = f"{len(results)} positional array{'s' if len(results) != 1 else ''}"
    head = f"SAME: {arrays}" if not differ else f"DIFFERENT: {len(differ)} of {arrays}"

    out: list[RenderableType] = [_line(f"{head} (A {a}, B {b})")]
    for r in results:
        c = r.comparison
        if c is None:
            out.append(_line(f"{r.key}: {r.note}"))
        elif c.same:
            out.append(_line(f"{r.key}: same"))
        elif not c.shapes_match:
            out.append(_line(f"{r.key}: shapes differ: {c.shape_a} vs {c.shape_b}"))
        else:
            cause = f"; likely cause: {c.explanations[0].text}" if c.explanations else ""
            differ_words = f"{c.mismatched} of {c.compared} elements differ, max |a−b| {short_number(c.max_abs)}"
            out.append(_line(f"{r.key}: {differ_words}{cause}"))
    return out
