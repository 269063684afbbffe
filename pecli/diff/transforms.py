"""The transformations no recipe parameter expresses, whatever the kind: each a function of A, B,
the sample and the criteria that returns the :class:`~pecli.diff.evidence.Explanation` it fits,
if any.  Their words are about rows and columns only: what a column *means* is the kind's to say
(:mod:`pecli.diff.fitted`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from pecli.diff.evidence import (
    MAX_PADDING_ROWS,
    MAX_SHIFT,
    SLACK_FLOOR,
    Aligned,
    Criteria,
    DiffSample,
    Explanation,
    envelope_note,
    screen_rows,
    take,
    worst_gap,
    zero_rows,
)
from pecli.dtypes import precision_of
from pecli.errors import RecipeError
from pecli.table import Table

if TYPE_CHECKING:
    from pecli.dtypes import Arr


# -- the suspects ----------------------------------------------------------------------------
def _column_orders(d: int) -> Iterable[tuple[str, str, list[int]]]:
    """``(name, detail, order)`` with A = B[:, order], for each column permutation ports make:
    even columns then odd ones (and back), the two halves swapped, each adjacent pair swapped."""
    to_blocks = list(range(0, d, 2)) + list(range(1, d, 2))
    to_alternate = [int(j) for j in np.argsort(to_blocks)]
    blocks_detail = "A's columns are B's even columns, then its odd columns (pairs order → halves order)"
    alternate_detail = "A alternates B's two column halves (halves order → pairs order)"
    if to_blocks == to_alternate:  # d ≤ 4: one swap is both directions
        yield "columns", "A's columns 1 and 2 are B's 2 and 1: A takes B's even columns, then its odd ones", to_blocks
    else:
        yield "columns", blocks_detail, to_blocks
        yield "columns", alternate_detail, to_alternate
    for r in sorted({(d + 1) // 2, d // 2}):
        if 0 < r < d:
            yield (
                "columns",
                f"A is B with its two column blocks swapped (B's last {d - r} columns first)",
                list(range(r, d)) + list(range(r)),
            )
    pairs = [j ^ 1 for j in range(2 * (d // 2))] + ([d - 1] if d % 2 else [])
    yield "columns", "each adjacent column pair of B (0 and 1, 2 and 3, …) is swapped in A", pairs


def permutation_suspects(a: Table, b: Table, sample: DiffSample, crit: Criteria) -> list[Explanation]:
    d = a.shape[1]
    ra, rb, pos = sample.aligned(0)[:3]
    found: list[Explanation] = []
    tried = {tuple(range(d))}
    for name, detail, order in _column_orders(d):
        if tuple(order) in tried:
            continue
        tried.add(tuple(order))
        cols = np.array(order)
        level = crit.fits(ra, pos, take(rb, cols))
        if level is None:
            continue
        # Identifiable only if B itself changes under the permutation.
        if crit.fits(rb, pos, take(rb, cols)) is not None:
            continue
        found.append(Explanation(name, detail + envelope_note(level, crit, pos), worst_gap(ra, rb[:, cols])))
    return found


def _rows_text(which: str, rows: Iterable[int]) -> str:
    listed = [str(r) for r in rows]
    return f"{which}'s row{'s' if len(listed) > 1 else ''} {', '.join(listed)}"


def shift_suspects(a: Table, b: Table, sample: DiffSample, crit: Criteria) -> list[Explanation]:
    """A's row r is B's row r + k (|k| ≤ MAX_SHIFT; k = 0 when only the lengths differ), apart from
    a few rows that are all zeros in one table only (padding rows)."""
    (na, _), (nb, _) = a.shape, b.shape
    for k in sorted(range(-MAX_SHIFT, MAX_SHIFT + 1), key=lambda k: (abs(k), -k)):
        if len(sample.windows) > 1 and not _fits_aligned(sample.aligned(k, first_only=True), crit):
            continue  # fails on the first window: it cannot fit the whole sample
        al = sample.aligned(k)
        if al.rows.size < 2:
            continue
        one_sided = al.zero_a ^ al.zero_b
        padding = int(one_sided.sum())
        if k == 0 and na == nb and not padding:
            continue  # neither shifted nor padded: not this suspect
        if padding > MAX_PADDING_ROWS or 2 * padding >= al.rows.size:
            continue
        keep = np.flatnonzero(~one_sided)
        level = crit.fits(al.a, al.positions, take(al.b), keep)
        if level is None or (k != 0 and _shift_invariant(sample, k, crit)):
            continue
        notes = []
        if (one_sided & al.zero_a).any():
            notes.append(f"{_rows_text('A', al.rows[one_sided & al.zero_a])} all zeros where B has values (padding)")
        if (one_sided & al.zero_b).any():
            notes.append(
                f"{_rows_text('B', al.rows[one_sided & al.zero_b] + k)} all zeros where A has values (padding)"
            )
        if k == 0 and na == nb:
            name, text = "padding-row", "; ".join([*notes, "every other row matches"])
        else:
            name, text = ("length" if k == 0 else "shift"), "; ".join([_shift_text(a, b, sample, k), *notes])
        kpos = al.positions[keep]
        return [Explanation(name, text + envelope_note(level, crit, kpos), worst_gap(al.a[keep], al.b[keep]))]
    return []


def _fits_aligned(al: Aligned, crit: Criteria) -> bool:
    """Whether A's rows fit B's rows r + k, padding rows (zeros on one side only) aside."""
    if al.rows.size < 2:
        return True  # too few rows to rule anything out
    keep = np.flatnonzero(~(al.zero_a ^ al.zero_b))
    return crit.fits(al.a, al.positions, take(al.b), keep) is not None


def _shift_invariant(sample: DiffSample, k: int, crit: Criteria) -> bool:
    """Does B match itself shifted by k?  Then a fitting shift is no evidence."""
    lo: list[Arr] = []
    hi: list[Arr] = []
    positions: list[Arr] = []
    m = abs(k)
    for w in sample.windows:
        if w.b.shape[0] > m:
            lo.append(w.b[:-m])
            hi.append(w.b[m:])
            positions.append(sample.first + w.b0 + np.arange(m, w.b.shape[0], dtype=np.float64))
    if not lo:
        return True
    return crit.fits(np.concatenate(hi), np.concatenate(positions), take(np.concatenate(lo))) is not None


def _shift_text(a: Table, b: Table, sample: DiffSample, k: int) -> str:
    (na, _), (nb, _) = a.shape, b.shape
    w0 = sample.windows[0]  # rows from 0: the window where leading padding rows are
    m = abs(k)
    if k == 0:
        text = f"the first {min(na, nb)} rows match"
    else:
        later = "later" if k > 0 else "earlier"
        text = f"A's row r is B's row r{'+' if k > 0 else '−'}{m}: A starts {m} position{'s' * (m > 1)} {later} than B"
        if b.recipe is not None and b.start + k >= 0:
            text += f" (as if built with start={b.start + k})"
        which, other, rows = ("B", "A", w0.b) if k > 0 else ("A", "B", w0.a)
        text += f"; {_rows_text(which, range(m))} {'have' if m > 1 else 'has'} no counterpart in {other}"
        zeros = np.flatnonzero(zero_rows(rows[:m]))
        if zeros.size:
            text += f" ({'rows' if zeros.size > 1 else 'row'} {', '.join(map(str, zeros))} all zeros: padding)"
    if na != nb:
        text += f"; A has {na} rows, B has {nb}"
    return text


def transposed_suspect(b: Table, sample: DiffSample, crit: Criteria) -> list[Explanation]:
    """A square grid flattened in the other order: A's row i·H+j is B's row j·H+i."""
    n = b.shape[0]
    h = math.isqrt(n)
    if h < 2 or h * h != n:
        return []
    ra, rb, pos, rows = sample.aligned(0)[:4]
    source = rows // h + (rows % h) * h
    w0 = sample.windows[0]
    if w0.b0 == 0 and w0.b.shape[0] >= n:
        rt = w0.b[source]
    else:
        # A long grid: fetch the transposed partners of a spread of sampled rows one by one.
        pick = np.unique(np.linspace(0, rows.size - 1, min(rows.size, 256)).astype(np.intp))
        ra, rb, pos, source = ra[pick], rb[pick], pos[pick], source[pick]
        rt = np.concatenate([np.asarray(b.rows(int(s), int(s) + 1), dtype=np.float64) for s in source])
    level = crit.fits(ra, pos, take(rt))
    if level is None or crit.fits(rb, pos, take(rt)) is not None:
        return []
    detail = f"A's rows are B's in transposed {h}×{h} grid order: A's row i·{h}+j is B's row j·{h}+i"
    return [Explanation("transposed-grid", detail + envelope_note(level, crit, pos), worst_gap(ra, rt))]


#: Largest B (rows × columns) read whole to look for each sampled row of A in it, in any order.
ROW_ORDER_CELLS = 1 << 22


def row_order_suspect(a: Table, b: Table, sample: DiffSample, crit: Criteria) -> list[Explanation]:
    """A's rows are B's rows in another order, whatever the lengths: a grid flattened column by
    column, a class row moved or dropped, rows sorted.  Each of A's sampled rows is looked up in
    the whole of B (nearest row, then the criteria); a plain shift is :func:`shift_suspects`'s,
    and a B whose rows are all alike is no evidence.  Only for B up to :data:`ROW_ORDER_CELLS`."""
    nb, d = b.shape
    if nb < 2 or nb * d > ROW_ORDER_CELLS or not sample.windows:
        return []
    ra = np.concatenate([w.a for w in sample.windows])
    idx = np.concatenate([w.a0 + np.arange(w.a.shape[0]) for w in sample.windows])
    whole = np.asarray(b.rows(0, nb), dtype=np.float64)
    if not np.all(np.isfinite(whole)) or not np.all(np.isfinite(ra)):
        return []  # a nearest row among NaN and inf means nothing
    norms = np.einsum("ij,ij->i", whole, whole)
    pick = screen_rows(idx.size)

    def nearest(rows: Arr) -> NDArray[np.intp]:
        out = np.empty(rows.shape[0], dtype=np.intp)
        step = max(1, (1 << 22) // nb)  # a distance block of at most 32 MB
        for s in range(0, rows.shape[0], step):
            block = rows[s : s + step]
            out[s : s + step] = np.argmin(norms[None, :] - 2.0 * (block @ whole.T), axis=1)
        return out

    level: int | None = None
    for chosen in (pick, np.arange(idx.size)):
        match = nearest(ra[chosen])
        level = crit.level(ra[chosen], whole[match], sample.first + match.astype(np.float64))
        if level is None:
            return []
    assert level is not None
    k = match - idx
    if np.all(k == k[0]):
        return []  # the same order, shifted: shift_suspects says it
    inside = idx < nb
    if inside.any() and crit.level(whole[idx[inside]], whole[match[inside]], sample.first + idx[inside] * 1.0) == 0:
        return []  # B's rows are alike where it matters: any order would fit
    detail = _grid_transposed(idx, match, a.shape[0], nb) or _order_text(idx, match, nb)
    note = envelope_note(level, crit, match.astype(np.float64))
    return [Explanation("row-order", detail + note, worst_gap(ra, whole[match]))]


def _grid_transposed(idx: NDArray[np.intp], match: NDArray[np.intp], na: int, nb: int) -> str:
    """How A's rows come from B's when B is an H×W grid (after 0 or 1 leading rows, a class token)
    and A the same grid flattened column by column (after its own 0 or 1 leading rows)."""
    for lead_b in (0, 1):
        cells = nb - lead_b
        for lead_a in (0, 1):
            if na - lead_a != cells:
                continue
            for h in range(2, cells):
                if cells % h:
                    continue
                w = cells // h
                q = idx - lead_a
                grid = q >= 0
                want = lead_b + (q % h) * w + q // h
                if np.array_equal(match[grid], want[grid]) and np.all(match[~grid] < lead_b):
                    extra = {
                        (0, 0): "",
                        (1, 1): "; row 0 (a class token) is the same in both",
                        (0, 1): "; A's row 0 is not in B's grid",
                        (1, 0): "; B's row 0 (a class token) is not in A",
                    }[(lead_b, lead_a)]
                    return (
                        f"A's rows are B's {h}×{w} grid read column by column: A's row x·{h}+y is B's row "
                        f"y·{w}+x{' + 1' if lead_b else ''}{extra}"
                    )
    return ""


def _order_text(idx: NDArray[np.intp], match: NDArray[np.intp], nb: int) -> str:
    if np.array_equal(match, nb - 1 - idx):
        return f"A's rows are B's in reverse order: A's row r is B's row {nb - 1}−r"
    shown = ", ".join(f"{int(r)}→{int(m)}" for r, m in zip(idx[:6], match[:6], strict=True))
    return f"A's rows are B's rows in another order (A's row → B's row: {shown}, …)"


def precision_suspect(a: Table, b: Table, sample: DiffSample, crit: Criteria) -> list[Explanation]:
    """Differences everywhere, but all within dtype rounding or the float32-angle envelope."""
    ra, rb, pos = sample.aligned(0)[:3]
    level = crit.fits(ra, pos, take(rb))
    if level is None:
        return []
    with np.errstate(invalid="ignore", over="ignore"):
        far = ~((np.abs(ra - rb) <= crit.atol + crit.rtol * np.abs(rb)) | (ra == rb))
    # Rounding touches a large share of the elements; an edit touches a few.  Require ≥ 1 %.
    if far.sum() < max(1.0, 0.01 * far.size):
        return []
    residual = worst_gap(ra, rb)
    if level == 0:
        held = [p for t in (a, b) if (p := precision_of(t.values_dtype)) is not None]  # bfloat16 files too
        coarse = max(held, key=lambda p: p.eps) if held else None
        # The bound in the coarser dtype's own ulps at the table's largest value (float16's
        # 2⁻¹⁰, bfloat16's 2⁻⁷), so the number printed is never another dtype's unit.
        unit = (
            f" = {crit.slack / (coarse.eps * crit.scale):.3g} {coarse.name} ulps at {crit.scale:.3g}" if coarse else ""
        )
        detail = (
            f"every difference is at most {residual:.3g}, within the rounding of "
            f"{coarse.name if coarse else 'the dtype'} ({crit.slack:.2g}{unit}): "
            "the same values, rounded or computed differently"
        )
    else:
        who = _which_side(a, b, ra, rb, sample.aligned(0).rows)
        top = float(pos.max())
        env = float(crit.envelope(np.array([top]))[0])
        detail = (
            f"{who}: every difference is within the envelope 2⁻²²·(1 + p)·{crit.scale:.3g} that float32 "
            f"rounding of ω and p·ω leaves ({env:.2g} at position {int(top)})"
        )
    return [Explanation("precision", detail, residual)]


def _which_side(a: Table, b: Table, ra: Arr, rb: Arr, rows: NDArray[np.intp]) -> str:
    """Which table carries the float32 angles, measured against the exact table of the recipe
    either side has (its kind's :meth:`~pecli.recipe.Recipe.exact_twin`), never assumed from
    which side is a recipe."""
    from pecli.diff.fitted import rows_at

    recipe = b.recipe if b.recipe is not None else a.recipe
    exact = recipe.exact_twin() if recipe is not None else None
    if exact is None or exact.shape != b.shape:
        return "one table was computed with float32 angles"
    try:
        ex = rows_at(exact.rows, rows, ra.shape[1])
    except (RecipeError, ValueError, MemoryError):
        return "one table was computed with float32 angles"
    da, db = float(np.max(np.abs(ra - ex))), float(np.max(np.abs(rb - ex)))
    side = "A carries" if da > 4 * db else "B carries" if db > 4 * da else "both carry"
    return f"{side} float32 angles (from the exact table: A {da:.2g}, B {db:.2g})"


# -- a constant multiplier -------------------------------------------------------------------
def scale_suspect(a: Table, b: Table, sample: DiffSample, crit: Criteria) -> list[Explanation]:
    """A is B times a constant (an attention factor or mscale applied once too often, or lost)."""
    ra, rb, pos = sample.aligned(0)[:3]
    with np.errstate(invalid="ignore", over="ignore"):
        finite = np.isfinite(ra) & np.isfinite(rb)
        norm = float(np.sum(np.where(finite, rb * rb, 0.0)))
        if norm == 0 or not math.isfinite(norm):
            return []
        factor = float(np.sum(np.where(finite, ra * rb, 0.0)) / norm)
    # Factors people apply by mistake are modest (an attention factor, mscale, a sign); a tiny
    # factor would "fit" any table that is small beside B.
    if not math.isfinite(factor) or not 1 / 64 <= abs(factor) <= 64 or abs(factor - 1) * crit.scale <= crit.slack:
        return []
    level = crit.fits(ra, pos, lambda i: rb[i] * factor)
    if level is None:
        return []
    detail = (
        f"A is B times {factor:.6g} everywhere (1/{1 / factor:.6g}): a constant factor, such as an attention "
        "factor or mscale applied once too often, or left out"
    )
    return [Explanation("scale", detail + envelope_note(level, crit, pos), worst_gap(ra, rb * factor))]


# -- two causes together -----------------------------------------------------------------------
def layout_and_more(
    a: Table, b: Table, sample: DiffSample, crit: Criteria, more: list[Callable[..., list[Explanation]]]
) -> list[Explanation]:
    """A column permutation *and* one more cause (shifted rows): each column order is undone on
    A's sample, then the other suspects are tried on what is left."""
    d = a.shape[1]
    for name, detail, order in _column_orders(d):
        undone = sample.with_a_columns(np.argsort(np.array(order)))
        for suspect in more:
            for second in suspect(a, b, undone, crit):
                if second.name in ("precision", name):
                    continue
                text = f"{detail}; and then {second.name}: {second.detail}"
                return [Explanation(f"{name} + {second.name}", text, second.residual)]
    return []


def transposed_table(a: Table, b: Table, atol: float, rtol: float) -> list[Explanation]:
    """A is B transposed (``A[r, j] = B[j, r]``), checked on up to 64 of A's rows against B's
    columns (one pass over B).  Square tables too, unless B is symmetric."""
    (na, da), (nb, db) = a.shape, b.shape
    if (na, da) != (db, nb) or not na or not da:
        return []
    rows = np.unique(np.linspace(0, na - 1, min(na, 64)).astype(np.intp))
    mine = np.concatenate([np.asarray(a.rows(int(r), int(r) + 1), dtype=np.float64) for r in rows])
    cols = np.empty((nb, rows.size))
    step = b.block_rows()
    for r0 in range(0, nb, step):
        cols[r0 : r0 + step] = np.asarray(b.rows(r0, min(nb, r0 + step)), dtype=np.float64)[:, rows]
    theirs = cols.T
    scale = float(np.nanmax(np.abs(theirs))) if theirs.size else 1.0
    slack = max(SLACK_FLOOR * scale, atol)
    with np.errstate(invalid="ignore", over="ignore"):
        if not np.all(np.abs(mine - theirs) <= slack + rtol * np.abs(theirs)):
            return []
        if na == da:  # identifiable only if B is not its own transpose
            own = np.concatenate([np.asarray(b.rows(int(r), int(r) + 1), dtype=np.float64) for r in rows])
            if np.all(np.abs(own - theirs) <= slack):
                return []
    detail = (
        f"A is B transposed: A's row r is B's column r ({na}×{da} against {nb}×{db}; checked on {rows.size} of "
        "A's rows against B's columns, in one pass over B)"
    )
    return [Explanation("transposed", detail, float(np.max(np.abs(mine - theirs))))]
