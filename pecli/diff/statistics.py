"""The numbers ``diff`` reports, accumulated over row blocks: counts, maxima, ulps, worst elements.

:class:`Accumulator` folds pairs of row blocks (A's, B's) into exact statistics in bounded memory.
Three routes, all giving the same numbers (``tests/diff/test_diffstats.py`` checks them against each
other and against whole-array NumPy):

- blocks that are mostly equal: only the differing elements are gathered and looked at in float64;
- blocks where most elements differ, both sides of one float dtype, every value finite (the fast
  route): every pass runs in the table's own dtype on cache-sized chunks, and float64 is used only
  for the few elements that can still be a maximum or a worst element.  Rounding is monotone, so an
  element whose float32 ``|a − b|`` is below another's cannot have the larger exact difference:
  the exact maxima are always among the candidates, and ties still go to the earlier element;
- anything else (non-finite values, mixed dtypes, integers): everything in float64.

Two accumulators over consecutive row ranges :meth:`~Accumulator.merge` into the one a single
pass would give, so ``compare`` runs one per core.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from pecli.proof import isclose

if TYPE_CHECKING:
    from pecli.dtypes import Arr, Ids


FLOAT_ULPS = ("float16", "float32", "float64")
#: Elements per chunk on the fast route: a few arrays of this size stay in a core's L2 cache.
CHUNK = 1 << 18
_INT: dict[int, type[np.signedinteger[Any]]] = {2: np.int16, 4: np.int32, 8: np.int64}


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


# -- ulps ------------------------------------------------------------------------------------
def _ordered(x: np.ndarray) -> NDArray[np.int64]:
    """Float bit patterns as integers that sort like the floats (−0.0 and +0.0 both map to 0)."""
    itype = _INT[x.dtype.itemsize]
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
        itype = _INT[fa.dtype.itemsize]
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


def narrower_float(a: np.dtype[Any], b: np.dtype[Any]) -> np.dtype[Any] | None:
    """The float dtype (float16/32/64) with fewer bits of the two, where ulps are counted."""
    floats = [d for d in (a, b) if d.name in FLOAT_ULPS]
    return min(floats, key=lambda d: d.itemsize) if floats else None


# -- ranking ---------------------------------------------------------------------------------
def top_indices(values: np.ndarray, k: int, floor: float = 0.0) -> Ids:
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


def _rounded(x: float, dtype: np.dtype[Any]) -> float:
    """``x`` rounded to ``dtype`` (to nearest; inf beyond its range), as the arithmetic rounds."""
    with np.errstate(over="ignore"):
        return float(np.asarray(x).astype(dtype))


def _candidates(approx: np.ndarray, k: int, floor: float) -> Ids:
    """Indices that may hold the ``k`` largest exact values above ``floor``, given ``approx``: the
    exact values rounded (monotonically) to a narrower dtype.  A value whose rounding is below the
    k-th largest rounding, or below ``floor``'s, cannot be among them."""
    if k <= 0:
        return np.flatnonzero(approx < 0)  # none (approx ≥ 0)
    if floor > 0:
        # ``floor`` rounded the way every exact value was (inf if beyond the dtype).
        idx = np.flatnonzero(approx >= _rounded(floor, approx.dtype))
    else:
        idx = np.flatnonzero(approx)
    if idx.size > k:
        vals = approx[idx]
        kth = np.partition(vals, idx.size - k)[idx.size - k]
        idx = idx[vals >= kth]
    return idx


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


# -- the accumulator -------------------------------------------------------------------------
class Accumulator:
    """Running statistics over row blocks; bounded memory (``top`` candidates kept per list).

    ``add`` must see its blocks in row order; accumulators over later row ranges are folded in
    with :meth:`merge`, in row order too.
    """

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
        #: bfloat16 values compared as float32 (exactly): a bfloat16 ulp is 2¹⁶ float32 ulps.
        self.ulp_shift = 16 if ulp_dtype is not None and ulp_dtype.name == "bfloat16" else 0
        self.exact = atol == 0 and rtol == 0 and ulps == 0
        #: Whether every value of A / B so far is a bfloat16 value (a float32 with a zero low half),
        #: and the most bfloat16 ulps between A and B rounded to bfloat16.
        self.bf16 = [True, True]
        #: For A, then B, in case it alone holds bfloat16: max(|a − b| − 2⁻⁸·|other|), what bfloat16
        #: rounding leaves unexplained, and max |other| (the scale of a float32 pipeline's envelope).
        self.bf16_excess = [0.0, 0.0]
        self.other_absmax = [0.0, 0.0]
        self.compared = self.mismatched = self.nonfinite = self.finite = 0
        self.sumsq = 0.0
        self.best: dict[str, tuple[float, Element | None]] = {k: (0.0, None) for k in ("abs", "rel", "ulp")}
        self.worst: list[tuple[float, int, int, Element]] = []
        self.worst_rows: list[tuple[float, int, RowDiff]] = []
        #: Scratch arrays of the fast route, reused chunk after chunk (fresh pages cost more).
        self._scratch: dict[tuple[str, np.dtype[Any]], np.ndarray] = {}

    def _buffer(self, name: str, dtype: np.dtype[Any], n: int) -> np.ndarray:
        buf = self._scratch.get((name, dtype))
        if buf is None or buf.size < n:
            buf = self._scratch[(name, dtype)] = np.empty(max(n, CHUNK), dtype)
        return buf[:n]

    # -- folding in ------------------------------------------------------------------------------
    def add(self, r0: int, block_a: np.ndarray, block_b: np.ndarray) -> None:
        """Fold in rows ``r0…`` of A and B.  Elements equal bit for bit (same dtype) or by value are
        within any tolerance and add nothing but their count."""
        rows, d = block_a.shape
        if rows * d == 0:
            return
        # bfloat16 rows (a recipe's) as float32, exactly: the dtype bfloat16 files are read in.
        block_a, block_b = (np.asarray(x, np.float32) if x.dtype.name == "bfloat16" else x for x in (block_a, block_b))
        self._storage(block_a, block_b)
        fa, fb = np.asarray(block_a).reshape(-1), np.asarray(block_b).reshape(-1)
        if fa.dtype != fb.dtype:  # compare values, not bits
            self._general(r0, fa.astype(np.float64), fb.astype(np.float64), rows, d)
            return
        if fa.dtype.name not in FLOAT_ULPS:
            self._general(r0, fa, fb, rows, d)
            return
        step = max(1, CHUNK // d)
        for s in range(0, rows, step):
            e = min(rows, s + step)
            self._chunk(r0 + s, fa[s * d : e * d], fb[s * d : e * d], e - s, d)

    def _chunk(self, r0: int, fa: np.ndarray, fb: np.ndarray, rows: int, d: int) -> None:
        """One cache-sized chunk of one float dtype: the fast route when most elements differ and
        every value is finite, else the general one."""
        wide = fa.dtype == np.float16  # float16 differences are taken in float32
        a, b = (fa.astype(np.float32), fb.astype(np.float32)) if wide else (fa, fb)
        with np.errstate(over="ignore", invalid="ignore"):
            r = np.subtract(a, b, out=self._buffer("r", a.dtype, a.size))
            np.abs(r, out=r)
        hi = r.max()
        if not np.isfinite(hi):  # a NaN or an infinity in either table (or an overflow)
            self._general(r0, fa, fb, rows, d)
            return
        differing = int(np.count_nonzero(r.view(_INT[r.dtype.itemsize])))  # |a − b| ≥ 0: bits 0 iff 0
        if 4 * differing <= r.size:  # mostly equal: gathering the few costs less
            if differing:
                self._general(r0, fa, fb, rows, d)
            else:
                self.compared += r.size
                self.finite += r.size
            return
        self._dense(r0, fa, fb, b, r, float(hi), differing, (rows, d))

    def _far(self, fa: np.ndarray, fb: np.ndarray, b: np.ndarray, r: np.ndarray) -> NDArray[np.bool_]:
        """Where ``|a − b| > atol + rtol·|b|`` (every value finite), as :func:`isclose` decides it in
        float64, but screened in the chunk's dtype: ``r`` (``|a − b|`` rounded once) against the
        bound rounded a few times decides every element whose margin exceeds those roundings;
        only the elements within them are taken in float64.  (Converting every element to float64
        made ``--atol`` 2.2× the cost of an exact comparison.)"""
        info = np.finfo(r.dtype)
        if (self.atol and self.atol < info.tiny) or (self.rtol and self.rtol < info.tiny):
            # A tolerance the chunk's dtype cannot hold: every element in float64.
            return ~isclose(fa.astype(np.float64), fb.astype(np.float64), self.atol, self.rtol, self.equal_nan)
        margin = 8 * float(info.eps)
        up, down = r.dtype.type(1 + margin), r.dtype.type(1 - margin)
        with np.errstate(over="ignore", invalid="ignore"):
            if self.rtol:
                bound = np.abs(b, out=self._buffer("bound", r.dtype, r.size))
                np.multiply(bound, r.dtype.type(self.rtol), out=bound)
                np.add(bound, r.dtype.type(self.atol), out=bound)
                far: NDArray[np.bool_] = r > bound * up
                doubt = np.greater(r, bound * down) ^ far  # far is within it: beyond the lower edge only
            else:  # one bound for every element
                bound32 = r.dtype.type(self.atol)
                far = r > bound32 * up
                doubt = np.greater(r, bound32 * down) ^ far
        idx = np.flatnonzero(doubt)
        if idx.size:
            far[idx] = ~isclose(
                fa[idx].astype(np.float64), fb[idx].astype(np.float64), self.atol, self.rtol, self.equal_nan
            )
        return far

    def _dense(
        self,
        r0: int,
        fa: np.ndarray,
        fb: np.ndarray,
        b: np.ndarray,
        r: np.ndarray,
        hi: float,
        differing: int,
        shape: tuple[int, int],
    ) -> None:
        """The fast route: ``r`` is ``|a − b|`` rounded to ``b``'s dtype (float32 for float16
        tables); every exact figure is taken in float64 from ``fa``/``fb`` (the chunk as stored)."""
        rows, d = shape
        n = r.size
        self.compared += n
        self.finite += n
        # Squared and summed (pairwise) in the chunk's dtype, chunks added in float64: about 1e-6
        # relative for float32 (log₂ n roundings).  In float64 where the sum could overflow the
        # dtype or the squares that matter underflow it.
        info = np.finfo(r.dtype)
        with np.errstate(over="ignore"):  # float64 squares beyond 1e308 are inf, as in the general route
            if 2.0 ** (info.minexp // 2 + 24) <= hi < 2.0 ** (info.maxexp // 2 - 12):
                self.sumsq += float(np.add.reduce(np.square(r, out=self._buffer("sq", r.dtype, n))))
            else:
                self.sumsq += float(np.add.reduce(np.square(r, dtype=np.float64)))

        def exact(idx: Ids) -> Arr:
            out: Arr = np.abs(fa[idx].astype(np.float64) - fb[idx].astype(np.float64))
            return out

        # max |a − b|/|b| over b ≠ 0, in the chunk's dtype: the exact maximum is within a few
        # roundings of the largest ratio.
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            rel = np.abs(b, out=self._buffer("rel", r.dtype, n))
            np.divide(r, rel, out=rel)
            top_rel = float(np.fmax.reduce(rel))  # 0/0 (a = b = 0) is NaN: left out
            check_signs = not math.isfinite(top_rel) or top_rel >= 1
            if not math.isfinite(top_rel):  # b = 0 where a ≠ 0 (or a ratio beyond the dtype)
                absb = np.abs(b)
                rel = np.divide(r, absb, out=np.zeros_like(r), where=absb != 0)
                top_rel = float(rel.max())
        # Ulps in the dtype's own integers: same-sign pairs differ by their bit patterns' difference
        # (no overflow).  Opposite signs (|a − b| ≥ |b|: a ratio ≥ 1, or b = 0) are counted apart;
        # ±0 against ∓0 wraps to the type's minimum, a negative that never ranks and is within any --ulps.
        itype = _INT[fa.dtype.itemsize]
        ia, ib = fa.view(itype), fb.view(itype)
        ulp = np.subtract(ia, ib, out=self._buffer("ulp", ia.dtype, n))
        np.abs(ulp, out=ulp)
        opposite = ulp[:0].astype(np.intp)
        if check_signs:
            mixed = np.bitwise_xor(ia, ib, out=self._buffer("mixed", ia.dtype, n))
            if mixed.min() < 0:
                opposite = np.flatnonzero(mixed < 0)
        if self.ulp_shift:  # both hold bfloat16 values: their float32 distance is a multiple of 2¹⁶
            np.right_shift(ulp, self.ulp_shift, out=ulp)
        counted = self.ulp_dtype if self.ulp_shift and self.ulp_dtype is not None else fa.dtype
        mixed_ulps = ulp_distance(fa[opposite], fb[opposite], counted) if opposite.size else np.empty(0)
        ulp[opposite] = 0
        far: NDArray[np.bool_] | None = None
        if self.exact:
            mismatched = differing
        else:
            far = self._far(fa, fb, b, r)
            if self.ulps:
                within = ulp <= self.ulps
                within[opposite] = mixed_ulps <= self.ulps
                far &= ~within
            mismatched = int(np.count_nonzero(far))
        self.mismatched += mismatched

        def element(j: int, e: float) -> Element:
            row, col = divmod(j, d)
            av, bv = float(fa[j]), float(fb[j])
            return Element(self.first + r0 + row, col, av, bv, e, e / abs(bv) if bv else None)

        def offer(name: str, idx: Ids, values: Arr) -> None:
            """The largest of ``values`` (exact, at ``idx``), the first of equals, as a maximum."""
            if not idx.size:
                return
            j = int(np.argmax(values))
            if values[j] > self.best[name][0]:
                k = int(idx[j])
                self.best[name] = (float(values[j]), element(k, float(exact(idx[j : j + 1])[0])))

        # max |a − b|: the exact maximum rounds to the rounded one (skipped when even that is below).
        if not hi < _rounded(self.best["abs"][0], r.dtype):
            at = np.flatnonzero(r == hi)
            offer("abs", at, exact(at))
        if top_rel > 0 and top_rel * (1 + 2.0**-20) + 2.0**-140 > self.best["rel"][0]:
            idx = np.flatnonzero(rel >= top_rel * (1 - 2.0**-20) - 2.0**-140)
            bx = np.abs(fb[idx].astype(np.float64))
            idx, bx = idx[bx != 0], bx[bx != 0]
            with np.errstate(over="ignore"):  # a ratio beyond float64 is inf, as in the general route
                offer("rel", idx, exact(idx) / bx)
        # max ulp (exact integers; the opposite-sign pairs apart)
        if self.ulp_dtype is not None:
            j = int(np.argmax(ulp))
            best_idx, best_ulp = j, float(ulp[j])
            if opposite.size:
                m = int(np.argmax(mixed_ulps))
                if mixed_ulps[m] > best_ulp or (mixed_ulps[m] == best_ulp and opposite[m] < best_idx):
                    best_idx, best_ulp = int(opposite[m]), float(mixed_ulps[m])
            if best_ulp > self.best["ulp"][0]:
                self.best["ulp"] = (best_ulp, element(best_idx, float(exact(np.array([best_idx]))[0])))
        # The worst elements: candidates by the rounded difference, ranked by the exact one.
        full = len(self.worst) >= self.top
        floor = -self.worst[-1][0] if full and self.worst else 0.0
        skip = full and hi < _rounded(floor, r.dtype)  # nothing here can beat the k-th worst
        idx = np.empty(0, np.intp) if skip else _candidates(r, self.top, floor)
        if idx.size:
            e = exact(idx)
            for j in top_indices(e, self.top, floor):
                k = int(idx[j])
                row, col = divmod(k, d)
                self.worst.append((-float(e[j]), r0 + row, col, element(k, float(e[j]))))
            self.worst.sort(key=lambda t: t[:3])
            del self.worst[self.top :]
        # The worst rows: candidate rows by their rounded maximum, then exactly.
        full_rows = len(self.worst_rows) >= self.top
        floor_rows = -self.worst_rows[-1][0] if full_rows and self.worst_rows else 0.0
        if full_rows and hi < _rounded(floor_rows, r.dtype):
            return
        rows_at = _candidates(r.reshape(rows, d).max(axis=1), self.top, floor_rows)
        if rows_at.size:
            cells = (rows_at[:, None] * d + np.arange(d)).reshape(-1)
            row_max = exact(cells).reshape(-1, d).max(axis=1)
            counts = (r.reshape(rows, d)[rows_at] != 0) if far is None else far.reshape(rows, d)[rows_at]
            row_far = counts.sum(axis=1)
            for j in top_indices(row_max, self.top, floor_rows):
                diff = RowDiff(self.first + r0 + int(rows_at[j]), float(row_max[j]), int(row_far[j]))
                self.worst_rows.append((-diff.max_abs, r0 + int(rows_at[j]), diff))
            self.worst_rows.sort(key=lambda t: t[:2])
            del self.worst_rows[self.top :]

    def _general(self, r0: int, fa: np.ndarray, fb: np.ndarray, rows: int, d: int) -> None:
        """Any dtypes and values, in float64; only elements that differ are looked at unless most do."""
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
        for j in top_indices(e, self.top, -self.worst[-1][0] if full and self.worst else 0.0):
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
        for i in top_indices(row_max, self.top, -self.worst_rows[-1][0] if full_rows and self.worst_rows else 0.0):
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
        if not (self.bf16[0] or self.bf16[1]):
            return
        # Measured on every block while either side may still be the bfloat16 one (both may be,
        # for a while: rows of zeros), so the excess covers the whole table whichever side it is.
        a, b = np.asarray(block_a, np.float64), np.asarray(block_b, np.float64)
        with np.errstate(invalid="ignore"):
            diff = np.abs(a - b)
            for i, other in ((0, b), (1, a)):
                if self.bf16[i]:
                    excess = diff - 2.0**-8 * np.abs(other)
                    self.bf16_excess[i] = max(self.bf16_excess[i], float(np.nanmax(excess)))
                    self.other_absmax[i] = max(self.other_absmax[i], float(np.nanmax(np.abs(other))))

    # -- combining and reporting -------------------------------------------------------------
    def merge(self, later: Accumulator) -> None:
        """Fold in an accumulator over the rows after this one's (ties still go to the earlier)."""
        self.compared += later.compared
        self.mismatched += later.mismatched
        self.nonfinite += later.nonfinite
        self.finite += later.finite
        self.sumsq += later.sumsq
        for name, (value, at) in later.best.items():
            if value > self.best[name][0]:
                self.best[name] = (value, at)
        self.worst = sorted(self.worst + later.worst, key=lambda t: t[:3])[: self.top]
        self.worst_rows = sorted(self.worst_rows + later.worst_rows, key=lambda t: t[:2])[: self.top]
        for i in range(2):  # bfloat16 throughout both ranges, and the excess over both
            self.bf16[i] = self.bf16[i] and later.bf16[i]
            self.bf16_excess[i] = max(self.bf16_excess[i], later.bf16_excess[i])
            self.other_absmax[i] = max(self.other_absmax[i], later.other_absmax[i])

    def result(self) -> dict[str, Any]:
        ulp, ulp_at = self.best["ulp"] if self.ulp_dtype is not None else (None, None)
        side = 0 if self.bf16[0] else 1
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
            # (A is bfloat16, B is, what bfloat16 leaves unexplained, the other side's max |x|)
            "bf16": (self.bf16[0], self.bf16[1], self.bf16_excess[side], self.other_absmax[side]),
            "worst": [t[3] for t in self.worst],
            "worst_rows": [t[2] for t in self.worst_rows],
        }


__all__ = [
    "CHUNK",
    "FLOAT_ULPS",
    "Accumulator",
    "Collector",
    "Element",
    "RowDiff",
    "narrower_float",
    "top_indices",
    "ulp_distance",
]
