"""Table builders: any row range ``[r0, r1)`` of a recipe, computed directly."""

from __future__ import annotations

import numpy as np

from pecli.errors import RecipeError
from pecli.numerics import frequency_turns, sincos
from pecli.recipe import Sinusoidal

#: float64 scratch cells per kernel call; bounds the kernel's temporary memory (~10 arrays).
_BLOCK_CELLS = 1 << 18


def check_row_range(length: int, r0: int, r1: int) -> None:
    if not 0 <= r0 <= r1 <= length:
        raise RecipeError(f"row range [{r0}, {r1}) is outside the table's rows 0..{length}")


def build_sinusoidal_rows(recipe: Sinusoidal, r0: int, r1: int) -> np.ndarray:
    """Rows ``[r0, r1)`` of a sinusoidal recipe, each value rounded once from float64.

    Every element is computed independently of the others, so any row range is bit-identical
    to the same rows of the whole table.
    """
    check_row_range(recipe.length, r0, r1)
    d = recipe.dim
    n_sin = recipe.sin_columns
    n_cos = d // 2
    _, w_hi, w_lo = frequency_turns(recipe.base, d, n_sin)
    out = np.empty((r1 - r0, d), dtype=recipe.dtype)
    if recipe.layout == "interleaved":
        sin_cols, cos_cols = out[:, 0::2], out[:, 1::2]
    else:
        sin_cols, cos_cols = out[:, :n_sin], out[:, n_sin:]
    step = max(1, _BLOCK_CELLS // n_sin)
    for a in range(r0, r1, step):
        b = min(a + step, r1)
        positions = np.arange(recipe.start + a, recipe.start + b, dtype=np.float64)
        s, c = sincos(positions, w_hi, w_lo)
        # Assignment casts float64 → dtype: the one rounding (round-half-even, also for float16).
        sin_cols[a - r0 : b - r0] = s
        cos_cols[a - r0 : b - r0] = c[:, :n_cos]
    return out
