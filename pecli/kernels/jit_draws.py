"""The accept path of :mod:`pecli.kernels.draws` compiled by numba (the optional ``fast`` extra).

:func:`normal_rows` is :func:`pecli.kernels.draws.splitmix` and the ziggurat's proposal for every
cell of a run of rows, the same integer operations and the same float64 multiply (no fast-math,
so no FMA), written ``scale·x`` rounded once to the output.  A truncated normal's redraws whose
proposals are accepted outright are drawn here too, with the next attempts' keys; the cells that
need the wedge or tail test (~0.7%) are listed for NumPy to finish, which replays them from the
first attempt (the same decisions, so the same values).  The words of a row are computed first,
in a loop the compiler vectorizes: ~1.6 ns a cell on one core, 20 times NumPy's speed.
``nogil``: row blocks run on every core.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types

from pecli.kernels.splitmix import COLUMN_BITS, GAMMA, MIX1, MIX2

_U = np.uint64
_READ_U64 = types.Array(types.uint64, 1, "C", readonly=True)
_SIGNATURES = [
    types.int64(
        _READ_U64,
        types.int64,
        types.int64,
        _READ_U64,
        types.Array(types.float64, 1, "C", readonly=True),
        types.float64,
        types.float64,
        out,
        types.int64[::1],
    )
    for out in (types.float32[::1], types.float64[::1])
]


@njit(inline="always")
def _word(cell: np.uint64, key: np.uint64) -> np.uint64:
    """SplitMix64's word of ``cell`` under ``key``."""
    z = (cell + _U(1)) * _U(GAMMA) + key
    z = (z ^ (z >> _U(30))) * _U(MIX1)
    z = (z ^ (z >> _U(27))) * _U(MIX2)
    return z ^ (z >> _U(31))


@njit(inline="always")
def _propose(z: np.uint64, k: np.ndarray, w: np.ndarray) -> tuple[float, bool]:
    """The ziggurat's proposal ``x`` from word ``z``, and whether it is accepted outright."""
    layer = np.intp(z & _U(0xFF))
    a = z >> _U(12)
    x = np.float64(a) * w[layer]
    if (z >> _U(8)) & _U(1):
        x = -x
    return x, a < k[layer]


@njit(_SIGNATURES, cache=True, nogil=True, boundscheck=False)
def normal_rows(
    keys: np.ndarray,
    first_row: int,
    dim: int,
    k: np.ndarray,
    w: np.ndarray,
    bound: float,
    scale: float,
    out: np.ndarray,
    rejected: np.ndarray,
) -> int:
    """``out[i·dim + j] ← scale·x`` for cell ``(first_row + i)·2³² + j``, its proposal under
    ``keys[0]`` (redrawn under ``keys[1]``, … while ``|x| > bound``); the flat indices of the
    cells a proposal cannot settle go to ``rejected``; returns their count."""
    count = 0
    words = np.empty(dim, dtype=np.uint64)
    for i in range(out.size // dim):
        base = _U(first_row + i) << _U(COLUMN_BITS)
        for j in range(dim):  # vectorized
            words[j] = _word(base + _U(j), keys[0])
        row = i * dim
        for j in range(dim):
            x, inside = _propose(words[j], k, w)
            attempt = 1
            while inside and abs(x) > bound and attempt < keys.size:
                x, inside = _propose(_word(base + _U(j), keys[attempt]), k, w)
                attempt += 1
            out[row + j] = x * scale
            if not inside or abs(x) > bound:
                rejected[count] = row + j
                count += 1
    return count


__all__ = ["normal_rows"]
