"""16-bit tables (bfloat16, float16) rounded from float32 rows: one pass, and a few cells in float64.

A 16-bit table is built as float32 rows (fast: the rotation kernel writes float32 at the speed
of memory) and each cell rounded once to the 16-bit format.  Its value is the rounding of the
recipe's *carrier* value (see ``Recipe.carrier``):

- a float32 carrier (a framework's float32 pipeline): the float32 value rounded to nearest even,
  as torch casts; nothing is in doubt.
- a float64 carrier (the exact table): the float32 value v is within one float32 ulp of the
  float64 value x, and the 16-bit format's rounding midpoints lie on the float32 grid (bfloat16:
  a float32 whose low 16 bits are 0x8000; float16, in its normal range 2⁻¹⁴ ≤ |v| < 65520: low 13
  bits 0x1000).  Unless v's dropped bits are within ±1 of that pattern, v is at least two float32
  ulps from every midpoint, so x lies on the same side: v and x round alike.  The other cells
  (about 1 in 22,000 for bfloat16, 1 in 2,700 for float16, plus float16's subnormals and
  overflows) are computed in float64 (the recipe's ``cells``) and rounded from it
  (:func:`pecli.dtypes.round_to`: correctly rounded).

The rounding itself is on the integer bits (round half to even), by numba in one pass that also
lists the doubtful cells (:func:`pecli.kernels.jit.round16_into`), or by NumPy in cache-sized
passes (bfloat16: ``ml_dtypes``' cast; float16: the same integer formula), with the same bits.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pecli.dtypes import numpy_dtype, round_to
from pecli.kernels.compiled import rounding16
from pecli.kernels.threads import run_blocks

#: Cells per pass of the NumPy rounding (its 512 kB temporaries stay in a core's cache), and per
#: call of the compiled one (no temporaries).  Each pass re-takes the GIL, so passes much smaller
#: than this stop scaling with threads (see ``pecli.kernels.rotation._BATCH_PAIRS``); on 2 cores
#: 2¹⁷ was as fast as 2¹⁶ on one thread and faster on two, 2¹⁸ 10% slower on one.
ROUNDING_CELLS = 1 << 17
COMPILED_ROUNDING_CELLS = 1 << 20
#: Doubtful cells computed in float64 at once: this many rows' worth (bounds their scratch).
EXACT_ROWS = 16
#: ... and at least this many cells per call, however narrow the table.
EXACT_MIN_CELLS = 1024

#: ``exact(rows, cols)``: the float64 carrier values at cells ``(rows[j], cols[j])``.
Exact = Callable[[np.ndarray, np.ndarray], np.ndarray]


def exact_chunk(width: int) -> int:
    """Doubtful cells handed to ``exact`` at once, for a table ``width`` columns wide."""
    return max(EXACT_MIN_CELLS, EXACT_ROWS * width)


def round_rows(f32: np.ndarray, name: str, exact: Exact | None, table_cells: int) -> np.ndarray:
    """The float32 rows ``f32`` rounded once to ``name`` (``bfloat16`` or ``float16``).

    ``exact`` gives the float64 values of a float64 carrier (``None``: the carrier is float32,
    the cells are its values); ``table_cells``: the whole table's cells (a writer's row blocks),
    on which loading the compiled kernel is decided.  Bit-identical whichever kernel runs.
    """
    f32 = np.ascontiguousarray(f32, dtype=np.float32)
    out = np.empty(f32.shape, dtype=numpy_dtype(name))
    bits, half = f32.reshape(-1).view(np.uint32), out.reshape(-1).view(np.uint16)
    kernel = rounding16(table_cells)
    check = exact is not None
    found: list[np.ndarray] = []

    def block(a: int, b: int) -> None:
        if kernel is not None:
            doubts = np.empty(b - a, dtype=np.int64)
            count = kernel(bits[a:b], half[a:b], name == "float16", check, doubts)
            found.append(doubts[:count] + a)
        else:
            found.append(numpy_round(bits[a:b], half[a:b], name, check) + a)

    cells, step = bits.size, ROUNDING_CELLS if kernel is None else COMPILED_ROUNDING_CELLS
    run_blocks(block, [(a, min(a + step, cells)) for a in range(0, cells, step)])
    doubts = np.concatenate([np.zeros(0, dtype=np.int64), *found])
    found.clear()  # the pieces: only the one array of doubtful cells is kept
    if doubts.size:
        doubts.sort()
        _settle(f32.reshape(-1), half, doubts, name, exact, f32.shape[1])
    return out


def _settle(
    values: np.ndarray, half: np.ndarray, doubts: np.ndarray, name: str, exact: Exact | None, width: int
) -> None:
    """Write the cells the rounding pass left: the library's cast of the float32 value, then, for
    a float64 carrier, the rounding of the float64 value where the float32 one is finite and not
    zero (a zero float32 is the rounding of a value that rounds to that zero in 16 bits too)."""
    v = values[doubts]
    with np.errstate(over="ignore", invalid="ignore"):  # overflowing to inf is the rounding's value
        half[doubts] = round_to(v, name).view(np.uint16)
        if exact is None:
            return
        redo = doubts[np.isfinite(v) & (v != 0)]
        step = exact_chunk(width)
        for a in range(0, redo.size, step):
            flat = redo[a : a + step]
            rows, cols = np.divmod(flat, width)
            half[flat] = round_to(exact(rows, cols), name).view(np.uint16)


def numpy_round(bits: np.ndarray, out: np.ndarray, name: str, check: bool) -> np.ndarray:
    """The NumPy rounding pass over one block: ``out`` ← ``bits`` (float32) rounded to ``name``
    as :func:`pecli.kernels.jit.round16_into` does; returns the doubtful cells' indices (a
    superset is fine: :func:`_settle` writes the same bits the pass would)."""
    if name == "bfloat16":
        with np.errstate(invalid="ignore"):  # nan stays nan
            round_to(bits.view(np.float32), "bfloat16", out=out.view(numpy_dtype("bfloat16")))
        if not check:
            return np.zeros(0, dtype=np.int64)
        low = bits & np.uint32(0xFFFF)
        low -= np.uint32(0x7FFF)  # 0x7FFF…0x8001 → 0…2 (the rest wraps far above)
        return np.flatnonzero(low <= 2)
    m = bits & np.uint32(0x7FFFFFFF)
    t = m >> np.uint32(13)
    t &= np.uint32(1)
    t += m
    t -= np.uint32(0x38000000 - 0xFFF)  # rebias the exponent (127 → 15), add half an ulp less one
    t >>= np.uint32(13)
    sign = bits >> np.uint32(16)
    sign &= np.uint32(0x8000)
    t |= sign
    out[...] = t  # the low 16 bits; cells outside the normal range are doubtful, written later
    m -= np.uint32(0x38800000)  # the normal range → 0…0x0EFFF000 (below it wraps far above)
    doubt = m >= np.uint32(0x477FF000 - 0x38800000)
    if check:
        m &= np.uint32(0x1FFF)  # the low 13 bits survive the subtraction (0x38800000 has none)
        m -= np.uint32(0xFFF)
        doubt |= m <= 2
    return np.flatnonzero(doubt)


__all__ = [
    "COMPILED_ROUNDING_CELLS",
    "EXACT_MIN_CELLS",
    "EXACT_ROWS",
    "ROUNDING_CELLS",
    "exact_chunk",
    "numpy_round",
    "round_rows",
]
