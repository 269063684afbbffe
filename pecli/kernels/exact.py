"""Exact sinusoid kernels: angles ``p·ω`` kept in double-double, one rounding at the end.

Why not ``np.sin(p * omega)``: the float64 product ``p·ω`` is off by up to ``0.5 ulp(p·ω)``
(1.2e-10 rad at p = 10⁶) plus the error of ``ω`` itself times ``p``.  That is invisible for
values near ±1 but not for values near 0, where a float32 ulp is tiny.  Here the angle is
carried in *turns* (``t = p·ω/2π``) as an unevaluated sum of two float64s; its integer part is
dropped exactly, the fraction is reduced to an octant, and only then are sin/cos taken of an
argument in [-π/4, π/4] by fdlibm's kernels, the low word entering to first order.  The float64
result is within 0.75 float64 ulp of the exact value (97% correctly rounded; positions below
2⁴⁴), so rounding it once to float32/float16 gives the correctly rounded value except in cases
closer to a rounding midpoint than ~2⁻⁵³.
"""

from __future__ import annotations

import decimal
import itertools
import operator
import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, overload

import numpy as np

if TYPE_CHECKING:
    from pecli.dtypes import Arr


#: 2π to 60 significant digits (checked against mpmath in the tests).
TWO_PI_DEC = decimal.Decimal("6.28318530717958647692528676655900576839433879875021164194989")
TWO_PI_HI = float(TWO_PI_DEC)
TWO_PI_LO = float(TWO_PI_DEC - decimal.Decimal(TWO_PI_HI))
SPLITTER = 134217729.0  # 2**27 + 1, Veltkamp's constant for float64

#: float64 scratch cells per kernel call; bounds a kernel's temporary memory (~10 arrays).
BLOCK_CELLS = 1 << 18

#: Positions up to this bound are exactly representable.  float64 values stay within 1 ulp below
#: about 2**44; beyond, the frequency's own 2**-106 leaves ~p·ω·2**-105 rad (2**-52 absolutely at most).
MAX_POSITION = 2**53


def _split(a: Any) -> tuple[Arr, Arr]:
    """Veltkamp split: ``a = hi + lo`` with both halves holding at most 26 significant bits."""
    c = SPLITTER * a
    hi = c - (c - a)
    return hi, a - hi


def _two_prod(a: Any, b: Any) -> tuple[Arr, Arr]:
    """Dekker's exact product: ``a·b = p + e`` exactly (no FMA needed)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def _two_sum(a: Arr, b: Arr) -> tuple[Arr, Arr]:
    """Knuth's exact sum: ``a + b = s + e`` exactly."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


@lru_cache(maxsize=64)
def paper_exponents(dim: int, count: int) -> tuple[tuple[int, int], ...]:
    """The paper's exponents ``(2i, dim)`` for ``i < count``, built in C (a Python loop over a
    65536-wide table's frequencies cost more than the table's screen)."""
    return tuple(zip(range(0, 2 * count, 2), itertools.repeat(dim, count), strict=True))


def frequency_turns(base: float, dim: int, count: int) -> tuple[Arr, Arr, Arr]:
    """``ω_i = base^(−2i/dim)`` for ``i < count`` (the paper's rule); see ``frequencies``."""
    return frequencies(base, 1.0, paper_exponents(dim, count))


#: Frequencies computed by ratio from the last one before :func:`frequencies` evaluates an exp again.
RATIO_RUN = 4096


_computing = threading.Lock()


def frequencies(base: float, scale: float, exponents: tuple[tuple[int, int], ...]) -> tuple[Arr, Arr, Arr]:
    """``ω_i = scale · (base/scale)^(−n_i/d_i)`` for each exponent fraction ``(n_i, d_i)``.

    With ``scale = 1`` that is ``base^(−n_i/d_i)``; otherwise tensor2tensor's
    ``min_timescale · exp(−i·ln(max_timescale/min_timescale)/(half−1))`` with ``base`` the max.

    Returns ``(omega, w_hi, w_lo)`` where ``w_hi + w_lo`` is ``ω_i/2π`` to about 2⁻¹⁰⁶ relative,
    computed with the standard library's correctly rounded decimal ``ln``/``exp`` (no float64
    ``pow`` error enters the angle).  Cached: a table build asks for it once per row block, and
    the threads building blocks at once wait for the first to compute it (computing it in each
    cost a table 10⁶ columns wide 18 s instead of 7 on two cores).
    """
    with _computing:
        return _frequencies(base, scale, exponents)


@lru_cache(maxsize=64)
def _frequencies(base: float, scale: float, exponents: tuple[tuple[int, int], ...]) -> tuple[Arr, Arr, Arr]:
    dec = decimal.Decimal
    ctx = decimal.Context(prec=60)
    dscale = dec(scale)  # Decimal(float) is exact
    ln_base = ctx.subtract(ctx.ln(dec(base)), ctx.ln(dscale))
    count = len(exponents)
    omega = np.empty(count)
    w_hi = np.empty(count)
    w_lo = np.empty(count)
    # Consecutive exponents over one denominator (the usual 2i/d) step by a ratio: one 60-digit
    # multiply instead of an exp (8x faster; 500,000 columns took 26 s).  Each multiply is off by
    # at most 10⁻⁵⁹ relative and a fresh exp starts every RATIO_RUN terms, so the drift stays under
    # 10⁻⁵⁵, far below the 2⁻¹⁰⁶ ≈ 10⁻³² promised.
    ratios: dict[tuple[int, int], decimal.Decimal] = {}
    raw, prev, run = dec(0), (0, 0), RATIO_RUN
    for i, (num, den) in enumerate(exponents):
        if den == prev[1] and run < RATIO_RUN:
            step = (num - prev[0], den)
            ratio = ratios.get(step)
            if ratio is None:
                ratio = ratios[step] = ctx.exp(ctx.multiply(ln_base, ctx.divide(dec(-step[0]), dec(den))))
            raw, run = ctx.multiply(raw, ratio), run + 1
        else:
            raw, run = ctx.exp(ctx.multiply(ln_base, ctx.divide(dec(-num), dec(den)))), 0
        prev = (num, den)
        om = ctx.multiply(raw, dscale)
        w = ctx.divide(om, TWO_PI_DEC)
        omega[i] = float(om)
        w_hi[i] = float(w)
        w_lo[i] = float(ctx.subtract(w, decimal.Decimal(w_hi[i])))
    for arr in (omega, w_hi, w_lo):
        arr.flags.writeable = False
    return omega, w_hi, w_lo


def exp_frequencies(rate: int, count: int) -> tuple[Arr, Arr, Arr]:
    """``ω_k = e^(−rate·k)`` for ``k < count`` as :func:`frequencies` returns its ``ω`` (``(omega,
    w_hi, w_lo)``, ``w_hi + w_lo = ω/2π``), from the same 60-digit decimal ``exp`` (LoFTR's
    ``temp_bug_fix=False`` frequencies, ``rate`` 2)."""
    return exp_frequencies_of(rate, tuple(range(count)))


@lru_cache(maxsize=8)
def exp_frequencies_of(rate: int, ks: tuple[int, ...]) -> tuple[Arr, Arr, Arr]:
    """:func:`exp_frequencies` of the frequencies ``ks`` alone (each its own ``exp``: the same values)."""
    ctx = decimal.Context(prec=60)
    omega, w_hi, w_lo = np.empty(len(ks)), np.empty(len(ks)), np.empty(len(ks))
    for j, k in enumerate(ks):
        om = ctx.exp(decimal.Decimal(-rate * k))
        w = ctx.divide(om, TWO_PI_DEC)
        omega[j], w_hi[j] = float(om), float(w)
        w_lo[j] = float(ctx.subtract(w, decimal.Decimal(w_hi[j])))
    for arr in (omega, w_hi, w_lo):
        arr.flags.writeable = False
    return omega, w_hi, w_lo


#: (position, frequency) pairs per pass of :func:`sincos`: its ~100 temporaries stay in the cache
#: (a pass over 2**18 pairs, 2 MB a temporary, ran at a third of the speed).
CHUNK_PAIRS = 1 << 13


def sincos(positions: Arr, w_hi: Arr, w_lo: Arr) -> tuple[Arr, Arr]:
    """sin and cos of ``2π·p·(w_hi + w_lo)`` for every (position, frequency) pair, in float64.

    ``positions`` is a 1-D float64 array (integers below 2⁵³ for the accuracy promise); the
    result has shape ``(len(positions), len(w_hi))``.  Each value depends on its own pair alone.
    """
    n, m = len(positions), len(w_hi)
    step = max(1, CHUNK_PAIRS // max(1, m))
    if n <= step and m <= CHUNK_PAIRS:
        return _sincos_chunk(positions[:, None], w_hi[None, :], w_lo[None, :])
    # Rows wider than a pass are cut into column pieces too: a row of 10⁷ frequencies at once
    # would hold ~100 temporaries of 80 MB.
    width = min(m, CHUNK_PAIRS)
    sin_out, cos_out = np.empty((n, m)), np.empty((n, m))
    for a in range(0, n, step):
        chunk = positions[a : a + step, None]
        for c in range(0, m, width):
            z = slice(c, c + width)
            sin_out[a : a + step, z], cos_out[a : a + step, z] = _sincos_chunk(chunk, w_hi[None, z], w_lo[None, z])
    return sin_out, cos_out


def sincos_pairs(positions: Arr, w_hi: Arr, w_lo: Arr) -> tuple[Arr, Arr]:
    """:func:`sincos` of each pair ``(positions[j], w_hi[j] + w_lo[j])`` (1-D arrays of one length):
    scattered cells of a table, the same bits as the table's."""
    sin_out, cos_out = np.empty(len(positions)), np.empty(len(positions))
    for a in range(0, len(positions), CHUNK_PAIRS):
        z = slice(a, a + CHUNK_PAIRS)
        sin_out[z], cos_out[z] = _sincos_chunk(positions[z], w_hi[z], w_lo[z])
    return sin_out, cos_out


def _sincos_chunk(p: Arr, w_hi: Arr, w_lo: Arr) -> tuple[Arr, Arr]:
    """sin and cos of ``2π·p·(w_hi + w_lo)``, elementwise over the broadcast arrays."""
    t_hi, t_lo = _two_prod(p, w_hi)
    t_lo = t_lo + p * w_lo
    # Octant reduction in turns: q quarter-turns are exact to remove from t_hi, because t_hi·4
    # is exact and rint(t_hi·4)/4 differs from t_hi by less than t_hi's integer part.
    q = np.rint(t_hi * 4.0)
    f_hi = t_hi - q * 0.25
    f_hi, f_lo = _two_sum(f_hi, t_lo)
    # A carry from the low word can push |f| just past 1/8; refold so |f| ≤ 1/8 (+ tiny).  Always
    # (adj is mostly 0): a value must not depend on whether another one in its block needed it.
    adj = np.rint(f_hi * 4.0)
    q += adj
    f_hi, f_lo = _two_sum(f_hi - adj * 0.25, f_lo)
    # r = 2π·f as double-double; |r| ≤ π/4.
    r_hi, r_lo = _two_prod(f_hi, np.float64(TWO_PI_HI))
    r_lo += f_hi * TWO_PI_LO + f_lo * TWO_PI_HI
    r_hi, r_lo = _two_sum(r_hi, r_lo)
    s, c = _sin_kernel(r_hi, r_lo), _cos_kernel(r_hi, r_lo)
    # Rotate back by q quarter turns: (sin, cos)(r + qπ/2).  |q| < 2⁵⁶, so q mod 4 is its int64's
    # two low bits (two's complement keeps that true below zero); the signs are exact ±1 factors.
    k = q.astype(np.int64) & 3
    odd = (k & 1).astype(bool)
    sin_out = np.where(odd, c, s)
    cos_out = np.where(odd, s, c)
    sin_out *= _SIN_SIGN.take(k)
    cos_out *= _COS_SIGN.take(k)
    return sin_out, cos_out


#: The signs of sin and cos after k quarter turns (k = 0, 1, 2, 3).
_SIN_SIGN = np.array([1.0, 1.0, -1.0, -1.0])
_COS_SIGN = np.array([1.0, -1.0, -1.0, 1.0])


# fdlibm's kernels of sin and cos on [−π/4, π/4] for an argument ``x + y`` (``|y| ≤ ulp(x)/2``),
# as FreeBSD's msun/src/k_sin.c and k_cos.c (Sun Microsystems, 1993; "Permission to use, copy,
# modify, and distribute this software is freely granted, provided that this notice is
# preserved"): minimax polynomials with |error| < 2⁻⁵⁸ on the interval, the low word entering to
# first order.  Every operation is a NumPy ufunc, so a block costs ~20 vector operations instead
# of two calls to libm per value (NumPy's float64 sin and cos are scalar: ~30 ns a value here).
#: S1…S6 of k_sin.c and C1…C6 of k_cos.c.
SIN_COEFFS = (
    -1.66666666666666324348e-01,
    8.33333333332248946124e-03,
    -1.98412698298579493134e-04,
    2.75573137070700676789e-06,
    -2.50507602534068634195e-08,
    1.58969099521155010221e-10,
)
COS_COEFFS = (
    4.16666666666666019037e-02,
    -1.38888888888741095749e-03,
    2.48015872894767294178e-05,
    -2.75573143513906633035e-07,
    2.08757232129817482790e-09,
    -1.13596475577881948265e-11,
)
_S1, _S2, _S3, _S4, _S5, _S6 = SIN_COEFFS
_C1, _C2, _C3, _C4, _C5, _C6 = COS_COEFFS


def _sin_kernel(x: Arr, y: Arr) -> Arr:
    """``sin(x + y)``: k_sin.c with ``iy = 1``."""
    z = x * x
    w = z * z
    r = _S2 + z * (_S3 + z * _S4) + z * w * (_S5 + z * _S6)
    v = z * x
    return np.asarray(x - ((z * (0.5 * y - v * r) - y) - v * _S1))


def _cos_kernel(x: Arr, y: Arr) -> Arr:
    """``cos(x + y)``: k_cos.c (the 2009 version, without branches)."""
    z = x * x
    w = z * z
    r = z * (_C1 + z * (_C2 + z * _C3)) + w * w * (_C4 + z * (_C5 + z * _C6))
    hz = 0.5 * z
    w = 1.0 - hz
    return np.asarray(w + (((1.0 - w) - hz) + (z * r - x * y)))


def turns(omega: Arr) -> tuple[Arr, Arr]:
    """``ω/2π`` of float64 frequencies as a double-double ``(hi, lo)``: the input of :func:`sincos`
    (read-only; the last few kept: a table's row blocks, or identify's pieces of a candidate's
    rows, each ask for the same ones, ~1.5 µs a frequency)."""
    return _turns(np.ascontiguousarray(omega, dtype=np.float64).tobytes())


@lru_cache(maxsize=8)
def _turns(omega: bytes) -> tuple[Arr, Arr]:
    ctx = decimal.Context(prec=60)
    values = np.frombuffer(omega, dtype=np.float64)
    hi, lo = np.empty(len(values)), np.empty(len(values))
    for i, w in enumerate(values.tolist()):
        t = ctx.divide(decimal.Decimal(w), TWO_PI_DEC)
        hi[i] = float(t)
        lo[i] = float(ctx.subtract(t, decimal.Decimal(hi[i])))
    hi.flags.writeable = lo.flags.writeable = False
    return hi, lo


class RowBlocks(Sequence[tuple[int, int]]):
    """``[a, b)`` ranges covering ``rows`` rows in steps of ``step`` rows, as a lazy sequence: the
    plan of a 10¹³-row table is two numbers, not a list of a billion ranges built before the first
    block (or a refusal) can come."""

    def __init__(self, rows: int, step: int, starts: range | None = None) -> None:
        self.rows, self.step = rows, step
        self.starts = range(0, rows, step) if starts is None else starts

    def __len__(self) -> int:
        return len(self.starts)

    @overload
    def __getitem__(self, i: int) -> tuple[int, int]: ...
    @overload
    def __getitem__(self, i: slice) -> RowBlocks: ...
    def __getitem__(self, i: int | slice) -> tuple[int, int] | RowBlocks:
        if isinstance(i, slice):
            return RowBlocks(self.rows, self.step, self.starts[i])
        a = self.starts[i]
        return a, min(a + self.step, self.rows)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and len(self) == len(other) and all(map(operator.eq, self, other))

    def __repr__(self) -> str:
        return f"RowBlocks({self.rows} rows, {self.step} a block)"


def row_blocks(rows: int, cells_per_row: int, cells: int = BLOCK_CELLS) -> RowBlocks:
    """``[a, b)`` ranges covering ``rows`` rows, each at most ``cells`` cells (but a row at least)."""
    return RowBlocks(rows, max(1, cells // max(1, cells_per_row)))


def split_lines(c0: int, c1: int, line: int) -> tuple[list[tuple[int, int]], range]:
    """Cells ``[c0, c1)`` of a grid whose cells run along lines of ``line``: the partial lines at
    its ends (cell ranges) and the whole lines between (line numbers, possibly none)."""
    l0, l1 = -(-c0 // line), c1 // line
    if l0 >= l1:
        return ([(c0, c1)] if c0 < c1 else []), range(0)
    return [(a, b) for a, b in ((c0, l0 * line), (l1 * line, c1)) if a < b], range(l0, l1)


def axis_run(c0: int, c1: int, size: int, stride: int) -> tuple[int, int]:
    """The coordinates of a grid axis of ``size`` (its coordinate steps every ``stride`` cells)
    that cells ``[c0, c1)`` meet, as ``(lo, count)``: ``lo, lo + 1, …`` modulo ``size`` (a run
    may wrap past a line's end), ``(0, size)`` when they meet every one, ``(0, 0)`` when there
    are no cells.  A block of a long grid thus needs its own cells' values, not its axes' every one."""
    if c1 <= c0:
        return 0, 0
    first, last = c0 // stride, (c1 - 1) // stride
    if last - first + 1 >= size:
        return 0, size
    return first % size, last - first + 1


def run_index(coords: np.ndarray, lo: int, size: int) -> np.ndarray:
    """Rows of an :func:`axis_run` table ``(lo, count)`` holding coordinates ``coords``."""
    return coords if lo == 0 else (coords - lo) % size


def as_slice(columns: np.ndarray) -> slice | np.ndarray:
    """Column indices as the slice they step through when they are evenly spaced and rising (a
    strided copy instead of a scattered one), else themselves."""
    if len(columns) == 0:
        return columns
    step = int(columns[1] - columns[0]) if len(columns) > 1 else 1
    if step < 1 or not np.array_equal(columns, columns[0] + step * np.arange(len(columns))):
        return columns
    return slice(int(columns[0]), int(columns[-1]) + 1, step)


def line_blocks(r0: int, r1: int, first: int, line: int, width: int) -> Sequence[tuple[int, int]]:
    """Row blocks, as :func:`row_blocks`, of rows ``[r0, r1)`` (counted from ``r0``) of a grid table
    whose cell ``c`` is row ``first + c`` and whose cells run along lines of ``line``: cut at whole
    lines, about :data:`BLOCK_CELLS` cells each, so that only the range's own ends hold part of a
    line.  Lines longer than a block: :func:`row_blocks`."""
    if line * width > BLOCK_CELLS:
        return row_blocks(r1 - r0, width)
    step = BLOCK_CELLS // (line * width) * line
    lo = max(0, -(-(r0 - first + 1) // step) * step)  # the first cut after row r0
    cuts = {0, r1 - r0, *(c + first - r0 for c in range(lo, r1 - first, step))}
    return list(itertools.pairwise(sorted(cuts)))


def fill_exact(sin_out: Arr, cos_out: Arr, first: int, w_hi: Arr, w_lo: Arr) -> None:
    """Row ``r`` of ``sin_out``/``cos_out`` ← sin/cos of position ``first + r`` (cos: the first
    ``cos_out.shape[1]`` frequencies), rounded once from the exact value."""
    n_sin, n_cos = sin_out.shape[1], cos_out.shape[1]
    width = min(max(1, n_sin), BLOCK_CELLS)  # a row wider than a block goes in column pieces
    for a, b in row_blocks(sin_out.shape[0], width):
        positions = np.arange(first + a, first + b, dtype=np.float64)
        for c0 in range(0, n_sin, width):
            c1, k1 = min(c0 + width, n_sin), min(c0 + width, n_cos)
            s, c = sincos(positions, w_hi[c0:c1], w_lo[c0:c1])
            # Assignment casts float64 → dtype: the one rounding (round-half-even, also for float16).
            sin_out[a:b, c0:c1] = s
            if k1 > c0:
                cos_out[a:b, c0:k1] = c[:, : k1 - c0]
