"""Table builders: any row range ``[r0, r1)`` of a recipe, computed directly.

Every element is computed independently of the others, so any row range is bit-identical to
the same rows of the whole table, whatever the pipeline (exact or a framework's emulation).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pecli.errors import RecipeError
from pecli.fastpath import fill_sincos
from pecli.numerics import frequencies, sincos
from pecli.recipe import Recipe, Sincos2d, Sinusoidal

#: float64 scratch cells per kernel call; bounds the kernel's temporary memory (~10 arrays).
_BLOCK_CELLS = 1 << 18

f32 = np.float32


def check_row_range(length: int, r0: int, r1: int) -> None:
    if not 0 <= r0 <= r1 <= length:
        raise RecipeError(f"row range [{r0}, {r1}) is outside the table's rows 0..{length}")


def build_rows(recipe: Recipe, r0: int, r1: int) -> np.ndarray:
    """Rows ``[r0, r1)`` of any recipe."""
    check_row_range(recipe.shape[0], r0, r1)
    if isinstance(recipe, Sincos2d):
        return _grid_rows(recipe, r0, r1)
    if not isinstance(recipe, Sinusoidal):  # rope, alibi, learned: pecli.kinds_extra builds them
        return recipe.rows(r0, r1)
    return build_sinusoidal_rows(recipe, r0, r1)


# ------------------------------------------------------------------------------ 1-D sinusoids
def sinusoidal_exponents(recipe: Sinusoidal) -> tuple[tuple[int, int], ...]:
    return tuple(recipe.exponent(i) for i in range(recipe.sin_columns))


def sinusoidal_omega(recipe: Sinusoidal) -> np.ndarray:
    """``ω_i`` of every frequency, as float64 (correctly rounded)."""
    return frequencies(recipe.base, recipe.min_timescale, sinusoidal_exponents(recipe))[0]


def build_sinusoidal_rows(recipe: Sinusoidal, r0: int, r1: int) -> np.ndarray:
    """Rows ``[r0, r1)`` of a sinusoidal recipe.

    ``compute="exact"``: each value rounded once from the exact value.  Otherwise the
    framework's float64 or float32 pipeline, step by step (see ``_emulated``).
    """
    check_row_range(recipe.shape[0], r0, r1)
    d = recipe.dim
    n_sin, n_cos = recipe.sin_columns, recipe.cos_columns
    out = np.empty((r1 - r0, d), dtype=recipe.dtype)
    if recipe.layout == "interleaved":
        sin_cols, cos_cols = out[:, 0 : 2 * n_sin : 2], out[:, 1 : 2 * n_cos : 2]
    elif recipe.layout == "split":
        sin_cols, cos_cols = out[:, :n_sin], out[:, n_sin : n_sin + n_cos]
    else:  # cos-first
        cos_cols, sin_cols = out[:, :n_cos], out[:, n_cos : n_cos + n_sin]
    out[:, n_sin + n_cos :] = 0  # odd=zero: the trailing zero column
    first = recipe.start + r0
    if recipe.compute == "exact":
        _, w_hi, w_lo = frequencies(recipe.base, recipe.min_timescale, sinusoidal_exponents(recipe))
        fill_sincos(sin_cols, cos_cols, first, w_hi, w_lo)
    else:
        step = max(1, _BLOCK_CELLS // n_sin)
        for a in range(0, r1 - r0, step):
            b = min(a + step, r1 - r0)
            s, c = _emulated(recipe, np.arange(first + a, first + b))
            sin_cols[a:b] = s
            cos_cols[a:b] = c[:, :n_cos]
    if recipe.padding_idx is not None and r0 <= recipe.padding_idx < r1:
        out[recipe.padding_idx - r0] = 0
    return out


def fill_exact(sin_out: np.ndarray, cos_out: np.ndarray, first: int, w_hi: np.ndarray, w_lo: np.ndarray) -> None:
    """Row ``r`` of ``sin_out``/``cos_out`` ← sin/cos of position ``first + r`` (cos: the first
    ``cos_out.shape[1]`` frequencies), rounded once from the exact value."""
    rows, n_sin = sin_out.shape
    n_cos = cos_out.shape[1]
    step = max(1, _BLOCK_CELLS // max(1, n_sin))
    for a in range(0, rows, step):
        b = min(a + step, rows)
        positions = np.arange(first + a, first + b, dtype=np.float64)
        s, c = sincos(positions, w_hi, w_lo)
        # Assignment casts float64 → dtype: the one rounding (round-half-even, also for float16).
        sin_out[a:b] = s
        cos_out[a:b] = c[:, :n_cos]


def _sin_cos_rounded(angle: np.ndarray, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """sin/cos of angles already in ``dtype``; float32 ones are evaluated in float64 and rounded
    once (a correctly rounded float32 sin, the closest NumPy gets to torch's)."""
    if dtype == f32:
        wide = angle.astype(np.float64)
        return np.sin(wide).astype(f32), np.cos(wide).astype(f32)
    return np.sin(angle), np.cos(angle)


def _emulated(recipe: Sinusoidal, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sin and cos (positions × frequencies) the way a framework's own pipeline computes them.

    float32: every step in float32 in the framework's order; Python scalars rounded to float32
    before use (as torch does); exp/pow/sin/cos evaluated in float64 and rounded to float32.
    float64: the same formula in float64 NumPy (bit-exact with frameworks that do just that).
    """
    dt: Any = f32 if recipe.compute == "float32" else np.float64
    exps = sinusoidal_exponents(recipe)
    num: Any = np.array([n for n, _ in exps], dtype=dt)
    den = exps[0][1]  # one denominator per rule
    p: Any = positions.astype(dt)[:, None]
    if recipe.form == "div":  # XLM/Marian: angle = p / base^(2(j//2)/d)
        e = np.array([n / den for n, _ in exps]) if dt is np.float64 else num / dt(den)
        angle = p / _rounded(np.power, dt, dt(recipe.base), e)
        return _sin_cos_rounded(angle, dt)
    if recipe.form == "exp":  # fairseq / t2t / Whisper / PyTorch tutorial: exp(k · (−ln(base)/den))
        inv = _rounded(np.exp, dt, num * dt(-math.log(recipe.base / recipe.min_timescale) / den))
    else:  # pow: 1 / base^(k/den) (positional-encodings, timm, HF RoPE, GPT-J)
        inv = dt(1) / _rounded(np.power, dt, dt(recipe.base), num / dt(den))
    if recipe.min_timescale != 1:
        inv = dt(recipe.min_timescale) * inv
    return _sin_cos_rounded(p * inv[None, :], dt)


def _rounded(fn: Any, dt: Any, *args: Any) -> np.ndarray:
    """``fn`` evaluated in float64 and rounded to ``dt`` once."""
    return np.asarray(fn(*(np.asarray(a, dtype=np.float64) for a in args))).astype(dt)


# ------------------------------------------------------------------------------ 2-D grids
def grid_omega(recipe: Sincos2d) -> np.ndarray:
    q = recipe.per_axis
    return frequencies(recipe.base, 1.0, tuple((k, q) for k in range(q)))[0]


def _axis_table(recipe: Sincos2d, size: int) -> tuple[np.ndarray, np.ndarray]:
    """sin and cos of ``c·ω_k`` for coordinates ``c < size``, in the output dtype."""
    q = recipe.per_axis
    coords: Any = np.arange(size)
    if recipe.compute == "exact":
        _, w_hi, w_lo = frequencies(recipe.base, 1.0, tuple((k, q) for k in range(q)))
        s, c = sincos(coords.astype(np.float64), w_hi, w_lo)
        return s.astype(recipe.dtype), c.astype(recipe.dtype)
    dt: Any = f32 if recipe.compute == "float32" else np.float64
    # timm/MAE/HF: omega = 1 / T^(k/q), angle = c·omega.
    e: Any = np.arange(q, dtype=dt) / dt(q)
    omega: Any = dt(1) / _rounded(np.power, dt, dt(recipe.base), e)
    s, c = _sin_cos_rounded(coords.astype(dt)[:, None] * omega[None, :], dt)
    return s.astype(recipe.dtype), c.astype(recipe.dtype)


def _grid_rows(recipe: Sincos2d, r0: int, r1: int) -> np.ndarray:
    axes = recipe.axes
    out = np.zeros((r1 - r0, recipe.dim), dtype=recipe.dtype)
    cells = np.arange(r0, r1) - int(recipe.cls)
    keep = cells >= 0  # the cls row stays zero
    cells = cells[keep]
    if recipe.order == "tatp":
        coords = np.unravel_index(cells, axes)
        blocks = []
        for size, c in zip(axes, coords, strict=True):
            s, co = _axis_table(recipe, size)
            block = np.empty((len(c), 2 * recipe.per_axis), dtype=recipe.dtype)
            block[:, 0::2], block[:, 1::2] = s[c], co[c]
            blocks.append(block)
        out[keep] = np.concatenate(blocks, axis=1)[:, : recipe.dim]
        return out
    height, width = axes
    w_major = recipe.order.startswith("timm-reverse")
    if w_major:
        w, h = np.divmod(cells, height)
    else:
        h, w = np.divmod(cells, width)
    s_h, c_h = (t[h] for t in _axis_table(recipe, height))
    s_w, c_w = (t[w] for t in _axis_table(recipe, width))
    parts = {
        "mae": (s_w, c_w, s_h, c_h),
        "timm": (s_h, s_w, c_h, c_w),
        "timm-interleave": (s_h, c_h, s_w, c_w),
        "timm-reverse": (s_w, s_h, c_w, c_h),
        "timm-reverse-interleave": (s_w, c_w, s_h, c_h),
    }[recipe.order]
    out[keep] = np.concatenate(parts, axis=1)
    return out
