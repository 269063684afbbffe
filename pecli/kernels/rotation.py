"""The fast sinusoid kernel: sin/cos tables by block rotation, at the speed of memory.

Position ``p`` is split as ``p = k·B + r`` with ``0 ≤ r < B`` (``B`` a power of two that depends
only on the number of frequencies).  With angles ``α = r·ω`` and ``β = k·B·ω``::

    sin p·ω + i·cos p·ω = (sin α + i·cos α) · (cos β − i·sin β)

``Z0 = sin α + i·cos α`` for ``r < B`` comes from the exact double-double kernel
(``pecli.kernels.exact.sincos``, cached).  The block rotations are two exact ones multiplied,
``k = K·G + j``: by ``K·G·B`` (exact kernel, once per ``G`` blocks) and by ``j·B`` (exact kernel,
cached).  Every value is then one complex128 multiply, rounded once to the output dtype.  No
rotation is built from another block's, so errors do not accumulate along the table, and the
split of ``p`` depends on ``p`` alone, so any row range (and any split between threads) gives
the same bits as the whole table.

Accuracy, ``u = 2⁻⁵³``: the exact kernel's values are within ``u``; the block rotation (one
complex multiply of two of them) within ``5.7u``; the value (one more) within ``9.1u ≈ 2⁻⁴⁹·⁸``
of exact, absolutely.

- float32: ``9.1u`` is under half a float32 ulp whenever ``|v| ≥ 2⁻²⁵``, so rounding stays
  within 1 ulp; it is correctly rounded unless the exact value lies within ``9.1u/ulp`` of a
  rounding midpoint (2⁻²⁵·⁸ ulp near 1, 0.04 ulp at ``|v| = 2⁻²²``).  Values below
  ``TINY = 2⁻²²`` (near the zeros of sin and cos: about one in 3·10⁶ values of a large table)
  are recomputed with the exact kernel, so the promise holds for any table, not only for those
  whose smallest value happens to be large enough.  Block 0 (positions below ``B``) is ``Z0``.
- float16: its grid is at least 2⁻²⁴ apart, so ``9.1u`` only matters within 2⁻²⁵·⁸ ulp of a
  midpoint: within 1 ulp always.  Kinds that compute scattered cells in float64 (the sinusoidal
  kind) do not come here for float16: their table is rotated in float32 and each value rounded
  once to float16, the few that float32 cannot decide from float64 (:mod:`pecli.kernels.halves`),
  so it is correctly rounded (and faster: NumPy casts to float16 one value at a time).
- Tables of more than :data:`ROTATE_MAX_FREQUENCIES` frequencies (any dtype), and tables of at
  most ``B + G`` rows (:func:`rotates`), are computed by the exact kernel, value by value, column
  piece by column piece: correctly rounded, and memory that does not grow with the width.
- float64 (and any other dtype): ``9.1u`` is thousands of ulp for values near zero, so those
  keep the exact kernel (``pecli.kernels.exact.fill_exact``), row blocks split between threads;
  compiled by numba for large float64 tables when the ``fast`` extra is installed
  (``pecli.kernels.compiled``: the same bits).

The interleaved float32 layout (sin in even columns, cos in odd) is written in one pass: its
rows viewed as complex64 *are* ``sin + i·cos`` pairs, the multiply's output.

Across machines: NumPy's SIMD complex multiply fuses its multiply-add (FMA) where its dispatch
finds one (on this x86-64 machine with AVX-512, 25% of complex128 products differ in their last
bit from ``ac − bd, ad + bc`` rounded step by step) and not where it does not; the two differ by
about an ulp of float64, which changes a float32 value only when it lies within that of a
rounding midpoint.  On one machine the
bits never depend on threads or row ranges; between an FMA machine and one without, a value in
some 10⁸–10⁹ may differ by one ulp (none of the 67 M values of a 65536×1024 table did when the
multiply was replaced by the unfused one).  Deciding such values exactly would double the kernel's
cost (measured: 2.9 → 5.9 ns a value).
"""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np
from numpy.lib.stride_tricks import as_strided

from pecli.kernels.compiled import exact_sincos
from pecli.kernels.exact import fill_exact, sincos
from pecli.kernels.threads import cpu_threads, run_parts

#: Values whose rotated |value| is below this are recomputed exactly (float32 output).
TINY = 2.0**-22
#: complex128 cells of ``Z0`` (``B × n``): about 1 MB, so it stays in cache while blocks stream.
_Z0_CELLS = 1 << 16
#: Largest and smallest block ``B``: a larger ``B`` means fewer NumPy calls per row.
_B_MAX, _B_MIN = 256, 8
#: complex128 cells per scratch/rotation chunk (the generic path's working set).
_CHUNK_CELLS = 1 << 15
#: complex64 pairs of output per multiply in the interleaved float32 path: consecutive blocks go
#: through one NumPy call (1 MB, with the tiny-value check's 1 MB temporary: a core's 2 MB cache),
#: since each call re-takes the GIL.  Measured on 16 cores: threads of calls writing 128 kB each
#: stopped at ~4 GB/s together, calls of 2 MB reached 19 GB/s (``benchmarks/write_path.py --cases
#: gil``); on 2 cores, batches of 2 MB made one thread 15% slower (out of the cache).  A narrow
#: table's blocks are far smaller (64 columns: 64 kB), so it gains most.
_BATCH_PAIRS = 1 << 17
#: Blocks per coarse rotation (see ``_rotations``).
_GROUP = 64
#: Work (rows × frequencies) below which threads cost more than they save.
_THREAD_CELLS = 1 << 16
#: Frequencies above which a table is not rotated but computed exactly, value by value: the
#: rotations' fixed cost (``B + G`` exact rows, ~1.2 kB a frequency, cached) would outgrow memory
#: and a wide table's few rows.  A fact of the table's width, so every row range of a table takes
#: the same path (the same bits).
ROTATE_MAX_FREQUENCIES = 1 << 15


def rotates(dtype: np.dtype | type, n_freq: int, table_rows: int | None) -> bool:
    """Whether a table of ``table_rows`` rows and ``n_freq`` frequencies in ``dtype`` is rotated:
    float32 and float16 tables at most :data:`ROTATE_MAX_FREQUENCIES` wide, and longer than the
    ``B + G`` rows of exact values the rotations cost (a shorter one, computed value by value by
    the exact kernel, costs less: a 64×65536 table's rotations, 37 MB kept, were 64 rows' worth
    ten times over); ``None``: rows not known, the width decides.  A fact of the table, so every
    row range of it takes the same path."""
    return (
        np.dtype(dtype) in (np.float32, np.float16)
        and n_freq <= ROTATE_MAX_FREQUENCIES
        and (table_rows is None or table_rows > block_rows(n_freq) + _GROUP)
    )


def block_rows(n_freq: int) -> int:
    """``B`` for ``n_freq`` frequencies: a power of two, ``Z0`` about ``_Z0_CELLS`` cells."""
    b = _B_MAX
    while b > _B_MIN and b * n_freq > _Z0_CELLS:
        b //= 2
    return b


def fill_sincos(
    sin_out: np.ndarray,
    cos_out: np.ndarray,
    first_position: int,
    w_hi: np.ndarray,
    w_lo: np.ndarray,
    *,
    threads: int | None = None,
    table_rows: int | None = None,
) -> None:
    """Row ``r`` of ``sin_out``/``cos_out`` ← sin/cos of ``2π·p·(w_hi + w_lo)``, ``p = first_position + r``.

    ``sin_out`` is ``(rows, n_sin)``, ``cos_out`` ``(rows, n_cos)`` with ``n_cos ≤ n_sin`` (cos uses
    the first ``n_cos`` frequencies), both of the output dtype, possibly strided views of one
    array.  ``w_hi + w_lo`` are the frequencies in turns per position (double-double, as
    ``pecli.kernels.exact.frequencies`` gives them).  float32/float16 output is rotated (within 1 ulp
    of exact; the module docstring says which float16 tables are not built here); float64 and
    other dtypes use the exact kernel, and so do tables too short to pay for the rotations
    (:func:`rotates`).  ``threads``: None = as many as pay (up to the CPUs available), 1 = none.
    ``table_rows``: the whole table's rows, so that whether it is rotated and whether loading
    the compiled kernel pays are decided on the whole table when it is asked for block by block
    (a writer's row blocks); ``None``: rotated whenever the width allows, the compiled kernel
    decided on ``rows``.  Bit-identical whatever the threads, the row split or the kernel.
    """
    rows, n_sin = sin_out.shape
    n_cos = cos_out.shape[1]
    if cos_out.shape[0] != rows or n_cos > n_sin or len(w_hi) < n_sin or len(w_lo) < n_sin:
        raise ValueError(
            f"fill_sincos: sin_out {sin_out.shape}, cos_out {cos_out.shape} and {len(w_hi)} frequencies do not fit"
        )
    if first_position < 0 or first_position + rows > 2**53:
        raise ValueError(f"fill_sincos: positions {first_position}..{first_position + rows} are outside 0..2**53")
    if rows == 0 or n_sin == 0:
        return
    w_hi, w_lo = (
        np.ascontiguousarray(w_hi[:n_sin], dtype=np.float64),
        np.ascontiguousarray(w_lo[:n_sin], dtype=np.float64),
    )
    dtype = sin_out.dtype
    rotate = dtype == cos_out.dtype and rotates(dtype, n_sin, table_rows)
    b = block_rows(n_sin) if rotate else 1
    parts = _split_rows(first_position, rows, b, n_sin, threads)
    both64 = dtype == cos_out.dtype == np.float64
    compiled = exact_sincos(max(rows, table_rows or 0) * n_sin) if both64 and not rotate else None

    def work(a: int, z: int) -> None:
        s, c = sin_out[a:z], cos_out[a:z]
        if rotate:
            _fill_rotated(s, c, first_position + a, w_hi, w_lo, b)
        elif compiled is not None:  # the same values, computed in one compiled loop
            compiled(np.arange(first_position + a, first_position + z, dtype=np.float64), w_hi, w_lo, s, c)
        else:
            fill_exact(s, c, first_position + a, w_hi, w_lo)

    run_parts(work, parts)


def _split_rows(first: int, rows: int, b: int, n_freq: int, threads: int | None) -> list[tuple[int, int]]:
    """Row ranges for the threads: about equal, cut at block boundaries (no rotation computed twice)."""
    wanted = cpu_threads() if threads is None else max(1, threads)
    count = max(1, min(wanted, rows * n_freq // _THREAD_CELLS, -(-rows // b)))
    cuts = [0]
    for t in range(1, count):
        cut = (first + rows * t // count) // b * b - first
        if cut > cuts[-1]:
            cuts.append(cut)
    cuts.append(rows)
    return list(itertools.pairwise(cuts))


@lru_cache(maxsize=16)
def _z0_cached(b: int, w_hi: bytes, w_lo: bytes) -> np.ndarray:
    s, c = sincos(np.arange(b, dtype=np.float64), np.frombuffer(w_hi), np.frombuffer(w_lo))
    z0 = np.empty(s.shape, dtype=np.complex128)
    z0.real, z0.imag = s, c
    z0.flags.writeable = False
    return z0


def _z0(b: int, w_hi: np.ndarray, w_lo: np.ndarray) -> np.ndarray:
    """``sin + i·cos`` of positions ``0 … B−1`` (exact kernel, cached per ``B`` and frequencies)."""
    return _z0_cached(b, w_hi.tobytes(), w_lo.tobytes())


@lru_cache(maxsize=16)
def _steps_cached(b: int, w_hi: bytes, w_lo: bytes) -> np.ndarray:
    rot = _exact_rotations(np.arange(_GROUP, dtype=np.float64) * b, np.frombuffer(w_hi), np.frombuffer(w_lo))
    rot.flags.writeable = False
    return rot


def _exact_rotations(offsets: np.ndarray, w_hi: np.ndarray, w_lo: np.ndarray) -> np.ndarray:
    s, c = sincos(offsets, w_hi, w_lo)
    rot = np.empty(s.shape, dtype=np.complex128)
    rot.real = c
    np.negative(s, out=rot.imag)
    return rot


def _rotations(k0: int, k1: int, b: int, w_hi: np.ndarray, w_lo: np.ndarray) -> np.ndarray:
    """``cos β − i·sin β`` for the block offsets ``β = k·B·ω``, ``k0 ≤ k < k1``.

    Two levels, ``k = K·G + j``: the rotation by ``K·G·B`` (exact kernel, once per ``G`` blocks)
    times the one by ``j·B`` (exact kernel, cached): one complex multiply per block and frequency
    instead of a double-double evaluation, which would cost a third of the table's time.
    """
    first, last = k0 // _GROUP, (k1 - 1) // _GROUP
    coarse = _exact_rotations(np.arange(first, last + 1, dtype=np.float64) * (_GROUP * b), w_hi, w_lo)
    steps = _steps_cached(b, w_hi.tobytes(), w_lo.tobytes())
    k = np.arange(k0, k1)
    rot: np.ndarray = coarse[k // _GROUP - first] * steps[k % _GROUP]
    return rot


def _interleaved_view(sin_out: np.ndarray, cos_out: np.ndarray) -> np.ndarray | None:
    """The ``(rows, n_cos)`` complex64 view of sin/cos pairs, when ``cos_out`` sits right after
    ``sin_out`` in memory column by column (the interleaved float32 layout); else None."""
    if sin_out.dtype != np.float32 or cos_out.shape[1] == 0:
        return None
    item = sin_out.itemsize
    same_strides = sin_out.strides[1] == cos_out.strides[1] == 2 * item and sin_out.strides[0] == cos_out.strides[0]
    adjacent = cos_out.__array_interface__["data"][0] == sin_out.__array_interface__["data"][0] + item
    if not (same_strides and adjacent and sin_out.flags.writeable and cos_out.flags.writeable):
        return None
    # A float32 view over both: (rows, 2·n_cos) with unit column stride, which views as complex64.
    pairs = as_strided(sin_out, shape=(sin_out.shape[0], 2 * cos_out.shape[1]), strides=(sin_out.strides[0], item))
    view: np.ndarray = pairs.view(np.complex64)
    return view


def _fill_rotated(
    sin_out: np.ndarray, cos_out: np.ndarray, first: int, w_hi: np.ndarray, w_lo: np.ndarray, b: int
) -> None:
    """The rotation kernel for one thread's rows (see the module docstring)."""
    rows, n_sin = sin_out.shape
    n_cos = cos_out.shape[1]
    z0 = _z0(b, w_hi, w_lo)
    pairs = _interleaved_view(sin_out, cos_out)
    check_tiny = sin_out.dtype == np.float32
    k_first, k_last = first // b, (first + rows - 1) // b
    group = max(1, _CHUNK_CELLS // n_sin)  # blocks per batch of exact rotations
    sub = max(1, min(b, _CHUNK_CELLS // n_sin))  # rows per generic-path scratch chunk
    scratch = np.empty((sub, n_sin), dtype=np.complex128) if pairs is None or n_sin > n_cos else None
    for g0 in range(k_first, k_last + 1, group):
        g1 = min(g0 + group, k_last + 1)
        rot = _rotations(g0, g1, b, w_hi, w_lo)
        k = g0
        while k < g1:
            # Rows of block k inside [first, first + rows): table rows a..z, Z0 rows ra..ra+(z-a).
            a = max(k * b, first) - first
            z = min((k + 1) * b, first + rows) - first
            ra = first + a - k * b
            r = rot[k - g0]
            run = _full_blocks(k, g1, b, first, rows, n_cos) if pairs is not None and n_sin == n_cos else 1
            if run > 1:  # blocks k … k+run−1 whole: one multiply, Z0 against each block's rotation
                assert pairs is not None
                z = a + run * b
                out = as_strided(pairs[a:z], shape=(run, b, n_cos), strides=(b * pairs.strides[0], *pairs.strides))
                np.multiply(z0[:, :n_cos], rot[k - g0 : k - g0 + run, None, :n_cos], out=out, casting="same_kind")
                if check_tiny:  # block 0 is Z0 itself, exact
                    skip = b if k == 0 else 0
                    _fix_tiny(pairs[a + skip : z].view(np.float32), first + a + skip, w_hi, w_lo, interleaved=True)
                k += run
                continue
            later = k > 0  # block 0 is Z0 itself, exact
            k += 1
            if pairs is not None:
                np.multiply(z0[ra : ra + z - a, :n_cos], r[:n_cos], out=pairs[a:z], casting="same_kind")
                if n_sin > n_cos:  # odd width: the last sin column has no cos partner
                    assert scratch is not None
                    for c0 in range(a, z, sub):
                        c1 = min(c0 + sub, z)
                        tmp = scratch[: c1 - c0, n_cos:]
                        np.multiply(z0[ra + c0 - a : ra + c1 - a, n_cos:], r[n_cos:], out=tmp)
                        sin_out[c0:c1, n_cos:] = tmp.real
                if check_tiny and later:
                    _fix_tiny(pairs[a:z].view(np.float32), first + a, w_hi, w_lo, interleaved=True)
                    if n_sin > n_cos:
                        _fix_tiny(sin_out[a:z, n_cos:], first + a, w_hi[n_cos:], w_lo[n_cos:])
                continue
            assert scratch is not None
            for c0 in range(a, z, sub):
                c1 = min(c0 + sub, z)
                tmp = scratch[: c1 - c0]
                np.multiply(z0[ra + c0 - a : ra + c1 - a], r, out=tmp)
                # Assignment casts float64 → dtype: the one rounding (round-half-even).
                sin_out[c0:c1] = tmp.real
                cos_out[c0:c1] = tmp.imag[:, :n_cos]
            if check_tiny and later:
                _fix_tiny(sin_out[a:z], first + a, w_hi, w_lo)
                _fix_tiny(cos_out[a:z], first + a, w_hi, w_lo, cos=True)


def _full_blocks(k: int, end: int, b: int, first: int, rows: int, n_freq: int) -> int:
    """How many blocks from ``k`` (before ``end``) lie wholly inside rows ``[first, first + rows)``,
    at most :data:`_BATCH_PAIRS` pairs' worth."""
    if k * b < first:
        return 0
    return max(0, min(end - k, (first + rows) // b - k, max(1, _BATCH_PAIRS // (b * n_freq))))


def _fix_tiny(
    block: np.ndarray, first: int, w_hi: np.ndarray, w_lo: np.ndarray, *, cos: bool = False, interleaved: bool = False
) -> None:
    """Recompute exactly the values of ``block`` below ``TINY``, where the rotation's absolute
    error could exceed half a float32 ulp.  ``interleaved``: columns alternate sin, cos."""
    if block.size == 0 or np.abs(block).min() >= TINY:
        return
    rows, cols = np.nonzero(np.abs(block) < TINY)
    freq = cols // 2 if interleaved else cols
    for r in dict.fromkeys(rows.tolist()):
        sel = rows == r
        s, c = sincos(np.array([first + r], dtype=np.float64), w_hi[freq[sel]], w_lo[freq[sel]])
        use_cos = (cols[sel] % 2 == 1) if interleaved else np.full(sel.sum(), cos)
        block[r, cols[sel]] = np.where(use_cos, c[0], s[0])
