"""The rope2d kind: 2-D rotary embeddings of vision transformers, as timm builds them.

timm 1.0.31 ``layers/pos_embed_sincos.py::build_rotary_pos_embed(feat_shape, dim, max_res,
temperature, linear_bands, in_pixels, ref_feat_shape)`` (used by ``RotaryEmbedding`` and
``RotaryEmbeddingCat``, EVA-02's) gives each of the two grid axes ``q = dim/4`` bands: language
bands ``freq_bands``: ``1/temperature^(k/q)`` on the cell indices, or pixel bands
``pixel_freq_bands``: ``π·linspace(1, max_res/2, q)`` (``linear_bands``) or
``π·2^linspace(0, log2(max_res) − 1, q)`` on coordinates ``linspace(−1, 1, s)``.  ``ref_feat_shape``
rescales an axis of ``s`` cells to ``c/s·r`` (EVA's resizing).  A row is a grid cell, h-major
(``grid_indexing='ij'``); its ``dim`` columns are the sin (or cos) of ``[h bands | w bands]``, each
value twice (``repeat_interleave(2, -1)``); ``RotaryEmbeddingCat`` concatenates ``[sin | cos]``.

>>> Rope2d("2x3", 8, bands="lang", part="cos").rows(0, 2).shape
(2, 8)
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, get_args

import numpy as np

from pecli.dtypes import DType
from pecli.errors import RecipeError
from pecli.fitting import Sample
from pecli.kernels.exact import row_blocks
from pecli.kernels.pipelines import f32, pow32, sin_cos_rounded
from pecli.kernels.threads import run_blocks
from pecli.kinds.base import Recipe, check_row_range, choice, flag, int_param, positive_float

Bands = Literal["lang", "pixel"]
Rope2dPart = Literal["cat", "sin", "cos"]
Rope2dCompute = Literal["float32", "exact"]
#: The widest grid whose width :meth:`Rope2d.sizes` reads from the rows.
_MAX_WIDTH = 1 << 12


def grid_sizes(name: str, value: object) -> tuple[int, int]:
    """``HxW`` as ``(H, W)``, or a :class:`RecipeError` naming the option."""
    parts = str(value).lower().replace("×", "x").split("x")
    try:
        sizes = tuple(int(p) for p in parts)
    except ValueError:
        sizes = ()
    if len(sizes) != 2 or min(sizes) < 1:
        option = "--" + name.replace("_", "-")
        raise RecipeError(f"{name} must look like HxW with sizes ≥ 1, got {value!r}: give e.g. {option} 16x16")
    return sizes[0], sizes[1]


def linspace32(start: float, end: float, steps: int) -> np.ndarray:
    """torch's CPU ``linspace(start, end, steps, dtype=float32)``: ``start + step·i`` for the first
    half, ``end − step·(steps − 1 − i)`` for the rest, each a fused multiply-add rounded once to
    float32 (checked against torch 2.13 for every ``steps`` below 300)."""
    if steps == 1:
        return np.array([start], dtype=f32)
    a, b = f32(start), f32(end)
    step = np.float64(f32(f32(b - a) / f32(steps - 1)))
    i = np.arange(steps, dtype=np.float64)
    # float32·float32 is exact in float64; the sum is rounded (twice, float64 then float32).
    low = np.float64(a) + step * i
    high = np.float64(b) - step * (steps - 1 - i)
    return np.where(i < steps // 2, low, high).astype(f32)


@dataclass(frozen=True, slots=True)
class Rope2d(Recipe):
    """2-D rotary embeddings of vision transformers (timm's ``build_rotary_pos_embed``).

    Row ``r`` is grid cell ``(r // W, r % W)`` of ``feat_shape`` ``HxW``.  ``dim`` is timm's ``dim`` (the
    head dim, a multiple of 4): ``q = dim/4`` bands per axis.  ``bands``: ``lang`` (``in_pixels=False``,
    EVA-02) ``ω_k = base^(−k/q)`` on cell indices; ``pixel`` (timm's default) ``ω_k = π·2^(k·(log2
    max_res − 1)/(q − 1))`` (``π·linspace(1, max_res/2, q)`` with ``linear_bands``) on coordinates
    ``linspace(−1, 1, s)``.  ``ref_feat_shape`` (timm's) scales an axis of ``s`` cells by
    ``r/s``.  Columns ``[h0, h0, h1, h1, …, w0, w0, …]``; ``part`` ``sin``, ``cos`` or ``cat``
    (``RotaryEmbeddingCat``'s ``[sin | cos]``, ``2·dim`` columns).  ``compute``: ``float32`` is
    timm's pipeline step by step; ``exact`` the same formula in float64, rounded once.
    """

    feat_shape: str
    dim: int
    bands: Bands = "pixel"
    base: float = 10000.0
    max_res: int = 224
    linear_bands: bool = False
    ref_feat_shape: str | None = None
    part: Rope2dPart = "cat"
    compute: Rope2dCompute = "float32"
    dtype: DType = "float32"

    kind: ClassVar[str] = "rope2d"
    row_label: ClassVar[str] = "cell"
    core: ClassVar[tuple[str, ...]] = ("feat_shape", "dim", "bands", "part", "dtype")
    required: ClassVar[tuple[str, ...]] = ("feat_shape", "dim", "bands")
    example: ClassVar[str] = "--kind rope2d --feat-shape 16x16 --dim 64 --bands lang"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        h, w = grid_sizes("feat_shape", self.feat_shape)
        set_(self, "feat_shape", f"{h}x{w}")
        set_(self, "dim", int_param("dim", self.dim, 4, "timm's dim (the head dim), e.g. --dim 64 (EVA-02 base)"))
        if self.dim % 4:
            raise RecipeError(
                f"dim {self.dim} must be a multiple of 4 (dim/4 bands per axis, each twice): e.g. --dim 64"
            )
        for name, literal in (("bands", Bands), ("part", Rope2dPart), ("compute", Rope2dCompute), ("dtype", DType)):
            choice(name, getattr(self, name), get_args(literal))
        set_(self, "base", positive_float("base", self.base, "the temperature, e.g. --base 10000", not_one=True))
        set_(
            self,
            "max_res",
            int_param("max_res", self.max_res, 2, "the pixel bands' max resolution, e.g. --max-res 224"),
        )
        set_(self, "linear_bands", flag("linear_bands", self.linear_bands))
        if self.ref_feat_shape is not None:
            r = grid_sizes("ref_feat_shape", self.ref_feat_shape)
            set_(self, "ref_feat_shape", f"{r[0]}x{r[1]}")

    @property
    def axes(self) -> tuple[int, int]:
        """The grid's sizes ``(H, W)``."""
        return grid_sizes("feat_shape", self.feat_shape)

    @property
    def shape(self) -> tuple[int, int]:
        h, w = self.axes
        return (h * w, 2 * self.dim if self.part == "cat" else self.dim)

    # -- the pipeline --------------------------------------------------------------------------
    def band_values(self) -> np.ndarray:
        """The ``q`` bands, float32 as timm computes them (``exact``: float64)."""
        q = self.dim // 4
        top = math.log(self.max_res, 2) - 1  # timm: math.log(max_freq, 2) - 1
        if self.compute == "exact":
            k = np.arange(q, dtype=np.float64)
            if self.bands == "lang":
                return np.asarray(np.power(self.base, -k / q))
            spread = k / (q - 1) if q > 1 else k
            if self.linear_bands:
                return np.asarray(math.pi * (1 + spread * (self.max_res / 2 - 1)))
            return np.asarray(math.pi * np.power(2.0, spread * top))
        if self.bands == "lang":  # freq_bands(q, temperature, step=1): 1. / (temperature ** (arange(q) / q))
            return np.asarray(f32(1) / pow32(self.base, np.arange(q, dtype=f32) / f32(q)))
        if self.linear_bands:  # pixel_freq_bands: linspace(1, max_freq / 2, q) * pi
            return np.asarray(linspace32(1.0, self.max_res / 2, q) * f32(math.pi))
        return np.asarray(pow32(2, linspace32(0.0, top, q)) * f32(math.pi))

    def coordinates(self, axis: int) -> np.ndarray:
        """Axis ``axis``'s coordinates (``_build_grid``), float32 (``exact``: float64)."""
        s = self.axes[axis]
        ref = None if self.ref_feat_shape is None else grid_sizes("ref_feat_shape", self.ref_feat_shape)[axis]
        if self.compute == "exact":
            c = np.arange(s, dtype=np.float64)
            if self.bands == "pixel":
                c = -1 + 2 * c / (s - 1) if s > 1 else np.full(1, -1.0)
            return c if ref is None else c * ref / s
        t = linspace32(-1.0, 1.0, s) if self.bands == "pixel" else np.arange(s).astype(f32)
        if ref is not None:  # t / f * r, each step in float32
            t = (t / f32(s)) * f32(ref)
        return np.asarray(t, dtype=f32)

    def rows(self, r0: int, r1: int) -> np.ndarray:
        """Rows ``[r0, r1)``: cells ``(r // W, r % W)``; each axis's sin/cos looked up per coordinate."""
        check_row_range(self.shape[0], r0, r1)
        out = np.empty((r1 - r0, self.shape[1]), dtype=self.dtype)
        bands = self.band_values()
        q, width = bands.size, self.axes[1]
        tables = []
        for axis in (0, 1):
            c = self.coordinates(axis)
            s, co = sin_cos_rounded(c[:, None] * bands[None, :], c.dtype)  # grid * bands, then sin, cos
            tables.append((s, co))
        parts = {"sin": (0,), "cos": (1,), "cat": (0, 1)}[self.part]

        def block(a: int, b: int) -> None:
            h, w = np.divmod(np.arange(r0 + a, r0 + b), width)
            for n, which in enumerate(parts):
                o = n * self.dim
                for axis, cells in ((0, h), (1, w)):
                    values = tables[axis][which][cells]
                    first = o + 2 * q * axis
                    out[a:b, first : first + 2 * q : 2] = values  # the one cast to dtype
                    out[a:b, first + 1 : first + 2 * q : 2] = out[a:b, first : first + 2 * q : 2]

        run_blocks(block, row_blocks(r1 - r0, self.shape[1]))
        return out

    # -- facts -------------------------------------------------------------------------------
    def wavelengths(self) -> np.ndarray:
        """``2π/ω`` of each column's band, in units of its axis's coordinate."""
        per_part = np.tile(np.repeat(2 * math.pi / self.band_values().astype(np.float64), 2), 2)
        return np.tile(per_part, 2) if self.part == "cat" else per_part

    def pipeline(self) -> str:
        return self.compute

    def max_position(self) -> float:
        return float(max(np.max(np.abs(self.coordinates(a).astype(np.float64))) for a in (0, 1)))

    # -- the inverse -------------------------------------------------------------------------
    @classmethod
    def sizes(cls, params: dict[str, Any], sample: Sample) -> Iterator[dict[str, Any]]:
        """The preset's grid, or a square one, with the table's cells; ``dim`` from the width (a
        ``sin``/``cos`` preset: either half, as timm returns both)."""
        part = params.get("part", "cat")
        dim = sample.d // 2 if part == "cat" else sample.d
        halves = ("cat",) if part == "cat" else ("cos", "sin")
        grids = []
        width = sample.memo(("rope2d width", dim), lambda: grid_width(sample, dim))
        if width is not None and sample.n % width == 0:
            grids.append(f"{sample.n // width}x{width}")
        default = params.get("feat_shape")
        if default is not None:
            h, w = grid_sizes("feat_shape", default)
            if h * w == sample.n:
                grids.append(f"{h}x{w}")
        side = math.isqrt(sample.n)
        if side >= 1 and side * side == sample.n:
            grids.append(f"{side}x{side}")
        for g in dict.fromkeys(grids):
            for half in halves:
                yield {"feat_shape": g, "dim": dim, "part": half, "dtype": sample.dtype}


def grid_width(sample: Sample, dim: int) -> int | None:
    """The width W of the grid a rope2d table's rows run over, or ``None``: the h columns (the
    first ``dim/2``) hold still along a grid row.  Only tables whose columns come in equal pairs
    (in the sample's head) are read further, in blocks, up to :data:`_MAX_WIDTH` rows."""
    head = sample.rows(0, min(sample.n, sample.head_rows))
    if dim < 4 or sample.d % 2 or not np.array_equal(head[:, 0::2], head[:, 1::2]):
        return None
    first = head[0, : dim // 2]
    moved = np.flatnonzero(np.any(head[:, : dim // 2] != first, axis=1))
    if moved.size:  # the head (already read) shows it
        return int(moved[0])
    r, stop = int(head.shape[0]), min(sample.n, _MAX_WIDTH + 1)
    while r < stop:
        block = sample.rows(r, min(stop, r + 256))
        moved = np.flatnonzero(np.any(block[:, : dim // 2] != first, axis=1))
        if moved.size:
            return int(r + moved[0])
        r += block.shape[0]
    return None


__all__ = ["Bands", "Rope2d", "Rope2dCompute", "Rope2dPart", "grid_sizes", "grid_width", "linspace32"]
