"""What ``diff`` reports, as plain data: element statistics of A against B, and likely causes.

A is the candidate, B the reference.  An element is within tolerance iff
``|a − b| ≤ atol + rtol·|b|`` (NumPy's ``isclose``, asymmetric); NaNs in the same place are
equal under ``equal_nan``; infinities are equal only to themselves.  Both tables are read in row
blocks and compared in float64, so tables larger than memory work.

When they differ, :mod:`pecli.explanations` says what the likely cause is.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, replace
from typing import Any, get_args, get_type_hints

import numpy as np
from numpy.typing import NDArray

from pecli import table as _table
from pecli.errors import PecliInputError, RecipeError
from pecli.explanations import (
    DiffSample,
    Explanation,
    SamplePlan,
    check_tolerance,
    explain_sample,
)
from pecli.inspection import json_number
from pecli.kinds.base import Recipe
from pecli.proof import isclose, verify_all
from pecli.table import Progress, Table, first_position

Arr = NDArray[np.float64]

_FLOAT_ULPS = ("float16", "float32", "float64")


# -- results ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Element:
    """One element of both tables: where it is, both values, ``|a − b|`` and ``|a − b|/|b|``."""

    position: int
    dim: int
    a: float
    b: float
    abs: float
    rel: float | None


@dataclass(frozen=True, slots=True)
class RowDiff:
    """One row's largest ``|a − b|`` and its number of elements outside tolerance."""

    position: int
    max_abs: float
    mismatched: int


@dataclass(frozen=True)
class Comparison:
    """Everything ``diff`` reports.  Statistics are ``None`` when the shapes differ (nothing compared).

    Non-finite mismatches (NaN against a number, +inf against -inf) count as an infinite ``abs``;
    ``rms`` is over elements where both values are finite; ``rel`` is over finite, non-zero b;
    ``max_ulp`` counts the values of ``ulp_dtype`` (the narrower float dtype of the two) between a
    and b, both rounded to it; with ``ulps`` an element within that many also matches.
    ``worst`` and ``worst_rows`` rank every non-zero difference, within tolerance or not; ties go
    to the earlier element.  Explanations are only looked for when the tables differ.
    """

    same: bool
    source_a: str
    source_b: str
    shape_a: tuple[int, int]
    shape_b: tuple[int, int]
    dtype_a: str
    dtype_b: str
    atol: float
    rtol: float
    equal_nan: bool
    metadata_differences: list[tuple[str, Any, Any]]
    compared: int
    mismatched: int
    nonfinite_mismatched: int
    max_abs: float | None
    max_abs_at: Element | None
    max_rel: float | None
    max_rel_at: Element | None
    max_ulp: float | None
    max_ulp_at: Element | None
    ulp_dtype: str | None
    rms: float | None
    worst: list[Element] = field(default_factory=list)
    worst_rows: list[RowDiff] = field(default_factory=list)
    explanations: list[Explanation] = field(default_factory=list)
    #: Empty when the causes were tested on every row, else which rows they were tested on.
    causes_checked_on: str = ""
    ulps: int = 0

    @property
    def shapes_match(self) -> bool:
        return self.shape_a == self.shape_b

    @property
    def exit_code(self) -> int:
        """0 same, 1 different (a shape mismatch is a difference)."""
        return 0 if self.same else 1

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (NaN and ±inf become ``None``)."""

        def element(e: Element | None) -> dict[str, Any] | None:
            if e is None:
                return None
            return {
                "position": e.position,
                "dim": e.dim,
                "a": _value(e.a, self.dtype_a),
                "b": _value(e.b, self.dtype_b),
                "abs": _num(e.abs),
                "rel": _num(e.rel),
            }

        return {
            "same": self.same,
            "exit_code": self.exit_code,
            "a": {"source": self.source_a, "shape": list(self.shape_a), "dtype": self.dtype_a},
            "b": {"source": self.source_b, "shape": list(self.shape_b), "dtype": self.dtype_b},
            "tolerance": {"atol": self.atol, "rtol": self.rtol, "ulps": self.ulps, "equal_nan": self.equal_nan},
            "ulp_dtype": self.ulp_dtype,
            "causes_checked_on": self.causes_checked_on or None,
            "metadata_differences": [{"key": k, "a": va, "b": vb} for k, va, vb in self.metadata_differences],
            "compared": self.compared,
            "mismatched": self.mismatched,
            "nonfinite_mismatched": self.nonfinite_mismatched,
            "max_abs": _num(self.max_abs),
            "max_abs_at": element(self.max_abs_at),
            "max_rel": _num(self.max_rel),
            "max_rel_at": element(self.max_rel_at),
            "max_ulp": _num(self.max_ulp),
            "max_ulp_at": element(self.max_ulp_at),
            "rms": _num(self.rms),
            "worst": [element(e) for e in self.worst],
            "worst_rows": [
                {"position": r.position, "max_abs": _num(r.max_abs), "mismatched": r.mismatched}
                for r in self.worst_rows
            ],
            "explanations": [
                {"name": x.name, "detail": x.detail, "residual": _num(x.residual)} for x in self.explanations
            ],
        }


def _num(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def _value(x: float, dtype: str) -> float | int | None:
    # Shortest text that round-trips in the table's own dtype (0.9092974, not 0.9092974066734314).
    kind = np.dtype(dtype).kind
    return json_number(np.dtype(dtype).type(x)) if kind in "fiu" else _num(x)


_ORDER_INT: dict[int, type[np.signedinteger[Any]]] = {2: np.int16, 4: np.int32, 8: np.int64}


def _ordered(x: np.ndarray) -> NDArray[np.int64]:
    """Float bit patterns as integers that sort like the floats (−0.0 and +0.0 both map to 0)."""
    itype = _ORDER_INT[x.dtype.itemsize]
    i = x.view(itype).astype(np.int64)
    low = np.int64(np.iinfo(itype).min)
    ordered: NDArray[np.int64] = np.where(i < 0, low - i, i)
    return ordered


def ulp_distance(a: np.ndarray, b: np.ndarray, dtype: np.dtype[Any]) -> Arr:
    """How many values of ``dtype`` lie between a (rounded to ``dtype``) and b; −1 where either is
    not finite.  Counting representable values stays meaningful across zero, where ``|a−b|`` over
    ``spacing(b)`` would call 1.0 against 0.0 some 10⁴⁴ ulps."""
    fa = np.asarray(a, dtype=dtype)
    fb = np.asarray(b, dtype=dtype)
    if fa.dtype.itemsize <= 4:  # ≤ 32-bit orderings: exact in float64, their difference too
        itype = _ORDER_INT[fa.dtype.itemsize]
        low = np.iinfo(itype).min
        ia, ib = fa.view(itype), fb.view(itype)
        # low − i stays in range for a negative i: the ordering in the integer type itself.
        sa = np.where(ia < 0, low - ia, ia).astype(np.float64)
        sb = np.where(ib < 0, low - ib, ib).astype(np.float64)
        out32: Arr = np.where(np.isfinite(fa) & np.isfinite(fb), np.abs(sa - sb), -1.0)
        return out32
    oa, ob = _ordered(fa), _ordered(fb)
    same_sign = (oa >= 0) == (ob >= 0)
    with np.errstate(over="ignore"):
        # Same sign: the int64 difference cannot overflow; opposite signs: add magnitudes in float.
        near = np.abs(np.where(same_sign, oa - ob, 0)).astype(np.float64)
        far = np.abs(oa.astype(np.float64)) + np.abs(ob.astype(np.float64))
    dist = np.where(same_sign, near, far)
    out: Arr = np.where(np.isfinite(fa) & np.isfinite(fb), dist, -1.0)
    return out


# -- compare ---------------------------------------------------------------------------------
def narrower_float(a: np.dtype[Any], b: np.dtype[Any]) -> np.dtype[Any] | None:
    """The float dtype (float16/32/64) with fewer bits of the two, where ulps are counted."""
    floats = [d for d in (a, b) if d.name in _FLOAT_ULPS]
    return min(floats, key=lambda d: d.itemsize) if floats else None


#: Differences of at most this many ulps everywhere are rounding, not a different table.
ROUNDING_ULPS = 4


def _storage(bf16: tuple[bool, bool, float, float] | None, stats: dict[str, Any], last: int) -> list[Explanation]:
    """One side holds bfloat16 values (read as float32): every element is within bfloat16's
    rounding (2⁻⁸ relative, with room) of the other's, plus at most the envelope a float32
    pipeline leaves (``2⁻²²·(1 + p)``, the two tables' own pipelines may differ)."""
    if bf16 is None or bf16[0] == bf16[1] or stats["nonfinite_mismatched"]:
        return []
    envelope = min(2.0**-22 * (1 + last), 1 / 16) * bf16[3]
    if bf16[2] > envelope:
        return []
    side, other = ("A", "B") if bf16[0] else ("B", "A")
    detail = f"{side} holds bfloat16 values (read as float32); every element is within bfloat16 rounding of {other}'s"
    if bf16[2] > 0:
        detail += f" (and within {envelope:.2g} of a float32 pipeline's rounding)"
    return [Explanation("storage", f"within bfloat16 rounding of {other}: {detail}", float(stats["max_abs"] or 0.0))]


def _rounding(a: Table, b: Table, stats: dict[str, Any], ulp_dtype: np.dtype[Any] | None) -> list[Explanation]:
    """Every difference within a few ulps: the same table rounded differently.  When a recipe is
    known, its other pipelines are rebuilt and proved against A, and one that reproduces A bit for
    bit is named (``identify``'s proof, on every row)."""
    ulp, mismatched = stats["max_ulp"], stats["mismatched"]
    if ulp_dtype is None or ulp is None or stats["nonfinite_mismatched"]:
        return []
    # Equal once rounded to the narrower dtype (ulp 0): the precision suspect names the storage.
    if not 0 < ulp <= ROUNDING_ULPS:
        return []
    detail = (
        f"every difference is within {ulp:g} ulp of {ulp_dtype.name} ({mismatched} element"
        f"{'s' if mismatched != 1 else ''}): the same table, rounded differently"
    )
    recipe, target = (b.recipe, a) if b.recipe is not None else (a.recipe, b)
    exact = [v for v, proof in _pipeline_proofs(recipe, target) if proof.holds and proof.max_abs == 0]
    if exact:
        from pecli.sources import recipe_spec

        names = preset_names(exact[0])
        detail += f"; {recipe_spec(exact[0])}{f' ({names})' if names else ''} reproduces {target.source} bit for bit"
        return [Explanation("rounding", detail, 0.0)]
    detail += " (a float64 pipeline cast once, a division for a multiplication, a framework's float32 exp)"
    return [Explanation("rounding", detail, float(stats["max_abs"] or 0.0))]


def _pipeline_proofs(recipe: Recipe | None, target: Table) -> list[tuple[Recipe, Any]]:
    """The recipe in each of its kind's other pipelines (``compute``/``form``), proved on ``target``."""
    if recipe is None or recipe.shape != target.shape or not hasattr(recipe, "compute"):
        return []
    hints = get_type_hints(type(recipe))
    computes = get_args(hints.get("compute")) or (getattr(recipe, "compute", None),)
    forms = get_args(hints.get("form")) or (None,)
    variants = []
    for compute, form in itertools.product(computes, forms):
        change = {"compute": compute, **({"form": form} if form is not None else {})}
        try:
            variant = replace(recipe, **change)  # type: ignore[type-var]
        except (RecipeError, TypeError):
            continue
        if variant != recipe and variant not in variants:
            variants.append(variant)
    if not variants:
        return []
    return list(zip(variants, verify_all(target, [(v, 0.0) for v in variants]), strict=True))


def preset_names(recipe: Recipe) -> str:
    """The presets whose recipe, at this size, is ``recipe``."""
    from dataclasses import fields

    from pecli.presets import PRESETS

    size = {
        f.name: getattr(recipe, f.name)
        for f in fields(recipe)
        if f.name in ("length", "dim", "grid", "dtype", "heads", "start")
    }  # type: ignore[arg-type]
    names = []
    for p in PRESETS.values():
        if p.kind != recipe.kind:
            continue
        try:
            if p.recipe(**size) == recipe:
                names.append(p.name)
        except RecipeError:
            continue
    return ", ".join(names)


def compare(
    a: Table,
    b: Table,
    *,
    atol: float = 0.0,
    rtol: float = 0.0,
    equal_nan: bool = True,
    top: int = 10,
    progress: Progress | None = None,
    suspects: bool = True,
    ulps: int = 0,
) -> Comparison:
    """Compare candidate A with reference B, block by block; explain the differences if ``suspects``.

    An element matches when ``|a − b| ≤ atol + rtol·|b|``, or when at most ``ulps`` values of the
    narrower float dtype of the two lie between them (NumPy's ``assert_array_max_ulp``).
    """
    atol, rtol = check_tolerance("atol", atol), check_tolerance("rtol", rtol)
    if isinstance(ulps, bool) or not isinstance(ulps, int) or ulps < 0:
        raise PecliInputError(f"ulps must be a whole number ≥ 0, got {ulps!r}: e.g. --ulps 4")
    if isinstance(top, bool) or not isinstance(top, int) or top < 0:
        raise PecliInputError(f"top must be a whole number ≥ 0, got {top!r}")
    first = first_position(a, b)
    plan = SamplePlan.make(a.shape, b.shape)
    acc: _Accumulator | None = None
    sample: DiffSample | None = None
    if a.shape == b.shape:
        acc = _Accumulator(top, atol, rtol, equal_nan, first, narrower_float(a.dtype, b.dtype), ulps)
        # The suspects' sample is copied out of the blocks as they pass: no second read.
        kept = plan if suspects else SamplePlan([], [])
        col_a, col_b = Collector(kept.a_windows, a.shape[1]), Collector(kept.b_windows, b.shape[1])
        n, d = a.shape
        step = max(1, _table.BLOCK_BYTES // max(1, d * 8))
        for r0 in range(0, n, step):
            r1 = min(r0 + step, n)
            block_a, block_b = a.rows(r0, r1), b.rows(r0, r1)
            acc.add(r0, block_a, block_b)
            col_a.feed(r0, block_a)
            col_b.feed(r0, block_b)
            if progress is not None:
                progress(r1 - r0)
        sample = DiffSample.from_windows(kept, col_a.parts, col_b.parts, first)
    same = acc is not None and acc.mismatched == 0
    explanations: list[Explanation] = []
    checked_on = ""
    if suspects and not same:
        if sample is None:
            sample = DiffSample.read(a, b, plan, first)
    stats = acc.result() if acc is not None else _NO_STATS
    bf16 = stats.pop("bf16", None)
    if suspects and not same:
        last = first + max(a.shape[0], b.shape[0])
        rounding = _storage(bf16, stats, last) + _rounding(a, b, stats, acc.ulp_dtype if acc is not None else None)
        explanations = rounding or explain_sample(a, b, sample, atol, rtol, equal_nan)
        sampled = sum(w.a.shape[0] for w in sample.windows)
        if explanations and not rounding and a.shape[1] == b.shape[1] and sampled < a.shape[0]:
            # The counts and maxima are over every element; a cause is tested on the sample.
            checked_on = f"{sampled} sampled rows of {a.shape[0]}"
    return Comparison(
        same=same,
        source_a=a.source,
        source_b=b.source,
        shape_a=a.shape,
        shape_b=b.shape,
        dtype_a=a.dtype.name,
        dtype_b=b.dtype.name,
        atol=atol,
        rtol=rtol,
        equal_nan=equal_nan,
        metadata_differences=metadata_differences(a, b),
        explanations=explanations,
        causes_checked_on=checked_on,
        ulps=ulps,
        ulp_dtype=acc.ulp_dtype.name if acc is not None and acc.ulp_dtype is not None else None,
        **stats,
    )


def metadata_differences(a: Table, b: Table) -> list[tuple[str, Any, Any]]:
    """``(key, value in A, value in B)`` for every recipe parameter that differs (``pecli_version`` ignored)."""
    ra, rb = a.recipe, b.recipe
    if ra is None and rb is None:
        return []
    if ra is None or rb is None:
        return [("recipe", ra.describe() if ra is not None else None, rb.describe() if rb is not None else None)]
    ma, mb = ra.to_metadata(), rb.to_metadata()
    keys = [k for k in ma if k != "pecli_version"] + [k for k in mb if k not in ma and k != "pecli_version"]
    return [(k, ma.get(k), mb.get(k)) for k in keys if ma.get(k) != mb.get(k)]


_NO_STATS: dict[str, Any] = {
    "compared": 0,
    "mismatched": 0,
    "nonfinite_mismatched": 0,
    "max_abs": None,
    "max_abs_at": None,
    "max_rel": None,
    "max_rel_at": None,
    "max_ulp": None,
    "max_ulp_at": None,
    "rms": None,
}


def _top(values: Arr, k: int, floor: float = 0.0) -> NDArray[np.intp]:
    """Indices of the ``k`` largest values above ``floor`` (≥ 0), largest first, ties by index (as a
    full sort would).  ``floor``: the k-th value kept so far, which a later element must beat."""
    idx = np.flatnonzero(values > floor)
    if k <= 0 or idx.size == 0:
        return idx[:0]
    if idx.size > k:
        # Keep everything tied with the k-th largest so the tie-break by index stays exact.
        kth = np.partition(values[idx], idx.size - k)[idx.size - k]
        idx = idx[values[idx] >= kth]
    order = np.lexsort((idx, -values[idx]))
    return idx[order[:k]]


class Collector:
    """Copies the planned windows out of row blocks as they stream past."""

    def __init__(self, windows: list[tuple[int, int]], d: int) -> None:
        self.windows = windows
        self.parts = [np.empty((e - s, d)) for s, e in windows]

    def feed(self, r0: int, block: np.ndarray) -> None:
        r1 = r0 + block.shape[0]
        for (s, e), part in zip(self.windows, self.parts, strict=True):
            lo, hi = max(s, r0), min(e, r1)
            if lo < hi:
                part[lo - s : hi - s] = block[lo - r0 : hi - r0]


class _Accumulator:
    """Running statistics over row blocks; bounded memory (``top`` candidates kept per list)."""

    def __init__(
        self,
        top: int,
        atol: float,
        rtol: float,
        equal_nan: bool,
        first: int,
        ulp_dtype: np.dtype[Any] | None,
        ulps: int,
    ):
        self.top, self.atol, self.rtol, self.equal_nan, self.first = top, atol, rtol, equal_nan, first
        self.ulp_dtype, self.ulps = ulp_dtype, ulps
        #: Whether every value of A / B so far is a bfloat16 value (a float32 with a zero low half),
        #: and the most bfloat16 ulps between A and B rounded to bfloat16.
        self.bf16 = [True, True]
        #: max(|a − b| − 2⁻⁸·|ref|) where one side is bfloat16: what bfloat16 rounding leaves
        #: unexplained; and max |b| (the scale of a float32 pipeline's envelope).
        self.bf16_excess = 0.0
        self.b_absmax = 0.0
        self.compared = self.mismatched = self.nonfinite = self.finite = 0
        self.sumsq = 0.0
        self.best: dict[str, tuple[float, Element | None]] = {k: (0.0, None) for k in ("abs", "rel", "ulp")}
        self.worst: list[tuple[float, int, int, Element]] = []
        self.worst_rows: list[tuple[float, int, RowDiff]] = []

    def add(self, r0: int, block_a: np.ndarray, block_b: np.ndarray) -> None:
        """Fold one block in.  Elements equal bit for bit (same dtype) or by value are within any
        tolerance and add nothing but their count, so only the others are looked at in float64:
        near-identical tables stream at memory speed."""
        rows, d = block_a.shape
        if rows * d == 0:
            return
        self._storage(block_a, block_b)
        fa, fb = np.asarray(block_a).reshape(-1), np.asarray(block_b).reshape(-1)
        if fa.dtype != fb.dtype:
            fa, fb = fa.astype(np.float64), fb.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            differ = fa != fb  # NaN pairs too: equal_nan decides below
            where = np.flatnonzero(differ)
            dense = 4 * where.size > fa.size  # mostly different: work on the whole block, not a gather
            # Elements left out (equal by value) are finite exactly when A's are.
            equal_finite = 0 if dense else int(np.count_nonzero(np.isfinite(fa) & ~differ))
            pa, pb = (fa, fb) if dense else (fa[where], fb[where])
            a = pa.astype(np.float64)
            b = pb.astype(np.float64)
            raw = np.abs(a - b)
            absb = np.abs(b)
            close = isclose(a, b, self.atol, self.rtol, self.equal_nan)
            ulp = ulp_distance(pa, pb, self.ulp_dtype) if self.ulp_dtype is not None else None
            if ulp is not None and self.ulps:
                close |= (ulp >= 0) & (ulp <= self.ulps)
            finite = np.isfinite(a) & np.isfinite(b)
            # |a − b|, with matching NaN/inf pairs as 0 and mismatching non-finite pairs as +inf.
            e = np.where(finite, raw, np.where(close, 0.0, np.inf))
            far = ~close
            self.compared += rows * d
            self.mismatched += int(np.count_nonzero(far))
            self.nonfinite += int(np.count_nonzero(far & ~finite))
            self.finite += equal_finite + int(np.count_nonzero(finite))
            self.sumsq += float(np.square(raw, where=finite, out=np.zeros_like(raw)).sum())
            rel = np.divide(e, absb, out=np.full_like(e, -1.0), where=np.isfinite(b) & (b != 0))
        if dense:
            where = np.arange(fa.size)
        if not where.size:
            return

        def element(j: int) -> Element:
            row, col = divmod(int(where[j]), d)
            av, bv, ev = float(a[j]), float(b[j]), float(e[j])
            return Element(self.first + r0 + row, col, av, bv, ev, ev / abs(bv) if math.isfinite(bv) and bv else None)

        def track(name: str, values: Arr) -> None:
            j = int(np.argmax(values))  # the first occurrence wins, as with a whole-block argmax
            if values[j] > self.best[name][0]:
                self.best[name] = (float(values[j]), element(j))

        track("abs", e)
        track("rel", rel)
        if ulp is not None:
            track("ulp", ulp)
        full = len(self.worst) >= self.top
        for j in _top(e, self.top, -self.worst[-1][0] if full and self.worst else 0.0):
            row, col = divmod(int(where[j]), d)
            self.worst.append((-float(e[j]), r0 + row, col, element(int(j))))
        self.worst.sort(key=lambda t: t[:3])
        del self.worst[self.top :]
        if dense:
            row_max, row_far = e.reshape(rows, d).max(axis=1), far.reshape(rows, d).sum(axis=1)
        else:
            row_of = where // d
            row_max = np.zeros(rows)
            np.maximum.at(row_max, row_of, e)
            row_far = np.bincount(row_of[far], minlength=rows)
        full_rows = len(self.worst_rows) >= self.top
        for i in _top(row_max, self.top, -self.worst_rows[-1][0] if full_rows and self.worst_rows else 0.0):
            row = int(i)
            diff = RowDiff(self.first + r0 + row, float(row_max[row]), int(row_far[row]))
            self.worst_rows.append((-diff.max_abs, r0 + row, diff))
        self.worst_rows.sort(key=lambda t: t[:2])
        del self.worst_rows[self.top :]

    def _storage(self, block_a: np.ndarray, block_b: np.ndarray) -> None:
        """Keep track of bfloat16 storage (read as float32) on either side, and the distance in
        bfloat16 ulps once both are rounded to it."""
        for i, block in enumerate((block_a, block_b)):
            if self.bf16[i]:
                self.bf16[i] = block.dtype == np.float32 and not np.any(np.asarray(block).view(np.uint32) & 0xFFFF)
        if self.bf16[0] != self.bf16[1]:
            a, b = np.asarray(block_a, np.float64), np.asarray(block_b, np.float64)
            ref = b if self.bf16[0] else a  # the side that is not bfloat16
            with np.errstate(invalid="ignore"):
                excess = np.abs(a - b) - 2.0**-8 * np.abs(ref)
                self.bf16_excess = max(self.bf16_excess, float(np.nanmax(excess)))
                self.b_absmax = max(self.b_absmax, float(np.nanmax(np.abs(ref))))

    def result(self) -> dict[str, Any]:
        ulp, ulp_at = self.best["ulp"] if self.ulp_dtype is not None else (None, None)
        return {
            "compared": self.compared,
            "mismatched": self.mismatched,
            "nonfinite_mismatched": self.nonfinite,
            "max_abs": self.best["abs"][0],
            "max_abs_at": self.best["abs"][1],
            "max_rel": self.best["rel"][0],
            "max_rel_at": self.best["rel"][1],
            "max_ulp": ulp,
            "max_ulp_at": ulp_at,
            "rms": math.sqrt(self.sumsq / self.finite) if self.finite else None,
            "bf16": (self.bf16[0], self.bf16[1], self.bf16_excess, self.b_absmax),
            "worst": [t[3] for t in self.worst],
            "worst_rows": [t[2] for t in self.worst_rows],
        }
