"""Resampling a learned 2-D position table to another grid, the way timm does it.

Fine-tuning a ViT at another resolution starts by resizing its ``pos_embed``: timm's
``resample_abs_pos_embed`` (``timm/layers/pos_embed.py``, also what its checkpoint loader calls)
keeps the prefix tokens (class, register tokens), reshapes the rest to its ``(H, W)`` grid and
calls ``torch.nn.functional.interpolate(size=(h, w), mode=bicubic|bilinear, align_corners=False,
antialias=True)``.  The two modes and the antialias switch are different filters in PyTorch
(``aten/src/ATen/native/UpSample.h`` and ``cpu/UpSampleKernel.cpp``):

- ``antialias=False``: bicubic convolution with ``A = −0.75`` (bilinear: the triangle) at
  ``src = scale·(dst + ½) − ½``, ``scale = in/out``, neighbours clamped to the edge;
- ``antialias=True`` (timm's default): the filter is sampled at ``(j − center + ½)/max(scale, 1)``
  around ``center = scale·(dst + ½)`` over ``support = 2·max(scale, 1)`` (bicubic, ``a = −0.5``)
  or ``1·max(scale, 1)`` (bilinear), and the weights are normalised to sum to 1.  Upsampling with
  it is therefore *not* the same as without it (``a`` differs).

Both are separable, so the resampled grid is ``Wy · grid · Wxᵀ`` with one weight matrix per axis,
computed here in float64 (torch computes in float32: the two agree to about 1e-7 relative).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

from pecli.errors import PecliInputError

if TYPE_CHECKING:
    import numpy as np

    from pecli.table import Table

Interpolation = Literal["bicubic", "bilinear"]
#: Largest side of a grid resampled to (a ViT at 4096 px with 14 px patches is 293).
MAX_SIDE = 1 << 14


def weights(n_in: int, n_out: int, mode: Interpolation, antialias: bool) -> np.ndarray:
    """The ``(n_out, n_in)`` matrix of ``F.interpolate``'s 1-D weights along one axis."""
    import numpy as np

    w = np.zeros((n_out, n_in))
    scale = n_in / n_out
    if antialias:
        size = 4 if mode == "bicubic" else 2
        support = size / 2 * scale if scale >= 1 else size / 2
        invscale = 1 / scale if scale >= 1 else 1.0
        for i in range(n_out):
            center = scale * (i + 0.5)
            lo = max(int(center - support + 0.5), 0)
            hi = min(int(center + support + 0.5), n_in)
            x = (np.arange(lo, hi) - center + 0.5) * invscale
            row = _cubic_aa(x) if mode == "bicubic" else np.maximum(0.0, 1 - np.abs(x))
            total = row.sum()
            w[i, lo:hi] = row / total if total != 0 else row
        return w
    f32 = np.float32  # torch computes the scale and source index in float32 (its opmath type)
    for i in range(n_out):
        src = float(f32(f32(f32(n_in) / f32(n_out)) * f32(f32(i) + f32(0.5))) - f32(0.5))
        if mode == "bilinear":
            src = max(src, 0.0)
            i0 = int(src)
            t = float(f32(src) - f32(i0))
            i1 = i0 + (1 if i0 < n_in - 1 else 0)
            w[i, i0] += 1 - t
            w[i, i1] += t
        else:
            i0 = math.floor(src)
            t = float(f32(src) - f32(i0))
            coeffs = (_cc2(t + 1), _cc1(t), _cc1(1 - t), _cc2(2 - t))
            for k, c in enumerate(coeffs):
                w[i, min(max(i0 - 1 + k, 0), n_in - 1)] += c
    return w


_A = -0.75  # PyTorch's (and OpenCV's) bicubic without antialias


def _cc1(x: float) -> float:
    return ((_A + 2) * x - (_A + 3)) * x * x + 1


def _cc2(x: float) -> float:
    return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A


def _cubic_aa(x: np.ndarray) -> np.ndarray:
    """PyTorch's antialiasing bicubic filter (``a = −0.5``, as PIL's)."""
    import numpy as np

    a, x = -0.5, np.abs(x)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = (((x - 5) * x + 8) * x - 4) * a
    return np.where(x < 1, near, np.where(x < 2, far, 0.0))


def parse_grid(text: str, option: str) -> tuple[int, int]:
    """``HxW`` (or ``N`` for N×N) as two sides ≥ 1."""
    parts = text.lower().replace("×", "x").split("x")
    try:
        sides = [int(p) for p in parts]
    except ValueError:
        sides = []
    if len(sides) == 1:
        sides *= 2
    if len(sides) != 2 or not all(1 <= s <= MAX_SIDE for s in sides):
        raise PecliInputError(f"{option} {text!r}: give the grid as HxW with sides 1..{MAX_SIDE}, e.g. {option} 16x16")
    return sides[0], sides[1]


def resample_table(
    table: Table,
    new: tuple[int, int],
    old: tuple[int, int] | None = None,
    prefix: int | None = None,
    mode: Interpolation = "bicubic",
    antialias: bool = True,
) -> Table:
    """``table`` (prefix rows, then an ``old`` grid of rows, row-major) resampled to the ``new`` grid
    as timm's ``resample_abs_pos_embed`` does; the prefix rows are kept.  ``old`` defaults to the
    square the rows make, ``prefix`` to 0 or 1, whichever leaves a square (as timm assumes)."""
    import numpy as np

    from pecli.resources import ensure_fits_in_memory
    from pecli.table import Table as T

    n, d = table.shape
    prefix, old = _layout(n, prefix, old)
    h, w = new
    ensure_fits_in_memory(8 * d * (3 * n + 2 * (prefix + h * w)), f"resampling {table.source} to {h}x{w}")
    values = np.asarray(table.rows(0, n), dtype=np.float64)
    grid = values[prefix:].reshape(old[0], old[1], d)
    if tuple(old) == tuple(new):
        out = grid
    else:
        out = np.einsum("ih,hwc->iwc", weights(old[0], h, mode, antialias), grid)
        out = np.einsum("jw,iwc->ijc", weights(old[1], w, mode, antialias), out)
    rows = np.concatenate([values[:prefix], out.reshape(h * w, d)]).astype(table.dtype)
    how = f"{mode}{'' if antialias else ', no antialias'}"
    info = {
        **table.info,
        "resampled": f"{old[0]}x{old[1]} grid → {h}x{w} ({how}, {prefix} prefix rows kept), "
        "as timm's resample_abs_pos_embed",
    }
    provenance = {**table.provenance, "resampled_from": f"{old[0]}x{old[1]}", "resampled_with": how}
    recipe = table.recipe
    source = f"{recipe.kind} {recipe.describe(short=True)}" if table.computed and recipe is not None else table.source
    return T(rows, None, source, info, provenance, table.storage)


def _layout(n: int, prefix: int | None, old: tuple[int, int] | None) -> tuple[int, tuple[int, int]]:
    if old is not None:
        k = n - old[0] * old[1] if prefix is None else prefix
        if prefix is None and k > 1:
            raise PecliInputError(
                f"--resample-from {old[0]}x{old[1]} leaves {k} of the table's {n} rows before the grid: "
                f"give --prefix-tokens {k} if they are class and register tokens, else fix --resample-from"
            )
        if k < 0 or k + old[0] * old[1] != n:
            raise PecliInputError(
                f"--resample-from {old[0]}x{old[1]} with {k} prefix rows makes {k + old[0] * old[1]} rows, "
                f"but the table has {n}: fix --resample-from or --prefix-tokens"
            )
        return k, old
    for k in (prefix,) if prefix is not None else (0, 1):
        if k is None or k > n:
            continue
        side = math.isqrt(n - k)
        if side * side == n - k and side > 0:
            return k, (side, side)
    what = f"{prefix} prefix rows" if prefix is not None else "0 or 1 prefix rows"
    raise PecliInputError(
        f"the table's {n} rows are not {what} and a square grid: give its grid with --resample-from HxW "
        "(and --prefix-tokens K for class and register tokens)"
    )


__all__ = ["MAX_SIDE", "Interpolation", "parse_grid", "resample_table", "weights"]
