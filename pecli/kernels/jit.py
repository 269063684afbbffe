"""The exact kernel compiled by numba (the optional ``fast`` extra): :func:`sincos_into` (an exact
table's rows), :func:`sincos_flat` (one frequency along an array: a float32 pipeline's angles) and
:func:`pipeline32_into` (a float32 pipeline of the exp or pow form, angles and all); and
:func:`round16_into`, float32 values rounded to float16 or bfloat16 on their bits in one pass
(:mod:`pecli.kernels.halves`: the same bits as its NumPy passes).

The same arithmetic as :func:`pecli.kernels.exact.sincos`, operation for operation and in the same
order, as loops over (position, frequency) pairs instead of ~100 NumPy passes over a block:
the Dekker product of the position and the frequency in turns, the exact removal of whole turns,
the octant, ``2π·f`` as a double-double and fdlibm's kernels.  numba compiles without fast-math,
so every operation rounds as NumPy's does and none is fused into an FMA: the values are the NumPy
kernel's, bit for bit (``tests/numerics/test_compiled.py`` checks it), only ~10 times faster (4.8 ns a pair
into strided rows, against 47 ns).

Only :mod:`pecli.kernels.compiled` imports this module, and only for tables large enough to repay
importing numba and loading the machine code from numba's cache (~0.6 s; the first run after an
install compiles it, ~1.5 s).  ``nogil``: the row ranges of :func:`pecli.kernels.threads.run_parts`
run on every core.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types

from pecli.kernels.exact import COS_COEFFS, SIN_COEFFS, SPLITTER, TWO_PI_HI, TWO_PI_LO, turns

S1, S2, S3, S4, S5, S6 = SIN_COEFFS
C1, C2, C3, C4, C5, C6 = COS_COEFFS


@njit(inline="always")
def two_prod(a: float, b: float) -> tuple[float, float]:
    """Dekker's exact product ``a·b = p + e`` (Veltkamp splits, no FMA)."""
    p = a * b
    c = SPLITTER * a
    ah = c - (c - a)
    al = a - ah
    c = SPLITTER * b
    bh = c - (c - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


@njit(inline="always")
def two_sum(a: float, b: float) -> tuple[float, float]:
    """Knuth's exact sum ``a + b = s + e``."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


_ROWS = types.float64[:, :]
#: Read-only frequencies (``pecli.kernels.exact.frequencies`` caches them so); writable ones convert.
_FREQUENCIES = types.Array(types.float64, 1, "C", readonly=True)
_SIGNATURES = [types.void(types.float64[::1], _FREQUENCIES, _FREQUENCIES, _ROWS, _ROWS)]


@njit(inline="always")
def sincos_one(p: float, w_hi: float, w_lo: float) -> tuple[float, float]:
    """sin and cos of ``2π·p·(w_hi + w_lo)``: :func:`pecli.kernels.exact.sincos` for one pair."""
    t_hi, t_lo = two_prod(p, w_hi)
    t_lo = t_lo + p * w_lo
    q = np.rint(t_hi * 4.0)
    f_hi = t_hi - q * 0.25
    f_hi, f_lo = two_sum(f_hi, t_lo)
    adj = np.rint(f_hi * 4.0)
    q += adj
    f_hi, f_lo = two_sum(f_hi - adj * 0.25, f_lo)
    r_hi, r_lo = two_prod(f_hi, TWO_PI_HI)
    r_lo += f_hi * TWO_PI_LO + f_lo * TWO_PI_HI
    x, y = two_sum(r_hi, r_lo)
    z = x * x
    w = z * z
    r = S2 + z * (S3 + z * S4) + z * w * (S5 + z * S6)
    v = z * x
    s = x - ((z * (0.5 * y - v * r) - y) - v * S1)
    r = z * (C1 + z * (C2 + z * C3)) + w * w * (C4 + z * (C5 + z * C6))
    hz = 0.5 * z
    w = 1.0 - hz
    c = w + (((1.0 - w) - hz) + (z * r - x * y))
    k = np.int64(q) & 3
    if k & 1:
        s, c = c, s
    if k >= 2:
        s = -s
    if k == 1 or k == 2:
        c = -c
    return s, c


@njit(_SIGNATURES, cache=True, nogil=True, boundscheck=False)
def sincos_into(
    positions: np.ndarray, w_hi: np.ndarray, w_lo: np.ndarray, sin_out: np.ndarray, cos_out: np.ndarray
) -> None:
    """``sin_out[a, i]``, ``cos_out[a, i]`` ← sin, cos of ``2π·positions[a]·(w_hi[i] + w_lo[i])``
    (cos for the first ``cos_out.shape[1]`` frequencies only); contiguous inputs, outputs of any
    strides, all float64."""
    n, m = sin_out.shape
    s_row, c_row = np.empty(m), np.empty(m)
    for a in range(n):
        p = positions[a]
        for i in range(m):  # into contiguous buffers: the loop the compiler vectorizes (~4 times
            s_row[i], c_row[i] = sincos_one(p, w_hi[i], w_lo[i])  # faster than strided stores)
        for i in range(m):
            sin_out[a, i] = s_row[i]
        for i in range(cos_out.shape[1]):
            cos_out[a, i] = c_row[i]


_FLAT = types.float64[::1]


@njit([types.void(_FLAT, types.float64, types.float64, _FLAT, _FLAT)], cache=True, nogil=True, boundscheck=False)
def sincos_flat(x: np.ndarray, w_hi: float, w_lo: float, sin_out: np.ndarray, cos_out: np.ndarray) -> None:
    """``sin_out[j]``, ``cos_out[j]`` ← sin, cos of ``2π·x[j]·(w_hi + w_lo)``: one frequency along
    contiguous arrays, the loop the compiler vectorizes (a framework pipeline's float32 angles,
    ``w = 1/2π``)."""
    for j in range(x.size):
        sin_out[j], cos_out[j] = sincos_one(x[j], w_hi, w_lo)


#: One radian in turns (``1/2π``) as a double-double: ``sincos_one(x, …)`` is sin and cos of ``x``.
RADIAN_HI, RADIAN_LO = (float(v[0]) for v in turns(np.array([1.0])))
_ROWS32 = types.float32[:, :]


@njit([types.void(types.float32[::1], types.float32[::1], _ROWS32, _ROWS32)], cache=True, nogil=True, boundscheck=False)
def pipeline32_into(positions: np.ndarray, inv: np.ndarray, sin_out: np.ndarray, cos_out: np.ndarray) -> None:
    """A framework's float32 pipeline, ``angle = position.float() * inv_freq`` then ``sin``/``cos``:
    ``sin_out[a, i]``, ``cos_out[a, i]`` ← sin, cos of the float32 product ``positions[a]·inv[i]``,
    each by the exact kernel and rounded once to float32, as
    :func:`pecli.kernels.pipelines.sin_cos_rounded` does (cos for the first ``cos_out.shape[1]``)."""
    n, m = sin_out.shape
    x, s_row, c_row = np.empty(m), np.empty(m), np.empty(m)
    for a in range(n):
        p = positions[a]
        for i in range(m):
            x[i] = np.float64(p * inv[i])  # the float32 product, as torch forms it
        for i in range(m):
            s_row[i], c_row[i] = sincos_one(x[i], RADIAN_HI, RADIAN_LO)
        for i in range(m):
            sin_out[a, i] = np.float32(s_row[i])
        for i in range(cos_out.shape[1]):
            cos_out[a, i] = np.float32(c_row[i])


#: Cells per run of :func:`round16_into`: a run is rounded in one vectorized loop and scanned again
#: only when it holds a cell the float32 value cannot decide.
_RUN = 256


@njit(inline="always")
def bfloat16_bits(u: int, check: bool) -> tuple[int, bool]:
    """bfloat16 bits of float32 bits ``u``, rounded to nearest even on the integer, and whether the
    float32 value cannot decide: not finite, or (``check``) its low half within 1 of 0x8000."""
    low = u & 0xFFFF
    doubt = ((u & 0x7FFFFFFF) >= 0x7F800000) | (check & (low >= 0x7FFF) & (low <= 0x8001))
    return (u + 0x7FFF + ((u >> 16) & 1)) >> 16, doubt


@njit(inline="always")
def float16_bits(u: int, check: bool) -> tuple[int, bool]:
    """float16 bits of float32 bits ``u`` in float16's normal range (or ±0), rounded to nearest
    even on the integer, and whether the float32 value cannot decide: outside that range (a
    float16 subnormal, an overflow, inf, nan), or (``check``) its low 13 bits within 1 of 0x1000."""
    m = u & 0x7FFFFFFF
    low = m & 0x1FFF
    outside = (m < 0x38800000) | (m >= 0x477FF000)
    doubt = ((m != 0) & outside) | (check & (low >= 0xFFF) & (low <= 0x1001))
    r = 0 if outside else ((m - 0x38000000) + 0xFFF + ((m >> 13) & 1)) >> 13
    return r | ((u >> 16) & 0x8000), doubt


@njit(inline="always")
def cell_bits(u: int, half: bool, check: bool) -> tuple[int, bool]:
    """:func:`float16_bits` (``half``) or :func:`bfloat16_bits` of ``u``."""
    return float16_bits(u, check) if half else bfloat16_bits(u, check)


@njit(inline="always")
def round_run(bits: np.ndarray, out: np.ndarray, half: bool, check: bool) -> int:
    """``out`` ← the rounded ``bits`` (a loop the compiler vectorizes: indices from 0, which numba
    knows are not negative); nonzero when a cell of the run is doubtful."""
    seen = 0
    for i in range(bits.size):
        r, d = cell_bits(int(bits[i]), half, check)
        out[i] = r
        seen |= d
    return seen


_ROUND16 = [types.int64(types.uint32[::1], types.uint16[::1], types.boolean, types.boolean, types.int64[::1])]


@njit(_ROUND16, cache=True, nogil=True, boundscheck=False)
def round16_into(bits: np.ndarray, out: np.ndarray, half: bool, check: bool, doubts: np.ndarray) -> int:
    """``out[i]`` ← float32 bits ``bits[i]`` rounded to float16 (``half``) or bfloat16, in one pass;
    the indices of the cells the float32 value cannot decide (see :func:`float16_bits`,
    :func:`bfloat16_bits`) go to ``doubts`` (as long as ``bits``), and their number is returned:
    those cells of ``out`` are left for the caller to write."""
    count = 0
    for a in range(0, bits.size, _RUN):
        run = bits[a : a + _RUN]
        if half:
            seen = round_run(run, out[a : a + _RUN], True, check)
        else:
            seen = round_run(run, out[a : a + _RUN], False, check)
        if seen:
            for i in range(run.size):
                if cell_bits(int(run[i]), half, check)[1]:
                    doubts[count] = a + i
                    count += 1
    return count


__all__ = ["bfloat16_bits", "float16_bits", "pipeline32_into", "round16_into", "sincos_flat", "sincos_into"]
