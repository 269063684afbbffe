"""Why two tables differ: :func:`explain` tries the usual suspects (layout, cos-first, shifted
rows, a padding row, transposed grid order, float32 angles, another base) and reports one only
when it *fits*: after undoing it, every sampled element of A is within ``max(tolerance, slack)``
of B, where

* ``slack = max(2⁻²⁰, 4·ε) · max|B|`` with ε the machine epsilon of the coarser of the two dtypes:
  2⁻²⁰ ≈ 9.5e-7 is 8 float32 ulps at 1.0, about where float32 framework tables of ~1000 rows
  and an exact table agree (≤ 4.8e-7 measured for fairseq's 1026×512), yet five orders of
  magnitude below what a wrong layout or formula produces (0.1–2); 4·ε widens it for float16;
* or, for a "float32 angles" fit, the envelope ``2⁻²²·(1 + max(1, p)) · max|B|`` at position p.
  A float32 pipeline rounds the exponent 2i/d, ``base^x``, ``ω`` and ``p·ω``, which moves the
  angle by at most ``p·ω·(ln(base)·x + 3)·2⁻²⁴ ≤ 3·2⁻²⁴·p`` rad (``base^−x·(ln(base)·x + 3)`` is
  largest at x = 0); the rest covers sin/cos rounding.  Envelopes wider than ``max|B|/16``
  (p ≳ 2.6e5) prove nothing and are not used.

A suspect must also be identifiable: if B itself is unchanged by it (within the same bounds),
fitting it is no evidence and it is not reported.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from pecli.errors import PecliInputError, RecipeError
from pecli.fitting import fit_base, pair_frequencies
from pecli.kinds.sinusoidal import Sinusoidal
from pecli.table import Table, first_position

Arr = NDArray[np.float64]

#: Rows of each table that :func:`explain` looks at (all of them for shorter tables).
SAMPLE_ROWS = 4096
#: Bytes of float64 sample per table; wide tables get fewer sample rows.
SAMPLE_BYTES = 64 << 20
#: Largest row shift tried, in both directions.
MAX_SHIFT = 8
#: At most this many all-zero rows are set aside as padding rows.
MAX_PADDING_ROWS = 8

_F32_ANGLE = 2.0**-22  # 4·2⁻²⁴ rad of angle error per unit of position (see the module docstring)
_ENVELOPE_CAP = 1 / 16
_SLACK_FLOOR = 2.0**-20
_SCREEN = 16  # head and tail rows tried before a whole sample is checked


@dataclass(frozen=True, slots=True)
class Explanation:
    """A suspect that fits: its name, what it means here, and the largest ``|a − b|`` left after undoing it."""

    name: str
    detail: str
    residual: float


def check_tolerance(name: str, value: float) -> float:
    """``value`` as a tolerance (finite, ≥ 0), or a one-line error naming the option."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise PecliInputError(f"{name} must be a finite number ≥ 0, got {value!r}: e.g. --{name} 1e-6")
    return float(value)


# -- the sample the suspects are tested on ---------------------------------------------------
Span = tuple[int, int]


@dataclass(frozen=True)
class SamplePlan:
    """Row windows to sample: all rows of short tables, else evenly spread windows of contiguous
    rows (contiguous so that shifts and angle increments can be seen).  B's windows have a margin
    of ``MAX_SHIFT`` rows each side for the shift suspect."""

    a_windows: list[Span]
    b_windows: list[Span]

    @classmethod
    def make(cls, shape_a: tuple[int, int], shape_b: tuple[int, int]) -> SamplePlan:
        na, d = shape_a
        nb = shape_b[0]
        rows = min(SAMPLE_ROWS, max(16, SAMPLE_BYTES // (8 * max(1, d, shape_b[1]))))
        if na <= rows:
            a_windows = [(0, na)] if na else []
        else:
            length = min(64, rows)
            count = max(1, rows // length)
            starts = np.unique(np.rint(np.linspace(0, na - length, count)).astype(int))
            a_windows = [(int(s), int(s) + length) for s in starts]
        b_windows = [(max(0, s - MAX_SHIFT), min(nb, e + MAX_SHIFT)) for s, e in a_windows]
        return cls(a_windows, [(s, max(s, e)) for s, e in b_windows])


class _Window:
    """A's rows ``[a0, a0 + len(a))`` and B's rows ``[b0, b0 + len(b))``, with their all-zero rows."""

    def __init__(self, a0: int, a: Arr, b0: int, b: Arr) -> None:
        self.a0, self.a, self.b0, self.b = a0, a, b0, b
        self.zero_a, self.zero_b = _zero_rows(a), _zero_rows(b)


class _Aligned(NamedTuple):
    """A's sampled rows r beside B's rows r + k."""

    a: Arr
    b: Arr
    positions: Arr  # of B's rows
    rows: NDArray[np.intp]  # A's row indices
    zero_a: NDArray[np.bool_]
    zero_b: NDArray[np.bool_]


@dataclass(frozen=True)
class DiffSample:
    windows: list[_Window]
    first: int  # position of B's row 0
    _aligned: dict[int, _Aligned] = field(default_factory=dict, repr=False)

    @classmethod
    def from_windows(cls, plan: SamplePlan, parts_a: list[Arr], parts_b: list[Arr], first: int) -> DiffSample:
        """The sample from the planned windows' rows, already read (``compare`` copies them as it streams)."""
        ws = [
            _Window(sa, pa, sb, pb)
            for (sa, _), pa, (sb, _), pb in zip(plan.a_windows, parts_a, plan.b_windows, parts_b, strict=True)
        ]
        return cls(ws, first)

    @classmethod
    def read(cls, a: Table, b: Table, plan: SamplePlan, first: int) -> DiffSample:
        def rows(t: Table, s: int, e: int) -> Arr:
            return np.asarray(t.rows(s, e), dtype=np.float64)

        ws = [
            _Window(sa, rows(a, sa, ea), sb, rows(b, sb, eb))
            for (sa, ea), (sb, eb) in zip(plan.a_windows, plan.b_windows, strict=True)
        ]
        return cls(ws, first)

    def aligned(self, k: int) -> _Aligned:
        """A's sampled rows r with B's rows r + k (views when the sample is one window)."""
        if k not in self._aligned:
            parts: list[tuple[Arr, Arr, NDArray[np.intp], NDArray[np.bool_], NDArray[np.bool_]]] = []
            for w in self.windows:
                lo = max(w.a0, w.b0 - k)
                hi = min(w.a0 + w.a.shape[0], w.b0 + w.b.shape[0] - k)
                if lo < hi:
                    ia, ib = slice(lo - w.a0, hi - w.a0), slice(lo + k - w.b0, hi + k - w.b0)
                    parts.append((w.a[ia], w.b[ib], np.arange(lo, hi), w.zero_a[ia], w.zero_b[ib]))
            if len(parts) == 1:
                a, b, rows, za, zb = parts[0]
            elif parts:
                a, b, rows, za, zb = (np.concatenate(p) for p in zip(*parts, strict=True))
            else:
                d = self.windows[0].a.shape[1] if self.windows else 0
                a, b, rows = np.empty((0, d)), np.empty((0, d)), np.empty(0, dtype=np.intp)
                za = zb = np.empty(0, dtype=bool)
            self._aligned[k] = _Aligned(a, b, (self.first + rows + k).astype(np.float64), rows, za, zb)
        return self._aligned[k]


def _zero_rows(x: Arr) -> NDArray[np.bool_]:
    zero: NDArray[np.bool_] = ~np.any(x != 0, axis=1)
    return zero


# -- fitting ---------------------------------------------------------------------------------
Index = NDArray[np.intp] | slice
Expected = Callable[[Index], Arr]
"""B's sampled rows after a suspect is applied, for a row selection (so a screen can build just a few)."""


@dataclass(frozen=True)
class _Criteria:
    """When does A match (transformed) B?  Level 0: within tolerance or ``slack``; level 1: within
    the float32-angle envelope; ``None``: no."""

    atol: float
    rtol: float
    equal_nan: bool
    slack: float
    scale: float

    def envelope(self, positions: Arr) -> Arr:
        return _F32_ANGLE * (1.0 + np.maximum(1.0, np.abs(positions))) * self.scale

    def level(self, a: Arr, b: Arr, positions: Arr) -> int | None:
        if a.size == 0:
            return None  # no overlap: nothing proved
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(a - b)
            exact_tol = self.atol == 0 and self.rtol == 0
            bound = self.slack if exact_tol else np.maximum(self.atol + self.rtol * np.abs(b), self.slack)
            # Most elements pass or most fail; look closer only at the few that did not pass.
            rows, cols = np.nonzero(~(diff <= bound))
            if not rows.size:
                return 0
            av, bv = a[rows, cols], b[rows, cols]
            other = ~((av == bv) | (self.equal_nan & np.isnan(av) & np.isnan(bv)))
            rows, cols = rows[other], cols[other]
            if not rows.size:
                return 0
            env = self.envelope(positions)
            if env.max() > _ENVELOPE_CAP * self.scale:
                return None
            bound_v = bound if isinstance(bound, float) else bound[rows, cols]
            return 1 if bool(np.all(diff[rows, cols] <= np.maximum(bound_v, env[rows]))) else None

    def fits(self, a: Arr, positions: Arr, expected: Expected, keep: NDArray[np.intp] | None = None) -> int | None:
        """``level(a, expected)`` over the rows ``keep`` (default all), screened on a few head and tail
        rows first so that a suspect that does not fit costs almost nothing."""
        n = a.shape[0] if keep is None else keep.size
        if n > 4 * _SCREEN:
            pick = np.r_[0:_SCREEN, n - _SCREEN : n]
            if keep is not None:
                pick = keep[pick]
            if self.level(a[pick], expected(pick), positions[pick]) is None:
                return None
        rows: Index = slice(None) if keep is None else keep
        return self.level(a[rows], expected(rows), positions[rows])


def _take(x: Arr, cols: NDArray[np.intp] | None = None) -> Expected:
    """Rows of ``x`` (with columns reordered by ``cols``) as an :data:`Expected`."""

    def expected(i: Index) -> Arr:
        rows = x[i]
        return rows if cols is None else rows[:, cols]

    return expected


def _rebuild(positions: Arr, d: int, base: float, layout: str) -> Expected:
    """The sinusoid with ``base`` at the sampled positions, as an :data:`Expected`."""

    def expected(i: Index) -> Arr:
        return _sinusoid(positions[i], d, base, layout)

    return expected


def _criteria(a: Table, b: Table, sample: DiffSample, atol: float, rtol: float, equal_nan: bool) -> _Criteria:
    eps = [float(np.finfo(t.dtype).eps) for t in (a, b) if t.dtype.kind == "f"]
    peak = 0.0
    for w in sample.windows:
        if w.b.size:
            top = max(float(w.b.max()), -float(w.b.min()))
            if not math.isfinite(top):  # rare: only then pay for masking out NaN and inf
                finite = w.b[np.isfinite(w.b)]
                top = float(np.abs(finite).max()) if finite.size else 0.0
            peak = max(peak, top)
    scale = peak if peak > 0 else 1.0
    return _Criteria(atol, rtol, equal_nan, max(_SLACK_FLOOR, 4 * max(eps, default=0.0)) * scale, scale)


def _residual(a: Arr, b: Arr) -> float:
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.abs(a - b)
    d = d[np.isfinite(d)]
    return float(d.max()) if d.size else 0.0


def _envelope_note(level: int, crit: _Criteria, positions: Arr) -> str:
    if level == 0 or not positions.size:
        return ""
    top = float(positions.max())
    env = float(crit.envelope(np.array([top]))[0])
    return f"; the rest is float32-angle rounding (within {env:.2g} at position {int(top)})"


# -- the suspects ----------------------------------------------------------------------------
def explain(a: Table, b: Table, *, atol: float = 0.0, rtol: float = 0.0, equal_nan: bool = True) -> list[Explanation]:
    """The usual causes of a difference that fit A against reference B (see the module docstring)."""
    atol, rtol = check_tolerance("atol", atol), check_tolerance("rtol", rtol)
    sample = DiffSample.read(a, b, SamplePlan.make(a.shape, b.shape), first_position(a, b))
    return explain_sample(a, b, sample, atol, rtol, equal_nan)


def explain_sample(
    a: Table, b: Table, sample: DiffSample, atol: float, rtol: float, equal_nan: bool
) -> list[Explanation]:
    (na, d), (nb, db) = a.shape, b.shape
    if d != db or na == 0 or nb == 0 or d == 0 or not sample.windows:
        return []
    crit = _criteria(a, b, sample, atol, rtol, equal_nan)
    found: list[Explanation] = []
    if na == nb:
        found += _permutation_suspects(a, b, sample, crit)
    found += _shift_suspects(a, b, sample, crit)
    if na == nb:
        found += _transposed_suspect(b, sample, crit)
        found += _precision_suspect(a, b, sample, crit)
        # Fitting a base rebuilds the sample, so only when nothing simpler fits.  (A base so close
        # to B's that all differences stay within the float32 envelope is reported as precision.)
        found += [] if found else _base_suspect(a, b, sample, crit)
    return found


def _column_orders(a: Table, b: Table, d: int) -> Iterable[tuple[str, str, list[int]]]:
    """``(name, detail, order)`` with A = B[:, order], for each column suspect."""
    to_split = list(range(0, d, 2)) + list(range(1, d, 2))
    to_inter = [int(j) for j in np.argsort(to_split)]
    split_detail = (
        "A is split ([sin…|cos…]) where B is interleaved (sin, cos, …): A's columns are B's even columns, "
        "then its odd columns"
    )
    inter_detail = "A is interleaved (sin, cos, …) where B is split ([sin…|cos…]): A alternates B's two column blocks"
    if to_split == to_inter:  # d ≤ 4: one swap serves both directions; the recipes say which it is
        b_split = getattr(b.recipe, "layout", None) == "split" or getattr(a.recipe, "layout", None) == "interleaved"
        yield "layout", inter_detail if b_split else split_detail, to_split
    else:
        yield "layout", split_detail, to_split
        yield "layout", inter_detail, to_inter
    for r in sorted({(d + 1) // 2, d // 2}):
        if 0 < r < d:
            yield (
                "cos-first",
                f"A is B with its two column blocks swapped (B's last {d - r} columns first): one table is "
                "[cos…|sin…] where the other is [sin…|cos…]",
                list(range(r, d)) + list(range(r)),
            )
    pairs = [j ^ 1 for j in range(2 * (d // 2))] + ([d - 1] if d % 2 else [])
    yield "cos-first", "each (sin, cos) column pair of B is swapped in A: one table is cos-first interleaved", pairs


def _permutation_suspects(a: Table, b: Table, sample: DiffSample, crit: _Criteria) -> list[Explanation]:
    d = a.shape[1]
    ra, rb, pos = sample.aligned(0)[:3]
    found: list[Explanation] = []
    tried = {tuple(range(d))}
    for name, detail, order in _column_orders(a, b, d):
        if tuple(order) in tried:
            continue
        tried.add(tuple(order))
        cols = np.array(order)
        level = crit.fits(ra, pos, _take(rb, cols))
        if level is None:
            continue
        # Identifiable only if B itself changes under the permutation.
        if crit.fits(rb, pos, _take(rb, cols)) is not None:
            continue
        found.append(Explanation(name, detail + _envelope_note(level, crit, pos), _residual(ra, rb[:, cols])))
    return found


def _rows_text(which: str, rows: Iterable[int]) -> str:
    listed = [str(r) for r in rows]
    return f"{which}'s row{'s' if len(listed) > 1 else ''} {', '.join(listed)}"


def _shift_suspects(a: Table, b: Table, sample: DiffSample, crit: _Criteria) -> list[Explanation]:
    """A's row r is B's row r + k (|k| ≤ MAX_SHIFT; k = 0 when only the lengths differ), apart from
    a few rows that are all zeros in one table only (padding rows)."""
    (na, _), (nb, _) = a.shape, b.shape
    for k in sorted(range(-MAX_SHIFT, MAX_SHIFT + 1), key=lambda k: (abs(k), -k)):
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
        level = crit.fits(al.a, al.positions, _take(al.b), keep)
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
        return [Explanation(name, text + _envelope_note(level, crit, kpos), _residual(al.a[keep], al.b[keep]))]
    return []


def _shift_invariant(sample: DiffSample, k: int, crit: _Criteria) -> bool:
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
    return crit.fits(np.concatenate(hi), np.concatenate(positions), _take(np.concatenate(lo))) is not None


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
        zeros = np.flatnonzero(_zero_rows(rows[:m]))
        if zeros.size:
            text += f" ({'rows' if zeros.size > 1 else 'row'} {', '.join(map(str, zeros))} all zeros: padding)"
    if na != nb:
        text += f"; A has {na} rows, B has {nb}"
    return text


def _transposed_suspect(b: Table, sample: DiffSample, crit: _Criteria) -> list[Explanation]:
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
    level = crit.fits(ra, pos, _take(rt))
    if level is None or crit.fits(rb, pos, _take(rt)) is not None:
        return []
    detail = f"A's rows are B's in transposed {h}×{h} grid order: A's row i·{h}+j is B's row j·{h}+i"
    return [Explanation("transposed-grid", detail + _envelope_note(level, crit, pos), _residual(ra, rt))]


def _precision_suspect(a: Table, b: Table, sample: DiffSample, crit: _Criteria) -> list[Explanation]:
    """Differences everywhere, but all within dtype rounding or the float32-angle envelope."""
    ra, rb, pos = sample.aligned(0)[:3]
    level = crit.fits(ra, pos, _take(rb))
    if level is None:
        return []
    with np.errstate(invalid="ignore", over="ignore"):
        far = ~((np.abs(ra - rb) <= crit.atol + crit.rtol * np.abs(rb)) | (ra == rb))
    # Rounding touches a large share of the elements; an edit touches a few.  Require ≥ 1 %.
    if far.sum() < max(1.0, 0.01 * far.size):
        return []
    residual = _residual(ra, rb)
    if level == 0:
        floats = [t.dtype for t in (a, b) if t.dtype.kind == "f"]
        coarse = max(floats, key=lambda t: float(np.finfo(t).eps)).name if floats else "the dtype"
        detail = (
            f"every difference is at most {residual:.3g}, within the rounding of {coarse} ({crit.slack:.2g}): "
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
    either side has, never assumed from which side is a recipe."""
    recipe = b.recipe if b.recipe is not None else a.recipe
    try:
        exact = replace(recipe, compute="exact")  # type: ignore[type-var]
        runs = np.split(rows, np.flatnonzero(np.diff(rows) != 1) + 1)
        ex = np.concatenate([np.asarray(exact.rows(int(r[0]), int(r[-1]) + 1), dtype=np.float64) for r in runs])
    except (RecipeError, TypeError, IndexError, ValueError):  # no recipe, no pipelines, no rows
        return "one table was computed with float32 angles"
    da, db = float(np.max(np.abs(ra - ex))), float(np.max(np.abs(rb - ex)))
    side = "A carries" if da > 4 * db else "B carries" if db > 4 * da else "both carry"
    return f"{side} float32 angles (from the exact table: A {da:.2g}, B {db:.2g})"


# -- another base ----------------------------------------------------------------------------
def _pairs(layout: str, d: int) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """The sin and cos column of each frequency that has both."""
    return Sinusoidal(1, d, layout=layout).pairs()  # type: ignore[arg-type]


def _sinusoid(positions: Arr, d: int, base: float, layout: str) -> Arr:
    """A sinusoidal table in float64 (angles p·ω in float64: ample for a fit at float32 level)."""
    omega = np.power(base, -2.0 * np.arange((d + 1) // 2) / d)
    angles = positions[:, None] * omega[None, :]
    sin_cols = np.arange(0, d, 2) if layout == "interleaved" else np.arange((d + 1) // 2)
    cos_cols = _pairs(layout, d)[1]
    out = np.empty((positions.size, d))
    out[:, sin_cols] = np.sin(angles)
    out[:, cos_cols] = np.cos(angles[:, : d // 2])
    return out


@dataclass(frozen=True)
class _BaseFit:
    base: float  # the roundest number that rebuilds the table
    estimate: float  # the least-squares value
    level: int
    residual: float


def _fit_table_base(
    rows: Arr, windows: list[tuple[Arr, Arr]], pos: Arr, layout: str, crit: _Criteria
) -> _BaseFit | None:
    """The base a sinusoidal table was built with, proven by rebuilding the sampled rows with it."""
    d = rows.shape[1]
    omega = pair_frequencies(windows, *_pairs(layout, d))
    # ω_0 = 1 for every base of the paper's rule; anything else is not this formula.
    paper = omega is not None and omega.size >= 2 and abs(omega[0] - 1.0) <= 1e-3
    estimate = fit_base(omega, 2.0 * np.arange(omega.size) / d) if paper and omega is not None else None
    if estimate is None:
        return None
    # Real bases are round numbers (1e4, 5e5): try those before the raw estimate, and prefer the
    # roundest that fits exactly over one that fits only within the float32-angle envelope.
    candidates = sorted({float(f"{estimate:.{digits}g}") for digits in range(1, 16)}, key=lambda c: len(repr(c)))
    n = rows.shape[0]
    pick = np.r_[0:_SCREEN, n - _SCREEN : n] if n > 4 * _SCREEN else np.arange(n)
    screened = []
    for rank, base in enumerate(c for c in candidates if c > 1):
        level = crit.level(rows[pick], _sinusoid(pos[pick], d, base, layout), pos[pick])
        if level is not None:
            screened.append((level, rank, base))
    for _, _, base in sorted(screened):
        rebuilt = _sinusoid(pos, d, base, layout)
        level = crit.level(rows, rebuilt, pos)
        if level is not None:
            return _BaseFit(base, estimate, level, _residual(rows, rebuilt))
    return None


def _paper_recipe(t: Table) -> Sinusoidal | None:
    """The table's recipe when it is the paper's formula in one of the two layouts the base fit knows."""
    r = t.recipe
    if isinstance(r, Sinusoidal) and r.layout != "cos-first" and r.freq == "paper" and r.min_timescale == 1:
        if r.padding_idx is None and r.odd == "sin":
            return r
    return None


def _base_suspect(a: Table, b: Table, sample: DiffSample, crit: _Criteria) -> list[Explanation]:
    """A is B's sinusoid with another base."""
    d = a.shape[1]
    if d < 4:
        return []
    ra, rb, pos = sample.aligned(0)[:3]
    recipe_b = _paper_recipe(b)
    recipe = recipe_b or _paper_recipe(a)
    wins_a = [(w.a, sample.first + w.a0 + np.arange(w.a.shape[0], dtype=np.float64)) for w in sample.windows]
    wins_b = [
        (w.b[w.a0 - w.b0 : w.a0 - w.b0 + w.a.shape[0]], p) for w, (_, p) in zip(sample.windows, wins_a, strict=True)
    ]
    for layout in [recipe.layout] if recipe is not None else ["interleaved", "split"]:
        # A first: for most tables it fails at once (not on the unit circle, ω_0 ≠ 1, no base rebuilds it).
        fit_a = _fit_table_base(ra, wins_a, pos, layout, crit)
        if fit_a is None:
            continue
        if recipe_b is not None:
            base_b, how = recipe_b.base, "B's recipe has"
            if math.isclose(fit_a.base, base_b, rel_tol=1e-9):
                continue
            if crit.fits(rb, pos, _rebuild(pos, d, base_b, layout)) is None:
                continue  # B is not the table its recipe describes
        else:
            fit_b = _fit_table_base(rb, wins_b, pos, layout, crit)
            if fit_b is None:
                continue
            base_b, how = fit_b.base, "B fits"
        if math.isclose(fit_a.base, base_b, rel_tol=1e-9):
            continue
        detail = f"A's angles fit base {fit_a.base:.10g}"
        t2t = d / (2 * (d // 2 - 1)) if d > 3 else 0.0
        if t2t and math.isclose(fit_a.base, base_b**t2t, rel_tol=1e-6):
            # ω_i = base^(−i/(half−1)) is base'^(−2i/d) with base' = base^(d/(2(half−1))).
            detail += (
                f" = {base_b:g}^({d}/{2 * (d // 2 - 1)}), the tensor2tensor/fairseq frequencies base^(−i/(half−1))"
            )
        detail += f" (least-squares estimate {fit_a.estimate:.7g}); {how} base {base_b:.10g}"
        return [Explanation("base", detail + _envelope_note(fit_a.level, crit, pos), fit_a.residual)]
    return []
