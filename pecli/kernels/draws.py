"""Counter-based normal draws: cell ``c`` of a seeded table is a function of (seed, c) alone.

Any block of cells is computed directly, in any order and on any number of threads, with the same
values; a learned table's row ``r``, column ``j`` is cell ``r·2³² + j``, so it does not depend on
the table's length or width either.

- **Bits**: SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
  OOPSLA 2014; Vigna's ``splitmix64.c``): the 64-bit word of cell ``c`` under key ``K`` is the
  ``c``-th output of the generator whose state starts at ``K``, ``mix(K + (c + 1)·γ)``.  Keys are
  drawn from NumPy's ``SeedSequence(seed, spawn_key=(attempt, use))``, so neighbouring seeds give
  unrelated tables.
- **Normal values**: Marsaglia and Tsang's ziggurat ("The Ziggurat Method for Generating Random
  Variables", Journal of Statistical Software 5(8), 2000) with 256 layers and NumPy's constants
  (``r = 3.6541528853610088``, ``v = 0.00492867323399``): 8 bits of the word pick a layer, one the
  sign, 52 the abscissa; ~99.3% of cells are accepted on that alone (integer compare and one
  float64 multiply).  The tables are computed once in 40-digit decimal arithmetic (correctly
  rounded ``exp``/``ln``/``sqrt``) and rounded once to float64, the same on every platform.
- The rest, and ``bound`` (a truncated normal's redraws), are finished by :func:`normal_at`: the
  wedge test and Marsaglia's tail method with uniforms from their own keys, and a cell that is
  rejected draws again with the next attempt's keys.  These rare decisions use NumPy's ``exp`` and
  ``log1p``.

:func:`fill_normal` writes ``scale·z`` rounded once to the output dtype for a run of rows; with the
``fast`` extra the accept path runs compiled (:mod:`pecli.kernels.jit_draws`, the same integer
operations and float64 multiply, so the same bits) and NumPy finishes the rejected cells.
"""

from __future__ import annotations

import functools
import math
import threading
from decimal import Decimal, localcontext

import numpy as np

from pecli.kernels.compiled import compiled_module
from pecli.kernels.splitmix import COLUMN_BITS, GAMMA, MIX1, MIX2
from pecli.kernels.threads import run_blocks

#: The ziggurat's base-strip edge and the area of each of its 256 strips (NumPy's constants).
ZIGGURAT_R, ZIGGURAT_V = "3.6541528853610088", "0.00492867323399"
#: Cells per NumPy pass (cache-sized temporaries).
_PASS = 1 << 14
#: Rejected cells per NumPy pass that finishes them (on every core).
_FINISH = 1 << 16
#: Cells per compiled pass (its list of rejected cells is reused).
_COMPILED_PASS = 1 << 16
#: A truncated normal's attempts the compiled loop makes before it leaves a cell to NumPy.
_COMPILED_ATTEMPTS = 8
_U = np.uint64


@functools.cache
def ziggurat() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(k, w, f)``, the 256-layer tables: layer ``i`` accepts a 52-bit abscissa ``a`` when
    ``a < k[i]``, its value is ``a·w[i]``, and ``f[i]`` is the density ``exp(−x_i²/2)`` at its edge."""
    k, w, f = [0] * 256, [0.0] * 256, [0.0] * 256
    with localcontext() as ctx:
        ctx.prec = 40
        two52 = Decimal(2) ** 52
        dn = tn = Decimal(ZIGGURAT_R)
        vn = Decimal(ZIGGURAT_V)
        q = vn / (-dn * dn / 2).exp()
        k[0], k[1] = int(dn / q * two52), 0
        w[0], w[255] = float(q / two52), float(dn / two52)
        f[0], f[255] = 1.0, float((-dn * dn / 2).exp())
        for i in range(254, 0, -1):
            dn = (-2 * (vn / dn + (-dn * dn / 2).exp()).ln()).sqrt()
            k[i + 1] = int(dn / tn * two52)
            tn = dn
            f[i] = float((-dn * dn / 2).exp())
            w[i] = float(dn / two52)
    tables = np.array(k, dtype=_U), np.array(w), np.array(f)
    for table in tables:
        table.flags.writeable = False  # cached: shared by every caller
    return tables


@functools.cache
def key(seed: int, attempt: int, use: int) -> int:
    """The 64-bit SplitMix64 key of ``seed``'s draws for ``attempt`` and ``use`` (0: the ziggurat's
    word, 1 and 2: uniforms of the wedge and tail tests; the tail's ``t``-th retry uses ``1 + 2t``
    and ``2 + 2t``)."""
    return int(np.random.SeedSequence(seed, spawn_key=(attempt, use)).generate_state(1, np.uint64)[0])


def splitmix(k: int, cells: np.ndarray) -> np.ndarray:
    """SplitMix64's word of each cell (``cells``: uint64) under key ``k``."""
    with np.errstate(over="ignore"):
        z = (cells + _U(1)) * _U(GAMMA)
        z += _U(k)
        z ^= z >> _U(30)
        z *= _U(MIX1)
        z ^= z >> _U(27)
        z *= _U(MIX2)
        z ^= z >> _U(31)
    return z


def _uniform(k: int, cells: np.ndarray) -> np.ndarray:
    """A uniform in [0, 1) for each cell: the word's top 53 bits."""
    return (splitmix(k, cells) >> _U(11)).astype(np.float64) * 2.0**-53


def _propose(word: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ziggurat's proposal from each word: ``(x, layer, inside)`` (``inside``: accepted
    without the wedge or tail test)."""
    k, w, _ = ziggurat()
    layer = (word & _U(0xFF)).astype(np.intp)
    a = word >> _U(12)
    x = a.astype(np.float64)
    x *= w.take(layer)
    sign = word << _U(55)  # bit 8 to the sign bit
    sign &= _U(1 << 63)
    x.view(_U)[...] |= sign
    return x, layer, a < k.take(layer)


def normal_at(seed: int, cells: np.ndarray, bound: float = math.inf) -> np.ndarray:
    """The standard normal draw of each cell (``cells``: uint64), redrawn while ``|z| > bound``."""
    flat = cells.reshape(-1)
    z, done = _attempt(seed, 0, flat, bound)
    todo = np.flatnonzero(~done)
    attempt = 1
    while todo.size:
        x, done = _attempt(seed, attempt, flat[todo], bound)
        z[todo[done]] = x[done]
        todo = todo[~done]
        attempt += 1
    return z.reshape(cells.shape)


def _attempt(seed: int, attempt: int, cells: np.ndarray, bound: float) -> tuple[np.ndarray, np.ndarray]:
    """One ziggurat attempt for each cell: ``(x, accepted)``."""
    _, _, f = ziggurat()
    x, layer, done = _propose(splitmix(key(seed, attempt, 0), cells))
    if done.all() and bound == math.inf:
        return x, done
    wedge = np.flatnonzero(~done & (layer > 0))
    if wedge.size:
        i, xi = layer[wedge], x[wedge]
        u = _uniform(key(seed, attempt, 1), cells[wedge])
        done[wedge] = (f[i - 1] - f[i]) * u + f[i] < np.exp(-0.5 * xi * xi)
    tail = np.flatnonzero(~done & (layer == 0))
    if tail.size:
        x[tail] = np.copysign(_tail(seed, attempt, cells[tail]), x[tail])
        done[tail] = True
    if bound < math.inf:
        done &= np.abs(x) <= bound
    return x, done


def _tail(seed: int, attempt: int, cells: np.ndarray) -> np.ndarray:
    """``|z|`` beyond the base strip's edge ``r`` (Marsaglia's tail method, as NumPy's ziggurat)."""
    r = float(ZIGGURAT_R)
    out = np.empty(cells.size)
    todo = np.arange(cells.size)
    t = 0
    while todo.size:
        xx = -np.log1p(-_uniform(key(seed, attempt, 1 + 2 * t), cells[todo])) / r
        yy = -np.log1p(-_uniform(key(seed, attempt, 2 + 2 * t), cells[todo]))
        ok = yy + yy > xx * xx
        out[todo[ok]] = r + xx[ok]
        todo = todo[~ok]
        t += 1
    return out


def fill_normal(
    out: np.ndarray, seed: int, first_row: int, scale: float, bound: float = math.inf, *, table_cells: int = 0
) -> None:
    """``out[i, j] ← scale·z`` of cell ``(first_row + i)·2³² + j``, scaled in float64 and rounded
    once to ``out``'s dtype (``out``: C-contiguous rows), in row blocks on every core.
    ``table_cells``: the whole table's cells when it is asked for block by block: whether loading
    the compiled loop pays is decided on it."""
    rows, dim = out.shape
    if out.size == 0:
        return
    jit = compiled_module("jit_draws", max(out.size, table_cells))
    direct = out.dtype in (np.float32, np.float64)
    k, w, _ = ziggurat()
    keys = np.array([key(seed, a, 0) for a in range(1 if bound == math.inf else _COMPILED_ATTEMPTS)], dtype=_U)
    keys.flags.writeable = False
    columns = np.arange(dim, dtype=_U)
    found: list[np.ndarray] = []
    lists = threading.local()  # each thread's list of rejected cells, reused from block to block

    def block(a: int, b: int) -> None:
        target = out[a:b] if direct else np.empty((b - a, dim))  # float16: rounded once below
        if jit is None:
            row_ids = np.arange(first_row + a, first_row + b, dtype=_U) << _U(COLUMN_BITS)
            target[...] = normal_at(seed, row_ids[:, None] + columns, bound) * scale
        else:
            rejected = getattr(lists, "cells", None)
            if rejected is None or rejected.size < target.size:
                rejected = lists.cells = np.empty(target.size, dtype=np.int64)
            count = jit.normal_rows(keys, first_row + a, dim, k, w, bound, scale, target.reshape(-1), rejected)
            found.append(rejected[:count] + a * dim)  # (list.append is atomic)
        if not direct:
            out[a:b] = target

    step = max(1, (_PASS if jit is None else _COMPILED_PASS) // dim)
    blocks = [(a, min(rows, a + step)) for a in range(0, rows, step)]
    if jit is None:  # NumPy's passes are too short to share the GIL well: one core
        for a, b in blocks:
            block(a, b)
    else:
        run_blocks(block, blocks)
    if not found or not (idx := np.concatenate(found)).size:
        return

    def finish(a: int, b: int) -> None:  # the wedge and tail tests and redraws, as without numba
        part = idx[a:b]
        cells = (((part // dim) + first_row).astype(_U) << _U(COLUMN_BITS)) + columns[part % dim]
        out.reshape(-1)[part] = normal_at(seed, cells, bound) * scale

    run_blocks(finish, [(a, min(idx.size, a + _FINISH)) for a in range(0, idx.size, _FINISH)])


__all__ = ["ZIGGURAT_R", "ZIGGURAT_V", "fill_normal", "key", "normal_at", "splitmix", "ziggurat"]
