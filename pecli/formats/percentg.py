"""Numbers as the text of Python's ``%g``, vectorized: the values of CSV and TSV files.

:func:`format_rows` writes each value exactly as ``'%.{digits}g' % value`` does, as NumPy passes
over a block; :func:`block_text` cuts a row block into calls of the size that keeps them fast.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

#: Values per ``format_rows`` call, so that its arrays stay in the CPU cache; and where blocks are
#: formatted on several threads, larger calls (each call re-takes the GIL).  Measured on 2 cores:
#: 16M float32 values formatted on one thread 1.50 s at 2¹⁴, 1.57 s at 2¹⁶; ``generate -o x.csv`` of
#: 16384×1024 on two threads, start-up included, 1.22–1.35 s at 2¹⁴, 1.14–1.30 at 2¹⁵, 0.98–1.14 at 2¹⁶.
CELLS_PER_CALL = 1 << 14
SHARED_CELLS_PER_CALL = 1 << 16
#: The vectorized path handles up to 9 significant digits (float16's 5, float32's 9): its
#: fixed-point integers then stay below 2⁵³, exact in float64.  More use Python's ``%``.
_FAST_DIGITS = 9
#: Above this share of values needing Python's ``%`` (exponent notation, |v| ≥ 10, NaN, a
#: possible rounding tie), a whole call is formatted by Python: same bytes, old speed.
_SLOW_SHARE = 0.05


@lru_cache(maxsize=1)
def _tables() -> tuple[np.ndarray, np.ndarray]:
    """Correctly rounded powers of ten 10⁻³⁴⁰…10³⁴⁰, and ``uint32`` words of four ASCII digits for
    0…9999 followed by the same words with trailing zeros as NUL.  Built on first use."""
    pow10 = np.array([float(f"1e{k}") for k in range(-340, 341)])
    k = np.arange(10000)
    text = (np.stack([k // 1000, k // 100 % 10, k // 10 % 10, k % 10], axis=1) + ord("0")).astype(np.uint8)
    stripped = text.copy()
    for j in range(4):  # a zero digit with only zeros after it is dropped
        stripped[(text[:, j:] == ord("0")).all(axis=1), j] = 0
    return pow10, np.ascontiguousarray(np.concatenate([text, stripped])).view(np.uint32).reshape(-1)


def format_rows(block: np.ndarray, digits: int, sep: str = ",", *, shared: bool = False) -> bytes:
    """Rows of ``block`` as delimited text: each value exactly ``'%.{digits}g' % value`` (Python's
    bytes), ``sep`` between values, a newline after each row.  ``shared``: other threads format at
    the same time, so the padding is squeezed out by NumPy, which releases the GIL (10% slower
    alone than ``bytes.translate``, which holds it: two threads then took as long as one).

    Vectorized for fixed notation with ``|v| < 10`` (every sinusoid value): the value rounded to
    P significant digits is ``M = rint(|v|·10^(P−1−e))``, computed in float64 within
    ``2⁻⁵²·10^P`` of the exact scaled value, so it is the correctly rounded one unless the
    scaled fraction lies that close to ½.  ``M·10^(13+e−P)`` is then the value in fixed point
    with 12 decimals (an integer below 10¹³ < 2⁵³: exact), split into a units digit and three
    groups of four decimals written through a table of ASCII words (trailing zeros as NUL).  Each value
    gets a slot ``[separator before][sign][units][.][12 fraction digits]``; unused bytes stay
    NUL and are squeezed out at the end.  Possible ties, exponent notation, ``|v| ≥ 10`` and
    NaN/±inf are formatted by Python's ``%`` into their slot.
    """
    cols = block.shape[1]
    fmt = f"%.{digits}g"
    if digits > _FAST_DIGITS or block.size == 0:
        return _python_rows(block, fmt, sep)
    p = digits
    v = block.reshape(-1)
    pow10, digits4 = _tables()
    with np.errstate(all="ignore"):
        a = np.abs(v, dtype=np.float64)
        e = np.floor(np.log10(a, dtype=np.float32 if v.dtype.itemsize <= 4 else np.float64)).astype(np.intp)
        np.clip(e, -5, 1, out=e)  # outside [-4, 0] the value goes to Python anyway
        y = a * pow10[340 + p - 1 - e]
        # log10 (float32 or not) may be one off next to a power of ten: 10^(P−1) ≤ y < 10^P.
        off = (y < pow10[339 + p]) | (y >= pow10[340 + p])
        if off.any():
            e[off] += np.where(y[off] < pow10[339 + p], -1, 1)
            y[off] = a[off] * pow10[340 + p - 1 - e[off]]
        m = np.rint(y)
        tie = np.abs(np.subtract(y, m, out=y), out=y) > 0.5 - 2.0**-50 * 10.0**p  # 4x the error bound
        carry = m >= pow10[340 + p]  # 9.99…95 rounds up to 10^P
        if carry.any():
            m[carry] = pow10[339 + p]
            e[carry] += 1
        zero = a == 0
        python = ~zero & (tie | (e < -4) | (e > 0) | ~np.isfinite(a))
    slow = np.flatnonzero(python)
    if len(slow) > _SLOW_SHARE * v.size:
        return _python_rows(block, fmt, sep)
    texts = [(fmt % float(v[k])).encode() for k in slow]
    if any(len(t) > 15 for t in texts):  # e.g. a three-digit exponent: no room in the slot
        return _python_rows(block, fmt, sep)
    m[python | zero] = 0
    e[python | zero] = -4
    # Fixed point with 12 decimals: P significant digits starting at 10^e, e ≥ −4, P ≤ 9.
    fixed = m * pow10[340 + 12 - p + 1 + e]
    units = np.floor(fixed / 1e12)
    frac = fixed - units * 1e12
    g0 = np.floor(frac / 1e8)
    frac -= g0 * 1e8
    g1 = np.floor(frac / 1e4)
    g2 = frac - g1 * 1e4
    grid = np.zeros((v.size, 4), dtype=np.uint32)
    slot = grid.view(np.uint8)
    slot[1:, 0] = ord(sep)
    slot[cols::cols, 0] = ord("\n")
    slot[:, 1] = np.signbit(v) * np.uint8(ord("-"))
    slot[:, 2] = units.astype(np.uint8) + np.uint8(ord("0"))
    slot[:, 3] = (fixed != units * 1e12) * np.uint8(ord("."))
    # Group k is written without its trailing zeros when every later group is zero.
    tail2, tail1 = g2 == 0, (g1 == 0) & (g2 == 0)
    grid[:, 3] = digits4[(g2 + 10000).astype(np.intp)]
    grid[:, 2] = digits4[(g1 + tail2 * 10000.0).astype(np.intp)]
    grid[:, 1] = digits4[(g0 + tail1 * 10000.0).astype(np.intp)]
    for k, text in zip(slow, texts, strict=True):
        slot[k, 1:] = 0
        slot[k, 1 : 1 + len(text)] = np.frombuffer(text, dtype=np.uint8)
    if not shared:
        return grid.tobytes().translate(None, b"\0") + b"\n"
    flat = slot.reshape(-1)
    squeezed: bytes = flat[flat != 0].tobytes()
    return squeezed + b"\n"


def _python_rows(block: np.ndarray, fmt: str, sep: str) -> bytes:
    row_fmt = sep.join([fmt] * block.shape[1]) + "\n"
    return "".join([row_fmt % tuple(row) for row in block.tolist()]).encode()


def block_text(block: np.ndarray, digits: int, sep: str, shared: bool = False) -> list[bytes]:
    """A row block as delimited text (:func:`format_rows`), in pieces of :data:`CELLS_PER_CALL`
    values, or of :data:`SHARED_CELLS_PER_CALL` where other threads format at once (``shared``);
    left unjoined (joining a 4 MB float32 block's 11 MB of text cost 5–15% more)."""
    step = max(1, (SHARED_CELLS_PER_CALL if shared else CELLS_PER_CALL) // max(1, block.shape[1]))
    return [format_rows(block[a : a + step], digits, sep, shared=shared) for a in range(0, len(block), step)]


__all__ = ["CELLS_PER_CALL", "SHARED_CELLS_PER_CALL", "block_text", "format_rows"]
