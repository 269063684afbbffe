"""The rope2d kind: axial rotary embeddings of vision (and video) transformers, as timm and
rotary-embedding-torch build them.

timm 1.0.31 ``layers/pos_embed_sincos.py::build_rotary_pos_embed(feat_shape, dim, max_res,
temperature, linear_bands, in_pixels, ref_feat_shape)`` (used by ``RotaryEmbedding`` and
``RotaryEmbeddingCat``, EVA-02's) gives each grid axis ``q = dim/4`` bands: language
bands ``freq_bands``: ``1/temperature^(k/q)`` on the cell indices, or pixel bands
``pixel_freq_bands``: ``π·linspace(1, max_res/2, q)`` (``linear_bands``) or
``π·2^linspace(0, log2(max_res) − 1, q)`` on coordinates ``linspace(−1, 1, s)``.  ``ref_feat_shape``
rescales an axis of ``s`` cells to ``c/s·r`` (EVA's resizing).  A row is a grid cell, in C order
(first axis slowest, ``grid_indexing='ij'``); its columns are the sin (or cos) of ``[axis 0 bands |
axis 1 bands | …]``, each value twice (``repeat_interleave(2, -1)``): ``n·dim/2`` columns for ``n``
axes (``dim`` for a 2-D grid); ``RotaryEmbeddingCat`` concatenates ``[sin | cos]``.

rotary-embedding-torch 0.9.1 ``RotaryEmbedding(D, freqs_for='lang'|'pixel', theta,
max_freq).get_axial_freqs(*feat_shape)`` is the same table with ``dim = 2·D`` (``D/2`` bands per
axis: ``lang`` = the language bands with ``base = theta``; ``pixel`` = the linear pixel bands with
``max_res = max_freq``), but returns the angles themselves: ``part='angle'``; its users take
``.cos()`` and ``.sin()`` of them (``part='cos'``, ``'sin'``).  A grid has 2 or 3 axes
(``TxHxW``: lucidrains' video example).

>>> Rope2d("2x3", 8, bands="lang", part="cos").rows(0, 2).shape
(2, 8)
>>> Rope2d("2x3x4", 8, bands="lang", part="angle").shape
(24, 12)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal, cast, get_args

import numpy as np

from pecli.dtypes import DType
from pecli.errors import RecipeError
from pecli.fitting import Sample
from pecli.kernels.exact import as_slice, axis_run, line_blocks, run_index, split_lines
from pecli.kernels.pipelines import f32, pow32, sin_cos_rounded
from pecli.kernels.threads import run_blocks
from pecli.params import choice, flag, int_param, positive_float, round_number
from pecli.recipe import Pipelined, Recipe, listed
from pecli.resources import check_row_range

Bands = Literal["lang", "pixel"]
#: Each band's column twice in place (timm's default) or the bands then the bands again
#: (``rotate_half=True``, for ``apply_rot_embed(half=True)``).
Rope2dLayout = Literal["pairs", "half"]
#: ``ij``: the columns' axes in ``feat_shape`` order; ``xy``: the first two swapped (timm's
#: ``grid_indexing='xy'``: width before height).  Rows are grid cells in C order either way.
GridIndexing = Literal["ij", "xy"]
Rope2dPart = Literal["cat", "sin", "cos", "angle", "cis"]
#: Where a class token's row of zero angles goes (torchtune's vision RoPE: ``last``), or none.
ClsRow = Literal["none", "first", "last"]
#: ``same``: every axis takes the ``q`` bands (timm, rotary-embedding-torch); ``alternate``: axis ``a``
#: of ``n`` takes every ``n``-th frequency of ``base^(−i/(n·q))`` from the ``a``-th (Pixtral's 2-D RoPE:
#: height the even frequencies of ``base^(−2i/dim)``, width the odd ones).
AxisBands = Literal["same", "alternate"]
#: ``blocks``: each axis's bands together, ``[h0, h1, … | w0, w1, …]``; ``interleaved``: the axes
#: take turns at each band, ``[h0, w0, h1, w1, …]`` (diffusers' Lumina ``get_2d_rotary_pos_embed_lumina``).
AxisColumns = Literal["blocks", "interleaved"]
Rope2dCompute = Literal["float32", "exact"]
#: How many axes a grid may have (timm's 2-D grids, lucidrains' video grids).
AXES_ALLOWED = (2, 3)


def grid_sizes(name: str, value: object) -> tuple[int, ...]:
    """``HxW`` (or ``TxHxW``, or a list or tuple of sizes) as a tuple of sizes, or a one-line
    :class:`RecipeError` naming the option."""
    parts = str(listed(value, "x")).lower().replace("×", "x").split("x")
    try:
        sizes = tuple(int(p) for p in parts)
    except ValueError:
        sizes = ()
    if len(sizes) not in AXES_ALLOWED or min(sizes) < 1:
        option = "--" + name.replace("_", "-")
        raise RecipeError(
            f"{name} must look like HxW or TxHxW with sizes ≥ 1, got {value!r}: give e.g. {option} 16x16 (or 8x16x16)"
        )
    return sizes


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
class Rope2d(Pipelined):
    """Axial rotary embeddings of vision transformers (timm's ``build_rotary_pos_embed``,
    rotary-embedding-torch's ``get_axial_freqs``).

    Row ``r`` is grid cell ``unravel_index(r, feat_shape)`` of ``feat_shape`` ``HxW`` or ``TxHxW``
    (C order).  ``dim`` is timm's ``dim`` (the head dim, a multiple of 4; rotary-embedding-torch's
    ``2·D``): ``q = dim/4`` bands per axis.  ``bands``: ``lang`` (``in_pixels=False``, EVA-02;
    ``freqs_for='lang'``) ``ω_k = base^(−k/q)`` on cell indices; ``pixel`` (timm's default) ``ω_k =
    π·2^(k·(log2 max_res − 1)/(q − 1))`` (``π·linspace(1, max_res/2, q)`` with ``linear_bands``,
    ``freqs_for='pixel'``) on coordinates ``linspace(−1, 1, s)``.  ``ref_feat_shape`` (timm's, as
    many axes) scales an axis of ``s`` cells by ``r/s``.  Columns ``[h0, h0, h1, h1, …, w0, w0, …]``
    (``n·dim/2`` for ``n`` axes); ``part`` ``sin``, ``cos``, ``angle`` (coordinate·band, what
    ``get_axial_freqs`` returns) or ``cat`` (``RotaryEmbeddingCat``'s ``[sin | cos]``, twice the
    columns).  ``compute``: ``float32`` is the frameworks' pipeline step by step; ``exact`` the same
    formula in float64, rounded once.  ``layout``: ``pairs`` as above, or ``half`` (timm's
    ``rotate_half=True``): ``[h0, h1, …, w0, w1, …]`` then the same again.  ``grid_indexing``:
    ``xy`` puts the second axis's bands first (timm's ``grid_indexing='xy'``: width, then height).
    ``part='cis'``: each band's ``(cos, sin)`` in turn, ``[cos h0, sin h0, cos h1, …]`` (torchtune's
    ``VisionRotaryPositionalEmbeddings`` cache, ``(n, dim/2, 2)`` flattened).  ``first_index``: the
    index of each axis's first cell (language bands; torchtune counts from 1).  ``cls_row``:
    a row of zero angles (cos 1, sin 0) for a class token, ``first`` or ``last`` (torchtune's
    ``append_cls_token``).
    ``axis_columns``: ``interleaved`` puts the axes' bands in turn, ``[h0, w0, h1, w1, …]`` (diffusers'
    ``get_2d_rotary_pos_embed_lumina``, with ``part='cis'``), ``blocks`` (default) each axis's together.
    ``axis_bands``: ``alternate`` gives axis ``a`` of ``n`` the language bands ``base^(−(n·k + a)/(n·q))``
    (transformers' ``PixtralVisionRotaryEmbedding``: ``freqs[::2]`` for height, ``freqs[1::2]`` for
    width, with ``--layout half``); ``same`` (default) gives every axis ``base^(−k/q)``.
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
    layout: Rope2dLayout = "pairs"
    grid_indexing: GridIndexing = "ij"
    axis_bands: AxisBands = "same"
    first_index: int = 0
    cls_row: ClsRow = "none"
    axis_columns: AxisColumns = "blocks"
    merge: int = 1

    kind: ClassVar[str] = "rope2d"
    row_label: ClassVar[str] = "cell"
    core: ClassVar[tuple[str, ...]] = ("feat_shape", "dim", "bands", "part", "dtype")
    required: ClassVar[tuple[str, ...]] = ("feat_shape", "dim", "bands")
    example: ClassVar[str] = "--kind rope2d --feat-shape 16x16 --dim 64 --bands lang"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        axes = grid_sizes("feat_shape", self.feat_shape)
        set_(self, "feat_shape", "x".join(map(str, axes)))
        set_(self, "dim", int_param("dim", self.dim, 4, "timm's dim (the head dim), e.g. --dim 64 (EVA-02 base)"))
        if self.dim % 4:
            raise RecipeError(
                f"dim {self.dim} must be a multiple of 4 (dim/4 bands per axis, each twice): e.g. --dim 64"
            )
        for name, literal in (
            ("bands", Bands),
            ("part", Rope2dPart),
            ("compute", Rope2dCompute),
            ("dtype", DType),
            ("layout", Rope2dLayout),
            ("grid_indexing", GridIndexing),
            ("axis_bands", AxisBands),
            ("cls_row", ClsRow),
            ("axis_columns", AxisColumns),
        ):
            choice(name, getattr(self, name), get_args(literal))
        set_(self, "first_index", int_param("first_index", self.first_index, 0, "e.g. 1 (torchtune)"))
        set_(self, "merge", int_param("merge", self.merge, 1, "Qwen2-VL's spatial_merge_size, e.g. --merge 2"))
        if any(size % self.merge for size in axes[-2:]):
            raise RecipeError(
                f"feat_shape {self.feat_shape} does not split into {self.merge}×{self.merge} merge windows: "
                f"give sizes that are multiples of {self.merge} (Qwen2-VL's spatial_merge_size), or --merge 1"
            )
        if self.first_index and self.bands != "lang":
            raise RecipeError(
                "first_index moves the cell indices of language bands: give --bands lang (pixel bands span −1…1)"
            )
        if self.part == "cis" and self.layout != "pairs":
            raise RecipeError("part=cis holds each band's (cos, sin) in turn: give --layout pairs")
        if self.axis_bands == "alternate" and self.bands != "lang":
            raise RecipeError(
                "axis_bands=alternate splits the language frequencies base^(−2i/dim) between the axes "
                "(Pixtral): give --bands lang"
            )
        set_(self, "base", positive_float("base", self.base, "the temperature, e.g. --base 10000", not_one=True))
        set_(
            self,
            "max_res",
            int_param("max_res", self.max_res, 2, "the pixel bands' max resolution, e.g. --max-res 224"),
        )
        set_(self, "linear_bands", flag("linear_bands", self.linear_bands))
        if self.ref_feat_shape is not None:
            r = grid_sizes("ref_feat_shape", self.ref_feat_shape)
            if len(r) != len(axes):
                same = "x".join(["16"] * len(axes))
                raise RecipeError(
                    f"ref_feat_shape {'x'.join(map(str, r))} has {len(r)} axes but feat_shape "
                    f"{self.feat_shape} has {len(axes)}: give as many, e.g. --ref-feat-shape {same}"
                )
            set_(self, "ref_feat_shape", "x".join(map(str, r)))

    @property
    def axes(self) -> tuple[int, ...]:
        """The grid's sizes ``(H, W)`` or ``(T, H, W)``."""
        return grid_sizes("feat_shape", self.feat_shape)

    @property
    def column_axes(self) -> tuple[int, ...]:
        """The grid axis of each block of bands, in column order (``xy``: the first two swapped)."""
        order = list(range(len(self.axes)))
        if self.grid_indexing == "xy":
            order[0], order[1] = order[1], order[0]
        return tuple(order)

    def band_columns(self, slot: int, n: int = 0) -> list[np.ndarray]:
        """The columns the ``q`` bands of the ``slot``-th axis (in column order) fill in part ``n``
        (``cat``: 0 the sin, 1 the cos; ``cis``: 0 the cos, 1 the sin): each band twice (``pairs``,
        ``half``) or once (``cis``)."""
        q, width = self.dim // 4, self.part_width
        k = np.arange(q)
        place = k * len(self.axes) + slot if self.axis_columns == "interleaved" else slot * q + k
        if self.part == "cis":  # (cos, sin) of each band in turn
            return [2 * place + n]
        if self.layout == "pairs":  # repeat_interleave(2)
            return [n * width + 2 * place, n * width + 2 * place + 1]
        return [n * width + place, n * width + width // 2 + place]  # cat([x, x])

    @property
    def part_width(self) -> int:
        """Columns of one part (sin, cos or angle): ``2q`` per axis."""
        return len(self.axes) * (self.dim // 2)

    @property
    def shape(self) -> tuple[int, int]:
        cells = math.prod(self.axes) + (self.cls_row != "none")
        return (cells, 2 * self.part_width if self.part == "cat" else self.part_width)

    # -- the pipeline --------------------------------------------------------------------------
    def band_values(self, axis: int = 0) -> np.ndarray:
        """Axis ``axis``'s ``q`` bands, float32 as timm computes them (``exact``: float64)."""
        q = self.dim // 4
        top = math.log(self.max_res, 2) - 1  # timm: math.log(max_freq, 2) - 1
        if self.axis_bands == "alternate":
            # Pixtral: 1 / base^(arange(0, dim, 2) / dim), every n-th from the axis's own (2-D: [::2], [1::2])
            n = len(self.axes)
            i = np.arange(q) * n + axis
            if self.compute == "exact":
                return np.asarray(np.power(self.base, -i / (n * q)))
            return np.asarray(f32(1) / pow32(self.base, i.astype(f32) / f32(n * q)))
        if self.compute == "exact":
            k = np.arange(q, dtype=np.float64)
            if self.bands == "lang":
                return np.asarray(np.power(self.base, -k / q))
            spread = k / (q - 1) if q > 1 else k
            if self.linear_bands:
                return np.asarray(math.pi * (1 + spread * (self.max_res / 2 - 1)))
            return np.asarray(math.pi * np.power(2.0, spread * top))
        # freq_bands(q, temperature, step=1): 1. / (temperature ** (arange(q) / q)); lucidrains'
        # 1. / (theta ** (arange(0, D, 2) / D)) divides the same integers (2k/D = k/q exactly rounded).
        if self.bands == "lang":
            return np.asarray(f32(1) / pow32(self.base, np.arange(q, dtype=f32) / f32(q)))
        if self.linear_bands:  # pixel_freq_bands: linspace(1, max_freq / 2, q) * pi (lucidrains' too)
            return np.asarray(linspace32(1.0, self.max_res / 2, q) * f32(math.pi))
        return np.asarray(pow32(2, linspace32(0.0, top, q)) * f32(math.pi))

    def coordinates(self, axis: int) -> np.ndarray:
        """Axis ``axis``'s coordinates (``_build_grid``), float32 (``exact``: float64)."""
        s = self.axes[axis]
        ref = None if self.ref_feat_shape is None else grid_sizes("ref_feat_shape", self.ref_feat_shape)[axis]
        if self.compute == "exact":
            c = np.arange(s, dtype=np.float64) + self.first_index
            if self.bands == "pixel":
                c = -1 + 2 * c / (s - 1) if s > 1 else np.full(1, -1.0)
            return c if ref is None else c * ref / s
        t = (
            linspace32(-1.0, 1.0, s)
            if self.bands == "pixel"
            else np.arange(self.first_index, self.first_index + s).astype(f32)
        )
        if ref is not None:  # t / f * r, each step in float32
            t = (t / f32(s)) * f32(ref)
        return np.asarray(t, dtype=f32)

    def cell_coordinates(self, cells: np.ndarray) -> tuple[np.ndarray, ...]:
        """The grid indices of the ``cells``-th cells in row order: C order, or ``merge`` windows
        (``(…, H/m, W/m, m, m)`` unravelled, then ``h = h_window·m + h_in``, the same for w)."""
        if self.merge == 1:
            return np.unravel_index(cells, self.axes)
        m, (*lead, h, w) = self.merge, self.axes
        *outer, hw, ww, hi, wi = np.unravel_index(cells, (*lead, h // m, w // m, m, m))
        return (*outer, hw * m + hi, ww * m + wi)

    def axis_tables(self, c0: int, c1: int) -> list[tuple[int, tuple[np.ndarray, ...]]]:
        """Per axis, the coordinates cells ``[c0, c1)`` meet (:func:`~pecli.kernels.exact.axis_run`:
        from the ``lo``-th on, modulo the axis's size) as ``lo`` and the ``(sin, cos)`` or
        ``(angle,)`` of their bands, ``(count, q)``: a block of a long grid computes its own cells'."""
        tables: list[tuple[int, tuple[np.ndarray, ...]]] = []
        for axis, size in enumerate(self.axes):
            lo, count = axis_run(c0, c1, size, math.prod(self.axes[axis + 1 :]))
            c = self.coordinates(axis)[(lo + np.arange(count)) % size]
            angle = c[:, None] * self.band_values(axis)[None, :]  # grid * bands (float32: one rounding, as torch's)
            tables.append((lo, (angle,) if self.part == "angle" else sin_cos_rounded(angle, c.dtype)))
        return tables

    def rows(self, r0: int, r1: int) -> np.ndarray:
        """Rows ``[r0, r1)``: cells ``unravel_index(r, axes)``; each axis's values looked up per
        coordinate; a class token's row holds the values of angle 0."""
        check_row_range(self.shape[0], r0, r1)
        out = np.empty((r1 - r0, self.shape[1]), dtype=self.dtype)
        axes, width = self.axes, self.part_width
        parts = {"sin": (0,), "cos": (1,), "cat": (0, 1), "angle": (0,), "cis": (1, 0)}[self.part]
        first_cell = 1 if self.cls_row == "first" else 0
        cells = math.prod(axes)
        merged = self.merge > 1  # a block of rows meets cells all over its window row: every coordinate
        tables = self.axis_tables(*((0, cells) if merged else (max(r0 - first_cell, 0), min(r1 - first_cell, cells))))
        cls = {"first": 0, "last": cells}.get(self.cls_row)
        if cls is not None and r0 <= cls < r1:  # a class token's angles are 0: sin 0, cos 1
            ones = {"cos": slice(None), "cat": slice(width, None), "cis": slice(0, None, 2)}.get(self.part, slice(0))
            out[cls - r0] = 0
            out[cls - r0, ones] = 1

        # Per part, each axis and the columns its bands fill (slices: strided copies).
        places = [
            [(axis, [as_slice(c) for c in self.band_columns(slot, n)]) for slot, axis in enumerate(self.column_axes)]
            for n in range(len(parts))
        ]
        line, last = axes[-1], len(axes) - 1  # cells run in C order: lines along the last axis

        def place(rows: np.ndarray, coords: tuple[np.ndarray, ...]) -> None:
            """``rows`` ``(cells, width)`` at cells ``coords``, or ``(lines, line, width)`` whose
            lines start at ``coords``: each axis's values per cell, or per line along it."""
            for n, which in enumerate(parts):
                for axis, columns in places[n]:
                    lo, table = tables[axis][0], tables[axis][1][which]
                    at = run_index(coords[axis], lo, axes[axis])
                    if rows.ndim == 2:
                        values = table[at]
                    else:
                        values = table[:line] if axis == last else table[at, None]
                    for col in columns:  # cast to dtype as placed
                        rows[..., col] = values

        def block(start: int, stop: int) -> None:
            c0 = max(r0 + start - first_cell, 0)  # the block's grid cells [c0, c1)
            c1 = min(r0 + stop - first_cell, cells)
            if merged:  # cell by cell, in the windows' order
                place(out[c0 + first_cell - r0 : c1 + first_cell - r0], self.cell_coordinates(np.arange(c0, c1)))
                return
            ends, lines = split_lines(c0, c1, line)
            for a, b in ends:  # partial lines: cell by cell
                place(out[a + first_cell - r0 : b + first_cell - r0], np.unravel_index(np.arange(a, b), axes))
            if lines:  # whole lines: the last axis's values the same in each, the others' along it
                rows = out[lines.start * line + first_cell - r0 : lines.stop * line + first_cell - r0]
                place(rows.reshape(len(lines), line, rows.shape[1]), np.unravel_index(np.array(lines) * line, axes))

        run_blocks(block, line_blocks(r0, r1, first_cell, line, self.shape[1]))
        return out

    # -- facts -------------------------------------------------------------------------------
    def wavelengths(self) -> np.ndarray:
        """``2π/ω`` of each column's band, in units of its axis's coordinate."""
        out = np.empty(self.shape[1])
        for n in range(2 if self.part in ("cat", "cis") else 1):
            for slot, axis in enumerate(self.column_axes):
                for columns in self.band_columns(slot, n):
                    out[columns] = 2 * math.pi / self.band_values(axis).astype(np.float64)
        return out

    def paired_columns(self) -> bool:
        """cis holds each band's (cos, sin) side by side; pairs repeats each band twice."""
        return self.part == "cis" or self.layout == "pairs"

    def complex_pairs(self) -> bool:
        """cis is ``cos + i·sin`` of each band as (real, imaginary) parts: Lumina's ``freqs_cis``."""
        return self.part == "cis"

    def pipeline(self) -> str:
        return self.compute

    def max_position(self) -> float:
        return float(max(np.max(np.abs(self.coordinates(a).astype(np.float64))) for a in range(len(self.axes))))

    def parameter_words(self, name: str) -> str:
        return "row order" if name == "merge" else Recipe.parameter_words(self, name)

    def value_words(self, name: str, value: Any) -> str:
        """``merge`` as the row order it gives: ``2×2 merge windows`` or ``row-major``."""
        if name == "merge":
            return f"{value}×{value} merge windows" if value > 1 else "row-major"
        return Recipe.value_words(self, name, value)

    def neighbours(self) -> Iterator[Recipe]:
        """The base's, and the rows in 2×2 merge windows or row-major (Qwen2-VL's vision order)."""
        yield from Recipe.neighbours(self)
        try:
            yield replace(self, merge=2 if self.merge == 1 else 1)
        except RecipeError:  # a grid that 2×2 windows do not tile
            return

    # -- the inverse -------------------------------------------------------------------------
    @classmethod
    def fit(cls, sample: Sample) -> Iterator[Recipe]:
        """Tables no preset names (:func:`pecli.kinds.rope2d.fit.fitted`), and (cos, sin) pair
        caches: :func:`_fitted_cis`."""
        from pecli.kinds.rope2d.fit import fitted

        yield from fitted(cls, sample)
        yield from _fitted_cis(sample)

    @classmethod
    def sizes(cls, params: dict[str, Any], sample: Sample) -> Iterator[dict[str, Any]]:
        """The preset's grid, or one read from the rows, or a square one, with the table's cells;
        ``dim`` from the width (a ``sin``/``cos`` preset: either half, as timm returns both; an
        ``angle`` preset: angles only).  A 2-D grid always; a 3-D one when the preset's is.  The
        layout is what the columns repeat (pairs, or the part's halves), and the axes' column
        order (``grid_indexing``) is read with the grid."""
        from pecli.kinds.rope2d.fit import layout_of, read_grid

        part = params.get("part", "cat")
        width = sample.d // 2 if part == "cat" else sample.d
        halves = {"cat": ("cat",), "angle": ("angle",)}.get(part, ("cos", "sin"))
        layout = layout_of(sample, width)
        if layout is None:
            return
        default = params.get("feat_shape")
        preset_axes = grid_sizes("feat_shape", default) if default is not None else None
        cls_row, columns = params.get("cls_row", "none"), params.get("axis_columns", "blocks")
        cells = sample.n - (cls_row != "none")
        found: list[tuple[str, str, int, int]] = []
        for n in dict.fromkeys((2, len(preset_axes or ()) or 2)):
            dim = 2 * width // n
            if width % n or dim < 4 or dim % 4:
                continue
            read = read_grid(sample, n, width, layout, columns, cls_row)
            if read is not None:
                found.append((*read, dim))
            if preset_axes is not None and len(preset_axes) == n and math.prod(preset_axes) == cells:
                found.append(("x".join(map(str, preset_axes)), "ij", 1, dim))
            side = math.isqrt(cells)
            if n == 2 and side >= 1 and side * side == cells:
                found += [(f"{side}x{side}", "ij", 1, dim), (f"{side}x{side}", "xy", 1, dim)]
        for g, indexing, merge, dim in dict.fromkeys(found):
            for half in halves:
                yield {
                    "feat_shape": g,
                    "dim": dim,
                    "part": half,
                    "dtype": sample.dtype,
                    "layout": layout,
                    "grid_indexing": indexing,
                    "cls_row": cls_row,
                    "axis_columns": columns,
                    "merge": merge,
                }


def _fitted_cis(sample: Sample) -> Iterator[Rope2d]:
    """(cos, sin) pair caches of a 2-D grid: torchtune's vision cache (each axis's bands together,
    cells from 1, a class token's row of angle 0) and Lumina's ``freqs_cis`` (the axes in turn at
    each band).  The pairs lie on the unit circle; the grid is read from where each axis's columns
    first move, the cells' first index from row 0's band-0 angle (ω₀ = 1), and the base from the
    last axis's band 1 (its angle step from one cell to the next)."""
    from pecli.kinds.rope2d.fit import BASES_TRIED, PIXEL_TRIED, axis_stride

    n, d = sample.n, sample.d
    if d % 4 or n < 5:
        return
    head = sample.rows(0, min(n, sample.head_rows))
    radius = head[:, 0::2] ** 2 + head[:, 1::2] ** 2
    if not np.allclose(radius, 1, rtol=0, atol=max(1e-3, 8 * sample.eps)):
        return
    zero = np.tile([1.0, 0.0], d // 2)  # angle 0: cos 1, sin 0
    last = sample.rows(n - 1, n)[0]
    placements: tuple[tuple[ClsRow, int], ...] = (("none", 0), ("first", 1), ("last", 0))
    arrangements: tuple[AxisColumns, ...] = get_args(AxisColumns)
    dtype = cast(DType, sample.dtype)
    for (cls_row, skip), arrangement in itertools.product(placements, arrangements):
        if (cls_row == "first" and not np.array_equal(head[0], zero)) or (
            cls_row == "last" and not np.array_equal(last, zero)
        ):
            continue
        probe = Rope2d("2x2", d, "lang", part="cis", axis_columns=arrangement)
        columns = [
            np.sort(np.concatenate([*probe.band_columns(slot, 0), *probe.band_columns(slot, 1)])) for slot in (0, 1)
        ]
        first, second = (axis_stride(sample, c, skip) or 0 for c in columns)
        indexing: GridIndexing = "xy" if first == 1 else "ij"
        width = second if first == 1 else first
        cells = n - (cls_row != "none")
        if min(first, second) != 1 or width < 2 or cells % width or cells // width < 2:
            continue
        grid = f"{cells // width}x{width}"
        slot = 0 if indexing == "xy" else 1  # the last axis's columns: its bands 0 and 1
        cos, sin = probe.band_columns(slot, 0)[0][:2], probe.band_columns(slot, 1)[0][:2]
        angles = np.arctan2(*(sample.rows(skip, skip + 2)[:, c] for c in (sin, cos)))
        index = round(float(np.mod(angles[0, 0], 2 * math.pi)))  # language band 0 turns by 1 a cell
        step = float(np.mod(angles[1, -1] - angles[0, -1], 2 * math.pi)) if len(cos) > 1 else math.nan
        measured = [round_number(step ** (-(d // 4)))] if 0 < step < 1 else []
        bands: list[dict[str, Any]] = [
            *({"bands": "lang", "base": b, "first_index": index} for b in dict.fromkeys([*measured, *BASES_TRIED])),
            *({"bands": "lang", "base": b, "axis_bands": "alternate"} for b in BASES_TRIED),
            *({"bands": "pixel", "max_res": m, "linear_bands": lin} for m, lin in PIXEL_TRIED),
        ]
        cls = "" if cls_row == "none" else f", a class token's row of angle 0 {cls_row}"
        for params, compute in itertools.product(bands, get_args(Rope2dCompute)):
            try:
                recipe = Rope2d(grid, d, part="cis", compute=compute, dtype=dtype, **params)
                recipe = replace(recipe, grid_indexing=indexing, cls_row=cls_row, axis_columns=arrangement)
            except RecipeError:
                continue
            where = f"each band's (cos, sin), axes in {arrangement}, on a {grid} grid ({indexing})"
            said = f"base {recipe.base:g}" if recipe.bands == "lang" else f"max_res {recipe.max_res}"
            sample.clue(f"{where}{cls}; the bands fit {recipe.bands} bands, {said}", recipe)
            yield recipe


__all__ = [
    "AXES_ALLOWED",
    "Bands",
    "GridIndexing",
    "Rope2d",
    "Rope2dCompute",
    "Rope2dLayout",
    "Rope2dPart",
    "grid_sizes",
    "linspace32",
]
