"""Why two tables differ: :func:`explain` looks for the cause in this order and reports one only
when it *fits*: after undoing it, every sampled element of A is within ``max(tolerance, slack)``
of B.

1. **The recipes** (:mod:`pecli.diff.fitted`): when a side's recipe agrees with its data, the
   other table is fitted by that recipe's kind, starting from the recipe, and the parameters
   that had to change are the cause, in the kind's words (``base 500000 (A) vs 10000 (B)``,
   ``scaling llama3 (…) missing in A``, ``order timm (A) vs mae (B)``).
2. **Transformations no parameter expresses** (:mod:`pecli.diff.transforms`): columns
   permuted, rows shifted or padded, a square grid transposed, a constant multiplier, float32
   angles; a permutation together with shifted rows.
3. **A side without a recipe** is identified (tables up to ``IDENTIFY_CELLS`` cells); the other
   side is fitted from the recipe found when identify's match misses its table by at most an
   eighth of the tables' difference, else the two recipes are compared (a difference of kind).
   Learned tables are compared by their statistics.  When nothing fits, the nearest recipe tried
   for A is given with "a real difference".

The criteria, where

* ``slack = max(2⁻²⁰, 4·ε) · max|B|`` with ε the machine epsilon of the coarser of the two dtypes:
  2⁻²⁰ ≈ 9.5e-7 is 8 float32 ulps at 1.0, about where float32 framework tables of ~1000 rows
  and an exact table agree (≤ 4.8e-7 measured for fairseq's 1026×512), yet five orders of
  magnitude below what a wrong layout or formula produces (0.1–2); 4·ε widens it for float16,
  and for bfloat16 (a bfloat16 file read as float32 counts as bfloat16: its values carry that
  rounding) to 2⁻⁵, still three times below a wrong layout's smallest;
* or, for a "float32 angles" fit, the envelope ``2⁻²²·(1 + max(1, p)) · max|B|`` at position p.
  A float32 pipeline rounds the exponent 2i/d, ``base^x``, ``ω`` and ``p·ω``, which moves the
  angle by at most ``p·ω·(ln(base)·x + 3)·2⁻²⁴ ≤ 3·2⁻²⁴·p`` rad (``base^−x·(ln(base)·x + 3)`` is
  largest at x = 0); the rest covers sin/cos rounding.  Envelopes wider than ``max|B|/16``
  (p ≳ 2.6e5) prove nothing and are not used.

A suspect must also be identifiable: if B itself is unchanged by it (within the same bounds),
fitting it is no evidence and it is not reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from pecli.diff.evidence import (
    Criteria,
    DiffSample,
    Explanation,
    SamplePlan,
    check_tolerance,
    criteria_for,
    worst_gap,
)
from pecli.diff.fitted import (
    Fit,
    confirmed,
    fit_from,
    given,
    identified_causes,
    recipes_compared,
    statistics_cause,
)
from pecli.diff.transforms import (
    layout_and_more,
    permutation_suspects,
    precision_suspect,
    row_order_suspect,
    scale_suspect,
    shift_suspects,
    transposed_suspect,
    transposed_table,
)
from pecli.table import Table, TableLike, as_table, first_position, read_rows

if TYPE_CHECKING:
    from pecli.dtypes import Arr


@dataclass(frozen=True)
class Causes:
    """The causes that fit (best first) and, when none does, the nearest recipe tried for A."""

    found: list[Explanation]
    nearest: str = ""


def explain(
    a: TableLike, b: TableLike, *, atol: float = 0.0, rtol: float = 0.0, equal_nan: bool = True
) -> list[Explanation]:
    """The likely causes of a difference that fit A against reference B (see the module docstring);
    A and B are tables or arrays."""
    a, b = as_table(a, "A"), as_table(b, "B")
    atol, rtol = check_tolerance("atol", atol), check_tolerance("rtol", rtol)
    sample = DiffSample.read(a, b, SamplePlan.make(a.shape, b.shape), first_position(a, b))
    return explain_sample(a, b, sample, atol, rtol, equal_nan).found


def explain_sample(a: Table, b: Table, sample: DiffSample, atol: float, rtol: float, equal_nan: bool) -> Causes:
    """The causes of A's difference from B that fit the sample, best first (module docstring).
    Arithmetic on hostile values (overflow, NaN) only makes a cause not fit: it warns nobody."""
    with np.errstate(all="ignore"):
        return _explain(a, b, sample, atol, rtol, equal_nan)


def _explain(a: Table, b: Table, sample: DiffSample, atol: float, rtol: float, equal_nan: bool) -> Causes:
    (na, d), (nb, db) = a.shape, b.shape
    if a.shape == b.shape[::-1] and (na != nb or not _symmetric_shape_rest(a, b, sample, atol, rtol, equal_nan)):
        found_t = transposed_table(a, b, atol, rtol)
        if found_t or na != nb:
            return Causes(found_t)
    if na == 0 or nb == 0 or d == 0 or db == 0 or not sample.windows:
        return Causes([])
    crit = criteria_for(a, b, sample, atol, rtol, equal_nan)
    if d != db:
        return Causes(_other_width(a, b, sample.first, crit))
    ra, rb, pos, rows = sample.aligned(0)[:4]

    read: dict[int, tuple[Arr, NDArray[np.intp], Arr]] = {}

    def own(t: Table) -> tuple[Arr, NDArray[np.intp], Arr]:
        """A side's sampled rows, their row numbers and positions: the rows the two tables share
        when their lengths are equal, else the side's own rows over its whole length (read once)."""
        if na == nb:
            return (ra if t is a else rb), rows, pos
        if id(t) not in read:
            read[id(t)] = own_rows(t, sample.first)
        return read[id(t)]

    known_b = confirmed(b.recipe, *own(b), crit)
    known_a = confirmed(a.recipe, *own(a), crit)
    fit = Fit([])
    known = [r for r, k in ((a.recipe, known_a), (b.recipe, known_b)) if k is not None and r is not None]
    if known and not all(r.formula for r in known):
        # A learned table has no formula to fit: two of pecli's draws are compared by their
        # parameters and statistics; else a transformation (rows in another order, a factor)
        # explains it, or two draws are compared by their statistics; a draw against anything
        # else is a real difference.
        words: list[str] | None = None
        if len(known) == 2 and not any(r.formula for r in known) and a.recipe and b.recipe:
            words = a.recipe.changes(b.recipe)
        elif len(known) == 1 and not known[0].formula:
            # pecli's draw is rebuilt exactly by its recipe: one of its parameters (a std) may say it.
            if known_b is not None and b.recipe is not None:
                fit = fit_from(b.recipe, a, *own(a), crit, target_is_a=True)
            elif a.recipe is not None:
                fit = fit_from(a.recipe, b, *own(b), crit, target_is_a=False)
            if fit.found:
                return Causes(fit.found)
            other_a, other_b = (None, b) if known_a is not None else (a, None)
            ids, ka, kb = identified_causes(other_a, other_b)
            if ka is not None and b.recipe is not None and not ka.recipe.formula:
                words = ka.recipe.changes(b.recipe)  # identify rebuilt A: another draw's parameters
            elif kb is not None and a.recipe is not None and not kb.recipe.formula:
                words = a.recipe.changes(kb.recipe)
            elif ids.learned:
                words = []
        if words:
            return Causes([statistics_cause(ra, rb, words)])
        moved = transformations(a, b, sample, crit)
        if moved or words is None:
            return Causes(moved)
        return Causes([statistics_cause(ra, rb)])
    if known_b is not None and b.recipe is not None:
        fit = fit_from(b.recipe, a, *own(a), crit, target_is_a=True, items=known_a is None)
    elif known_a is not None and a.recipe is not None:
        fit = fit_from(a.recipe, b, *own(b), crit, target_is_a=False, items=known_b is None)
    if fit.found:
        return Causes(fit.found)
    found = transformations(a, b, sample, crit)
    related = a.shape[0] != b.shape[0] or any(e.name in _REORDERINGS for e in found)
    if found and related and known_a is None and known_b is None:
        # Two files that a shift or a reordering relates: a class or padding row, a layout or a row
        # order is a parameter of their kind once both are identified ("cls false (A) vs true (B)",
        # "row order 2×2 merge windows (A) vs row-major (B)"), said before the transformation.
        _, ka, kb = identified_causes(a, b, worst_gap(ra, rb))
        said = recipes_compared(ka, kb).found if ka is not None and kb is not None else []
        if said and ka is not None and kb is not None and ka.recipe.kind == kb.recipe.kind:
            return Causes([*said, *found])
    if found:
        return Causes(found, fit.nearest)
    # Identify each side whose recipe is unknown (proved on every row), then fit the other side
    # from the recipe found, or compare the two recipes: a 2-D grid against a 1-D sinusoid is
    # "kind sincos2d (A) vs sinusoidal (B)", not "a real difference".
    tried = b.recipe if known_b is not None else a.recipe if known_a is not None else None
    gap = worst_gap(ra, rb)
    found_ids, ka, kb = identified_causes(a if known_a is None else None, b if known_b is None else None, gap)
    ka = given(a.recipe) if known_a is not None and a.recipe is not None else ka
    kb = given(b.recipe) if known_b is not None and b.recipe is not None else kb
    if found_ids.learned == 2:  # every known recipe has a formula here: both are unknown draws
        return Causes([statistics_cause(ra, rb)])
    if found_ids.learned:
        return Causes([], fit.nearest)
    # Fit from a recipe the data matches to rounding: within a loose envelope, "the cause" would
    # be whatever that envelope hides.
    # A side whose own recipe is known keeps its lists as written (recipes_compared), never an item
    # refitted to its rows: 2.000000000000001, not the 2.0 that builds the same float32.
    if kb is not None and kb.tight and kb.recipe is not tried:
        fit = fit_from(kb.recipe, a, *own(a), crit, target_is_a=True, items=ka is None)
    elif ka is not None and ka.tight and ka.recipe is not tried:
        fit = fit_from(ka.recipe, b, *own(b), crit, target_is_a=False, items=kb is None)
    if not fit.found and ka is not None and kb is not None:
        fit = Fit(recipes_compared(ka, kb).found, fit.nearest)
    if not fit.nearest:
        fit = Fit(fit.found, found_ids.nearest)
    return Causes(fit.found, fit.nearest)


#: The transformations that reorder rows or columns: between two identified files, their kind may
#: say the same in its own words (a layout, a row order).
_REORDERINGS = frozenset({"row-order", "columns", "transposed-grid"})


def transformations(a: Table, b: Table, sample: DiffSample, crit: Criteria) -> list[Explanation]:
    """The kind-independent causes (:mod:`pecli.diff.transforms`), the cheapest first."""
    na, nb = a.shape[0], b.shape[0]
    found: list[Explanation] = []
    if na == nb:
        found += permutation_suspects(a, b, sample, crit)
    found += shift_suspects(a, b, sample, crit)
    if na == nb:
        found += transposed_suspect(b, sample, crit)
        found += precision_suspect(a, b, sample, crit)
        found += [] if found else scale_suspect(a, b, sample, crit)
    if not found and na == nb:
        found += layout_and_more(a, b, sample, crit, [shift_suspects])
    return found or row_order_suspect(a, b, sample, crit)


def _other_width(a: Table, b: Table, first: int, crit: Criteria) -> list[Explanation]:
    """Tables of different widths: a side whose recipe its data confirms (or identify proves, for a
    side without one) is fitted to the other side at that side's width (its kind sizes itself: a
    rotary dim, partial rotary), and the parameters that had to change are the cause."""
    recipes = {id(t): t.recipe for t in (a, b)}
    for t in (a, b):
        if t.recipe is not None and confirmed(t.recipe, *own_rows(t, first), crit) is None:
            recipes[id(t)] = None
    too_small = min(a.shape[0], b.shape[0]) < 8 or min(a.shape[1], b.shape[1]) < 4  # nothing to tell a width by
    if recipes[id(b)] is None and recipes[id(a)] is None and not too_small:
        _, ka, kb = identified_causes(a, b)
        recipes = {id(a): ka.recipe if ka is not None and ka.tight else None,
                   id(b): kb.recipe if kb is not None and kb.tight else None}  # fmt: skip
    for known, other, target_is_a in ((b, a, True), (a, b, False)):
        recipe = recipes[id(known)]
        if recipe is None:
            continue
        fit = fit_from(recipe, other, *own_rows(other, first), crit, target_is_a=target_is_a)
        if fit.found:
            return fit.found
    return []


def own_rows(t: Table, first: int) -> tuple[Arr, NDArray[np.intp], Arr]:
    """A table's sampled rows over its whole length (windows as :class:`SamplePlan` spreads them),
    their row numbers and positions: what a recipe fitted to that table is checked on."""
    windows = SamplePlan.make(t.shape, t.shape).a_windows
    idx = np.concatenate([np.arange(s, e) for s, e in windows]) if windows else np.empty(0, dtype=np.intp)
    return read_rows(t, idx), idx, (first + idx).astype(np.float64)


def _symmetric_shape_rest(a: Table, b: Table, sample: DiffSample, atol: float, rtol: float, equal_nan: bool) -> bool:
    """For square tables: whether a cheaper suspect already explains the difference (then the
    transposition, which reads B once more, is not tried)."""
    crit = criteria_for(a, b, sample, atol, rtol, equal_nan)
    return bool(permutation_suspects(a, b, sample, crit) or transposed_suspect(b, sample, crit))


__all__ = ["Causes", "DiffSample", "Explanation", "SamplePlan", "check_tolerance", "explain", "explain_sample"]
