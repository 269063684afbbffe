"""What the likely causes of a difference are tested on: a sample of both tables, aligned row by
row, and the criteria a cause must meet to be reported (see :mod:`pecli.diff.causes`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numpy.typing import NDArray

from pecli.dtypes import precision_of
from pecli.errors import PecliInputError
from pecli.table import Table

if TYPE_CHECKING:
    from pecli.dtypes import Arr
    from pecli.recipe import Recipe


#: Rows of each table that :func:`explain` looks at (all of them for shorter tables).
SAMPLE_ROWS = 4096
#: Bytes of float64 sample per table; wide tables get fewer sample rows.
SAMPLE_BYTES = 4 << 20
#: Largest row shift tried, in both directions.
MAX_SHIFT = 8
#: At most this many all-zero rows are set aside as padding rows.
MAX_PADDING_ROWS = 8

_F32_ANGLE = 2.0**-22  # 4·2⁻²⁴ rad of angle error per unit of position (see the module docstring)
ENVELOPE_CAP = 1 / 16
SLACK_FLOOR = 2.0**-20
SCREEN_ROWS = 16  # head and tail rows tried before a whole sample is checked


def screen_rows(n: int) -> NDArray[np.intp]:
    """The head and tail rows of an ``n``-row sample that a cause is screened on first (all of a
    short one)."""
    picked: NDArray[np.intp] = np.r_[0:SCREEN_ROWS, n - SCREEN_ROWS : n] if n > 4 * SCREEN_ROWS else np.arange(n)
    return picked


@dataclass(frozen=True, slots=True)
class Explanation:
    """A suspect that fits: its name, what it means here, and the largest ``|a − b|`` left after
    undoing it (NaN when it was not measured on rows: two recipes compared).  ``proved``: shown
    on every row of both tables (identify's proof), not only on the sampled rows."""

    name: str
    detail: str
    residual: float
    proved: bool = False
    #: The side (``"A"`` or ``"B"``) whose rows a recipe was fitted to, and that recipe (a recipe's changes).
    fitted: tuple[str, Recipe] | None = None

    @property
    def text(self) -> str:
        """The cause as ``diff`` prints it: a recipe's changes are their own name."""
        return self.detail if self.name == "recipe" else f"{self.name}: {self.detail}"


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
        # B's rows around each of A's windows, within B: past B's end (A the longer table) a window
        # is empty, and the suspects see only the rows both tables have.
        b_windows = [(min(nb, max(0, s - MAX_SHIFT)), min(nb, e + MAX_SHIFT)) for s, e in a_windows]
        return cls(a_windows, [(s, max(s, e)) for s, e in b_windows])


class SampleWindow:
    """A's rows ``[a0, a0 + len(a))`` and B's rows ``[b0, b0 + len(b))``, with their all-zero rows."""

    def __init__(self, a0: int, a: Arr, b0: int, b: Arr) -> None:
        self.a0, self.a, self.b0, self.b = a0, a, b0, b
        self.zero_a, self.zero_b = zero_rows(a), zero_rows(b)


class Aligned(NamedTuple):
    """A's sampled rows r beside B's rows r + k."""

    a: Arr
    b: Arr
    positions: Arr  # of B's rows
    rows: NDArray[np.intp]  # A's row indices
    zero_a: NDArray[np.bool_]
    zero_b: NDArray[np.bool_]


@dataclass(frozen=True)
class DiffSample:
    windows: list[SampleWindow]
    first: int  # position of B's row 0
    _aligned: dict[int, Aligned] = field(default_factory=dict, repr=False)

    def with_a_columns(self, order: NDArray[np.intp]) -> DiffSample:
        """The same sample with A's columns taken in ``order`` (a layout undone, to test a second cause)."""
        ws = [SampleWindow(w.a0, w.a[:, order], w.b0, w.b) for w in self.windows]
        return DiffSample(ws, self.first)

    @classmethod
    def from_windows(cls, plan: SamplePlan, parts_a: list[Arr], parts_b: list[Arr], first: int) -> DiffSample:
        """The sample from the planned windows' rows, already read (``compare`` copies them as it streams)."""
        ws = [
            SampleWindow(sa, pa, sb, pb)
            for (sa, _), pa, (sb, _), pb in zip(plan.a_windows, parts_a, plan.b_windows, parts_b, strict=True)
        ]
        return cls(ws, first)

    @classmethod
    def read(cls, a: Table, b: Table, plan: SamplePlan, first: int) -> DiffSample:
        def rows(t: Table, s: int, e: int) -> Arr:
            return np.asarray(t.rows(s, e), dtype=np.float64)

        ws = [
            SampleWindow(sa, rows(a, sa, ea), sb, rows(b, sb, eb))
            for (sa, ea), (sb, eb) in zip(plan.a_windows, plan.b_windows, strict=True)
        ]
        return cls(ws, first)

    def aligned(self, k: int, first_only: bool = False) -> Aligned:
        """A's sampled rows r with B's rows r + k (views when the sample is one window).  Only the
        unshifted alignment is kept: every suspect asks for it, each shift is asked once, and
        keeping them all would hold a copy of the sample per shift.  ``first_only``: the first
        window alone, as views (a screen: a suspect that fails on some rows fails on all)."""
        if k in self._aligned and not first_only:
            return self._aligned[k]
        parts: list[tuple[Arr, Arr, NDArray[np.intp], NDArray[np.bool_], NDArray[np.bool_]]] = []
        for w in self.windows[:1] if first_only else self.windows:
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
        found = Aligned(a, b, (self.first + rows + k).astype(np.float64), rows, za, zb)
        if k == 0 and not first_only:
            self._aligned[k] = found
        return found


def zero_rows(x: Arr) -> NDArray[np.bool_]:
    zero: NDArray[np.bool_] = ~np.any(x != 0, axis=1)
    return zero


# -- fitting ---------------------------------------------------------------------------------
Index = NDArray[np.intp] | slice
Expected = Callable[[Index], "Arr"]
"""B's sampled rows after a suspect is applied, for a row selection (so a screen can build just a few)."""


@dataclass(frozen=True)
class Criteria:
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
            # A difference beyond every bound and the whole envelope fails at once (the usual verdict
            # on a suspect that does not fit: no need to find each element that does not pass).
            top = float(np.fmax.reduce(diff, axis=None))
            widest = self.slack if exact_tol else float(np.fmax.reduce(bound, axis=None))
            if top > widest and top > float(self.envelope(positions).max()):
                return None
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
            if env.max() > ENVELOPE_CAP * self.scale:
                return None
            bound_v = bound if isinstance(bound, float) else bound[rows, cols]
            return 1 if bool(np.all(diff[rows, cols] <= np.maximum(bound_v, env[rows]))) else None

    def fits(self, a: Arr, positions: Arr, expected: Expected, keep: NDArray[np.intp] | None = None) -> int | None:
        """``level(a, expected)`` over the rows ``keep`` (default all), screened on a few head and tail
        rows first so that a suspect that does not fit costs almost nothing."""
        n = a.shape[0] if keep is None else keep.size
        if n > 4 * SCREEN_ROWS:
            pick = screen_rows(n)
            if keep is not None:
                pick = keep[pick]
            if self.level(a[pick], expected(pick), positions[pick]) is None:
                return None
        rows: Index = slice(None) if keep is None else keep
        return self.level(a[rows], expected(rows), positions[rows])


def take(x: Arr, cols: NDArray[np.intp] | None = None) -> Expected:
    """Rows of ``x`` (with columns reordered by ``cols``) as an :data:`Expected`."""

    def expected(i: Index) -> Arr:
        rows = x[i]
        return rows if cols is None else rows[:, cols]

    return expected


def criteria_for(a: Table, b: Table, sample: DiffSample, atol: float, rtol: float, equal_nan: bool) -> Criteria:
    # The precision the values are held in: a bfloat16 file is read as float32, but its values
    # carry bfloat16's rounding (2⁻⁸ relative), which no float32 slack would cover.
    eps = [p.eps for t in (a, b) if (p := precision_of(t.values_dtype)) is not None]
    peak = 0.0
    for w in sample.windows:
        if w.b.size:
            top = max(float(w.b.max()), -float(w.b.min()))
            if not math.isfinite(top):  # rare: only then pay for masking out NaN and inf
                finite = w.b[np.isfinite(w.b)]
                top = float(np.abs(finite).max()) if finite.size else 0.0
            peak = max(peak, top)
    scale = peak if peak > 0 else 1.0
    return Criteria(atol, rtol, equal_nan, max(SLACK_FLOOR, 4 * max(eps, default=0.0)) * scale, scale)


def relative_rms(a: Arr, b: Arr) -> float:
    """RMS of ``a − b`` over the RMS of ``a`` (finite values): how near ``b`` is to ``a`` at its own
    scale (a sinusoid times 0.088 is not near a cos cache for being small)."""
    with np.errstate(invalid="ignore", over="ignore"):
        d = a - b
    keep = np.isfinite(d) & np.isfinite(a)
    if not keep.any():
        return math.inf
    rms, norm = float(np.sqrt(np.mean(d[keep] ** 2))), float(np.sqrt(np.mean(a[keep] ** 2)))
    return rms / norm if norm > 0 else (0.0 if rms == 0 else math.inf)


def worst_gap(a: Arr, b: Arr) -> float:
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.abs(a - b)
    d = d[np.isfinite(d)]
    return float(d.max()) if d.size else 0.0


def envelope_note(level: int, crit: Criteria, positions: Arr) -> str:
    if level == 0 or not positions.size:
        return ""
    top = float(positions.max())
    env = float(crit.envelope(np.array([top]))[0])
    return f"; the rest is float32-angle rounding (within {env:.2g} at position {int(top)})"
