"""Parameters that hold a list of numbers (a grid ``14x14``, LongRoPE's ``short_factor``
``1.05;1.05;…``): as the command line takes them, and as prose says them.

A recipe stores such a list as text, each item as typed (a recipe operand, the stored metadata and
``rebuild it with`` keep every item).  A long one is no sentence: Phi-3's ``short_factor`` holds
48 numbers like ``1.2500000000000002``, a thousand characters in every header and diff line.
Prose says it short (:func:`short_list`) and says where two lists differ (:func:`list_difference`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: Lists of at most this many numbers are said whole; longer ones by their first items, the last
#: and the count.
SAID_WHOLE = 6
#: Differing items named at most by :func:`list_difference` (then ``…``).
NAMED_DIFFERENCES = 3


def listed(value: object, sep: str) -> object:
    """A list, tuple or 1-D array of numbers as the text the command line takes for it (``[14, 14]``
    → ``"14x14"`` with ``sep="x"``, ``[1.0, 1.05]`` → ``"1.0,1.05"``), so a script passes Python
    values and the CLI text; anything else is returned unchanged for the kind's parser to judge."""
    import numbers

    if isinstance(value, (str, bytes)) or (not isinstance(value, Sequence) and getattr(value, "ndim", None) != 1):
        return value
    items = list(value)  # type: ignore[call-overload]
    if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in items):
        return value
    return sep.join(str(int(v)) if isinstance(v, numbers.Integral) else repr(float(v)) for v in items)


def numbers_of(value: object) -> list[str] | None:
    """The items of a ``;``-separated list of numbers (as stored), or None for anything else."""
    if not isinstance(value, str) or ";" not in value:
        return None
    items = value.split(";")
    try:
        if all(math.isfinite(float(t)) for t in items):
            return items
    except ValueError:
        pass
    return None


def short_list(value: object) -> str | None:
    """A long list of numbers for prose: ``1.05;1.05;1.05;…;2 (48 values)`` (each shown to 6
    significant digits); None when ``value`` is no list of more than :data:`SAID_WHOLE` numbers."""
    items = numbers_of(value)
    if items is None or len(items) <= SAID_WHOLE:
        return None
    shown = [f"{float(t):.6g}" for t in (*items[: SAID_WHOLE // 2], items[-1])]
    return f"{';'.join(shown[:-1])};…;{shown[-1]} ({len(items)} values)"


def list_difference(a: object, b: object, marks: tuple[str, str] = (" (A)", " (B)")) -> str | None:
    """Where two long lists of numbers of one length differ, items as stored:
    ``1 of 48 values differ: [6] 1.2500000000000002 (A) vs 1.3 (B)`` (0-based index, at most
    :data:`NAMED_DIFFERENCES` named); None unless both are such lists (said whole otherwise)."""
    xs, ys = numbers_of(a), numbers_of(b)
    if xs is None or ys is None or len(xs) != len(ys) or len(xs) <= SAID_WHOLE:
        return None
    at = [i for i, (x, y) in enumerate(zip(xs, ys, strict=True)) if float(x) != float(y)]
    if not at:
        return None  # the same numbers written otherwise: said whole
    named = ", ".join(f"[{i}] {xs[i]}{marks[0]} vs {ys[i]}{marks[1]}" for i in at[:NAMED_DIFFERENCES])
    more = ", …" if len(at) > NAMED_DIFFERENCES else ""
    verb = "differs" if len(at) == 1 else "differ"
    return f"{len(at)} of {len(xs)} values {verb}: {named}{more}"


__all__ = ["NAMED_DIFFERENCES", "SAID_WHOLE", "list_difference", "listed", "numbers_of", "short_list"]
