"""The sincos2d kind: 2-D (and 3-D) grid tables, one row per grid cell, per-axis sinusoids side by side.

The tables of MAE (``get_2d_sincos_pos_embed``), timm (``build_sincos2d_pos_embed``), MoCo v3,
HF ViTMAE, positional-encodings 2D/3D and diffusers (SD3, PixArt, DiT, CogVideoX).  This module builds any row range
(:meth:`Sincos2d.rows`) and recognises a grid in a table's rows (:meth:`Sincos2d.fit`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar, Literal, get_args

import numpy as np

from pecli.dtypes import DType, numpy_dtype
from pecli.errors import RecipeError
from pecli.fitting import Sample
from pecli.kernels.exact import (
    axis_run,
    exp_frequencies,
    exp_frequencies_of,
    frequencies,
    line_blocks,
    run_index,
    sincos,
    split_lines,
)
from pecli.kernels.pipelines import compute_dtype, rounded, sin_cos_rounded
from pecli.kernels.threads import run_blocks
from pecli.params import choice, flag, int_param, positive_float
from pecli.recipe import Pipelined, Recipe, listed
from pecli.resources import check_row_range

if TYPE_CHECKING:
    from pecli.dtypes import Ids

Compute = Literal["exact", "float64", "float32"]
Order = Literal[
    "mae", "timm", "timm-interleave", "timm-reverse", "timm-reverse-interleave", "tatp", "cogvideox", "loftr"
]
#: The frequency rule of each axis's ``q`` frequencies: ``base^(−k/q)`` (the paper's ``2i/d`` over an
#: axis's ``2q`` columns: MAE, timm, diffusers) or ``base^(−k/(q−1))`` (tensor2tensor's rule, which
#: vit-pytorch's ``posemb_sincos_2d``/``_3d`` use: the slowest frequency is ``1/base`` itself).
#: ``loftr-bug``: ``ω_k = e^(−2k)`` whatever the base, LoFTR's ``temp_bug_fix=False`` (zju3dv/LoFTR#41:
#: ``-math.log(10000.0) / d_model // 2`` floor-divides to −1), kornia's default.
Freq = Literal["paper", "t2t", "loftr-bug"]
#: Cell ``c``'s coordinate (0-based) on an axis of ``m`` cells: ``index`` ``c``; DETR's
#: ``PositionEmbeddingSine`` counts from 1 (the mask's ``cumsum``): ``count`` ``c + 1``
#: (``normalize=False``), ``detr`` ``(c + 1)/(m + 10⁻⁶)·2π`` (``normalize=True``, DETR, Conditional
#: DETR, Mask2Former), ``deformable`` ``(c + 0.5)/(m + 10⁻⁶)·2π`` (Deformable DETR's ``− 0.5``).
Coords = Literal["index", "count", "detr", "deformable"]
#: DETR's ``eps`` and ``scale`` (``normalize=True``), and each coordinate rule's offset from ``c``.
DETR_EPS, DETR_SCALE = 1e-6, 2 * math.pi
_COORD_OFFSET = {"count": 1.0, "detr": 1.0, "deformable": 0.5}
_COORD_WORDS = {
    "index": "c",
    "count": "c + 1",
    "detr": "(c + 1)/(m + 1e-6)·2π",
    "deformable": "(c + 0.5)/(m + 1e-6)·2π",
}


@dataclass(frozen=True, slots=True)
class Sincos2d(Pipelined):
    """A 2-D (or 3-D) grid table: one row per grid cell, per-axis sinusoids side by side.

    ``grid`` is ``HxW`` (or ``XxYxZ`` for ``order=tatp``).  Each axis gets ``q`` frequencies
    ``ω_k = base^(−k/q)`` (``base`` is the temperature), or ``base^(−k/(q−1))`` with ``freq=t2t``
    (vit-pytorch's ``omega = arange(q) / (q − 1)``).  ``order`` fixes rows and columns:

    - ``mae``: rows h-major; columns ``[sin w | cos w | sin h | cos h]`` (MAE's ``emb_h`` is w); a
      ``TxHxW`` grid: rows t-major, ``[sin w | cos w | sin h | cos h | sin t | cos t]`` of ``dim // 6``
      frequencies each and zero columns after (vit-pytorch's ``posemb_sincos_3d``);
    - ``timm``: rows h-major; ``[sin h | sin w | cos h | cos w]``;
    - ``timm-interleave``: rows h-major; ``[sin h | cos h | sin w | cos w]`` (HF ViTMAE raw);
    - ``timm-reverse``: rows w-major; ``[sin w | sin h | cos w | cos h]``;
    - ``timm-reverse-interleave``: rows w-major; ``[sin w | cos w | sin h | cos h]`` (MoCo-v3);
    - ``tatp``: positional-encodings 2D/3D: rows first-axis-major; per axis ``C = 2⌈dim/(2n)⌉``
      columns interleaved ``sin, cos, …``; axes side by side; truncated to ``dim``;
    - ``loftr``: LoFTR's ``PositionEncodingSine`` (kornia): rows h-major; columns ``[sin x_k, cos x_k,
      sin y_k, cos y_k]`` for each of the ``dim/4`` frequencies ``k`` (x the width);
    - ``cogvideox``: diffusers' ``get_3d_sincos_pos_embed``: grid ``TxHxW`` (``HxW``: one frame), rows t-major;
      ``[sin t | cos t]`` (``dim/8`` frequencies) then MAE's ``[sin w | cos w | sin h | cos h]``
      (``3·dim/16`` frequencies each).

    ``cls`` puts one zero row in front (the class token); ``extra_tokens`` ``N`` puts ``N``
    (diffusers' ``get_2d_sincos_pos_embed(cls_token=True, extra_tokens=N)``; 1 is ``cls``).
    diffusers' coordinate scaling: an axis of ``m`` cells has coordinates
    ``c / (m / base_size) / interpolation_scale`` (``base_size`` unset: ``c / interpolation_scale``);
    ``max_size`` (SD3's ``pos_embed_max_size``) builds a ``max_size × max_size`` table and keeps its
    centred ``grid`` crop; cogvideox's time axis is divided by ``temporal_interpolation_scale``
    instead.  The float64/float32 pipelines build these coordinates in float32, as diffusers does.
    """

    grid: str
    dim: int
    base: float = 10000.0
    order: Order = "mae"
    cls: bool = False
    dtype: DType = "float32"
    compute: Compute = "exact"
    interpolation_scale: float = 1.0
    base_size: int | None = None
    max_size: int | None = None
    temporal_interpolation_scale: float = 1.0
    extra_tokens: int | None = None
    freq: Freq = "paper"
    coords: Coords = "index"

    kind: ClassVar[str] = "sincos2d"
    #: The orders that take 3-D grids (tatp and mae also take 2-D ones, cogvideox one frame).
    orders_3d: ClassVar[tuple[str, ...]] = ("tatp", "cogvideox", "mae")
    core: ClassVar[tuple[str, ...]] = ("grid", "dim", "base", "order", "dtype")
    required: ClassVar[tuple[str, ...]] = ("grid", "dim")
    example: ClassVar[str] = "--grid 14x14 --dim 768"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "grid", listed(self.grid, "x"))  # (14, 14) from a script: "14x14"
        set_(self, "dim", int_param("dim", self.dim, 1, "give the embedding width, e.g. --dim 768"))
        set_(self, "base", positive_float("base", self.base, "the temperature, usually 10000", not_one=True))
        for name, literal in (
            ("order", Order),
            ("dtype", DType),
            ("compute", Compute),
            ("freq", Freq),
            ("coords", Coords),
        ):
            choice(name, getattr(self, name), get_args(literal))
        set_(self, "cls", flag("cls", self.cls))
        if self.extra_tokens is not None:
            extra = int_param("extra_tokens", self.extra_tokens, 0, "the zero rows before the grid, e.g. 2")
            # One zero row is the class token's (cls); more are diffusers' extra_tokens, which need cls_token.
            set_(self, "extra_tokens", extra if extra >= 2 else None)
            set_(self, "cls", self.cls or extra >= 1)
        for name, hint in (
            ("interpolation_scale", "diffusers' interpolation_scale, e.g. 1 (SD3) or 2 (PixArt 1024)"),
            ("temporal_interpolation_scale", "diffusers' temporal_interpolation_scale, e.g. 1 (CogVideoX)"),
        ):
            set_(self, name, positive_float(name, getattr(self, name), hint))
        for name, hint in (("base_size", "e.g. 64 (sample size / patch size)"), ("max_size", "e.g. 192 (SD3)")):
            if getattr(self, name) is not None:
                set_(self, name, int_param(name, getattr(self, name), 1, hint))
        axes = self.axes
        if len(axes) == 3 and self.order not in self.orders_3d:
            raise RecipeError(
                f"a 3-D grid {self.grid} needs order=mae (vit-pytorch 3D), tatp (positional-encodings 3D) or cogvideox"
            )
        if self.order == "cogvideox" and self.dim % 16:
            raise RecipeError(f"dim {self.dim} must be a multiple of 16 for order=cogvideox: dim/4 time, 3·dim/4 space")
        if self.temporal_interpolation_scale != 1 and self.order != "cogvideox":
            raise RecipeError("temporal_interpolation_scale needs order=cogvideox: drop --temporal-interpolation-scale")
        if self.max_size is not None and (len(axes) != 2 or max(axes) > self.max_size):
            raise RecipeError(f"grid {self.grid} must be an HxW crop of max_size {self.max_size}: raise --max-size")
        if self.order != "tatp" and self.dim % 4 and not self._six_blocks:
            raise RecipeError(f"dim {self.dim} must be a multiple of 4 for order={self.order}: four blocks of dim/4")
        if self._six_blocks and self.dim < 6:
            raise RecipeError(f"dim {self.dim} is too narrow for a 3-D mae grid: six blocks of dim // 6, e.g. --dim 48")
        if (self.order == "loftr" and self.freq == "t2t") or (self.freq == "loftr-bug" and self.order != "loftr"):
            raise RecipeError(
                f"freq={self.freq} and order={self.order} do not go together: LoFTR's order takes freq paper "
                "(temp_bug_fix=True) or loftr-bug (False), and loftr-bug only the loftr order"
            )
        if self.order == "loftr" and (len(axes) != 2 or self.dim % 4):
            raise RecipeError(
                f"order=loftr is an HxW grid of four columns a frequency: give an HxW grid and a --dim that is "
                f"a multiple of 4 (grid {self.grid}, dim {self.dim})"
            )
        if self.freq == "t2t" and self.per_axis < 2:
            raise RecipeError(
                f"freq=t2t spaces an axis's frequencies by 1/(q−1), but dim {self.dim} gives q = {self.per_axis}: "
                "give a wider --dim or freq=paper"
            )
        if self.coords != "index" and (self.order not in ("tatp", "loftr") or len(axes) != 2):
            raise RecipeError(
                f"coords={self.coords} is DETR's PositionEmbeddingSine, an HxW grid in the tatp order "
                f"([sin y, cos y, … | sin x, cos x, …]), or LoFTR's (order loftr): give --order tatp and an HxW "
                "grid, or --coords index"
            )
        if self.coords != "index" and self.dim % 4:
            raise RecipeError(
                f"coords={self.coords} builds DETR's map of 2·npf channels, npf even (sin and cos of npf/2 "
                f"frequencies an axis), but dim {self.dim} is not a multiple of 4: "
                f"give e.g. --dim {self.dim + 4 - self.dim % 4}"
            )
        scaled = self.interpolation_scale != 1 or self.base_size is not None or self.max_size is not None
        if self.coords != "index" and scaled:
            raise RecipeError(
                f"coords={self.coords} has its own coordinates: drop diffusers' --interpolation-scale, "
                "--base-size and --max-size"
            )
        if self.shape[0] >= 2**53:
            raise RecipeError(f"grid {self.grid} has too many cells")

    @property
    def axes(self) -> tuple[int, ...]:
        """The grid's sizes, e.g. ``(14, 14)`` for ``14x14``."""
        parts = str(self.grid).lower().replace("×", "x").split("x")
        try:
            sizes = tuple(int(p) for p in parts)
        except ValueError:
            sizes = ()
        if len(sizes) not in (2, 3) or min(sizes) < 1:
            raise RecipeError(f"grid must look like HxW (e.g. 14x14) or XxYxZ, got {self.grid!r}")
        return sizes

    @property
    def shape(self) -> tuple[int, int]:
        return (math.prod(self.axes) + self.prefix, self.dim)

    @property
    def prefix(self) -> int:
        """The zero rows before the grid: ``extra_tokens``, or 1 for ``cls``."""
        return self.extra_tokens or int(self.cls)

    @property
    def _six_blocks(self) -> bool:
        """A 3-D grid in the mae order: six blocks of ``dim // 6`` columns, zero columns after."""
        return self.order == "mae" and len(self.axes) == 3

    @property
    def per_axis(self) -> int:
        """Frequencies per axis ``q``."""
        if self.order == "tatp":
            return math.ceil(self.dim / (2 * len(self.axes)))
        if self.order == "cogvideox":
            return 3 * self.dim // 16
        return self.dim // 6 if self._six_blocks else self.dim // 4

    def spacing(self, q: int) -> int:
        """The denominator of the exponents ``k/…`` of an axis of ``q`` frequencies (``freq``)."""
        return q - 1 if self.freq == "t2t" else q

    @property
    def cell_axes(self) -> tuple[int, ...]:
        """The axes the rows run over: ``axes``, with cogvideox's one frame ``(1, H, W)`` for ``HxW``."""
        axes = self.axes
        return (1, *axes) if self.order == "cogvideox" and len(axes) == 2 else axes

    def axis_frequencies(self, axis: int) -> int:
        """Frequencies of axis ``axis`` (cogvideox's time axis has ``dim/8``, the others ``per_axis``)."""
        return self.dim // 8 if self.order == "cogvideox" and axis == 0 else self.per_axis

    def coordinates(self, axis: int) -> np.ndarray:
        """Axis ``axis``'s coordinates (float64; float32 values for the float pipelines, as diffusers)."""
        size = self.cell_axes[axis]
        if self.coords != "index":
            return self._detr_coordinates(size)
        built = self.max_size or size
        cells = np.arange(size) + (built - size) // 2  # SD3's centred crop
        temporal = self.order == "cogvideox" and axis == 0
        scale = self.temporal_interpolation_scale if temporal else self.interpolation_scale
        base_size = None if temporal else self.base_size
        if self.compute == "exact":
            return cells * (base_size or built) / (built * scale)
        # diffusers: torch.arange(m, float32) / (m / base_size) / interpolation_scale, in float32.
        out = cells.astype(np.float32)
        if base_size is not None:
            out = out / np.float32(built / base_size)
        return (out / np.float32(scale)).astype(np.float64)

    def _detr_coordinates(self, size: int) -> np.ndarray:
        """DETR's coordinates of an axis of ``size`` cells (``coords``): ``exact`` in float64; the
        float pipelines step by step as ``PositionEmbeddingSine`` does in that dtype (``arange(1, m
        + 1)``, ``− 0.5``, ``/ (m + eps)``, ``· scale``, each rounded)."""
        offset = _COORD_OFFSET[self.coords]
        if self.compute == "exact":
            c = np.arange(size, dtype=np.float64) + offset
            return c if self.coords == "count" else c / (size + DETR_EPS) * DETR_SCALE
        dt: Any = compute_dtype(self.compute)
        c = np.arange(1, size + 1, dtype=dt)
        if self.coords != "count":
            c = (c - dt(1 - offset)) / (dt(size) + dt(DETR_EPS)) * dt(DETR_SCALE)
        return np.asarray(c, dtype=np.float64)

    @property
    def frequency_form(self) -> str:
        """How the float pipelines take the angle: ``exp-2k`` ``c·exp(−2k)`` (``freq=loftr-bug``),
        ``exp`` LoFTR's ``c·exp(2k·(−ln base/(2q)))``, ``divide`` DETR's ``c / base^(k/q)``
        (``coords`` other than index), ``reciprocal`` ``c · (1 / base^(k/q))`` (MAE, timm,
        positional-encodings, diffusers)."""
        if self.freq == "loftr-bug":
            return "exp-2k"
        if self.order == "loftr":
            return "exp"
        return "divide" if self.coords != "index" else "reciprocal"

    def value_words(self, name: str, value: Any) -> str:
        """The frequency rule with its exponents (``t2t, ω_k = base^(−k/63)``), the coordinates
        with their rule (``detr (c+1)/(m+1e-6)·2π``)."""
        if name == "coords" and value in _COORD_WORDS:
            return f"{value} {_COORD_WORDS[value]}"
        if name == "freq" and value == "loftr-bug":
            return "loftr-bug, ω_k = e^(−2k)"
        if name == "freq" and value in get_args(Freq):
            q = self.per_axis
            return f"{value}, ω_k = base^(−k/{q - 1 if value == 't2t' else q})"
        return Recipe.value_words(self, name, value)

    # -- facts -------------------------------------------------------------------------------
    def omega(self) -> np.ndarray:
        """``ω_k = base^(−k/q)`` (``freq=t2t``: ``k/(q−1)``; ``loftr-bug``: ``e^(−2k)``) of each
        axis's ``q`` frequencies, float64 (correctly rounded)."""
        q = self.per_axis
        if self.freq == "loftr-bug":
            return exp_frequencies(2, q)[0]
        return frequencies(self.base, 1.0, tuple((k, self.spacing(q)) for k in range(q)))[0]

    def wavelengths(self) -> np.ndarray:
        """``2π/ω`` of each column's axis sinusoid, in units of that axis's coordinate."""
        q = self.per_axis
        if self.order == "cogvideox":
            q_t = self.axis_frequencies(0)
            omega_t = frequencies(self.base, 1.0, tuple((k, self.spacing(q_t)) for k in range(q_t)))[0]
            spatial = 2 * math.pi / self.omega()[np.arange(self.dim - 2 * q_t) % q]
            return np.concatenate([2 * math.pi / omega_t[np.arange(2 * q_t) % q_t], spatial])
        # tatp: 2q interleaved columns per axis (sin, cos of ω_0, then ω_1, …); loftr: four columns
        # a frequency; the other orders: four blocks of q columns, each running through ω_0..ω_{q−1}.
        index = {
            "tatp": (np.arange(self.dim) % (2 * q)) // 2,
            "loftr": np.arange(self.dim) // 4,
        }.get(self.order, np.arange(self.dim) % q)
        out: np.ndarray = 2 * math.pi / self.omega()[index]
        if self._six_blocks:
            out[6 * q :] = np.nan  # the zero columns after the six blocks never turn
        return out

    def max_position(self) -> float:
        return float(max(max(self.axes), *(float(self.coordinates(a)[-1]) for a in range(len(self.cell_axes)))))

    # -- building ----------------------------------------------------------------------------
    def rows(self, r0: int, r1: int) -> np.ndarray:
        """Rows ``[r0, r1)``: the cells ``r0 − cls … r1 − cls`` in the order's row order, each
        group of columns looked up per coordinate, row blocks on every core."""
        check_row_range(self.shape[0], r0, r1)
        out = np.zeros((r1 - r0, self.dim), dtype=self.dtype)  # the cls row stays zero
        cells = (max(r0 - self.prefix, 0), r1 - self.prefix)
        if cells[1] <= cells[0]:
            return out
        groups = self._column_groups(*cells)
        fast = 0 if self.order.startswith("timm-reverse") else len(self.cell_axes) - 1  # rows run along it
        line = self.cell_axes[fast]

        def place(rows: np.ndarray, coords: tuple[np.ndarray, ...]) -> None:
            """``rows`` ``(cells, dim)`` at cells ``coords``, or ``(lines, line, dim)`` whose lines
            start at ``coords``: each group per cell, or per line along it (one broadcast copy)."""
            for table, axis, lo, columns in groups:
                at = run_index(coords[axis], lo, self.cell_axes[axis])
                if rows.ndim == 2:
                    values = table[at]
                else:
                    values = table[:line] if axis == fast else table[at, None]
                rows[..., columns] = values

        def block(a: int, b: int) -> None:
            c0, c1 = max(r0 + a - self.prefix, 0), r0 + b - self.prefix  # the block's grid cells
            ends, lines = split_lines(c0, c1, line)
            for e0, e1 in ends:  # partial lines: cell by cell
                place(out[e0 + self.prefix - r0 : e1 + self.prefix - r0], self._coordinates_of(np.arange(e0, e1)))
            if lines:  # whole lines: the fast axis's values the same in each, the others' along it
                rows = out[lines.start * line + self.prefix - r0 : lines.stop * line + self.prefix - r0]
                place(rows.reshape(len(lines), line, self.dim), self._coordinates_of(np.array(lines) * line))

        run_blocks(block, line_blocks(r0, r1, self.prefix, line, self.dim))
        return out

    def _column_groups(self, c0: int, c1: int) -> list[tuple[np.ndarray, int, int, slice]]:
        """The groups of columns of cells ``[c0, c1)``: each one's values per coordinate of its
        axis, the axis, the first coordinate its rows hold, and the columns it fills (tatp's last
        group cut at the width; loftr's every fourth pair).  Row ``j`` of an axis's values is coordinate
        ``(lo + j) mod size``: a small axis has all its coordinates (``lo = 0``, kept between
        calls by :func:`kept_axis_table`), a large one those the cells touch, so that a block of
        a long grid costs its own cells' sines, not the axis's."""
        made: dict[tuple[int, bytes, int, int], tuple[np.ndarray, np.ndarray]] = {}
        tables, starts = [], []
        for axis, (size, stride) in enumerate(zip(self.cell_axes, self._strides(), strict=True)):
            q, coords = self.axis_frequencies(axis), self.coordinates(axis)
            small = size * q <= KEPT_PAIRS
            lo, count = (0, size) if small else axis_run(c0, c1, size, stride)
            # A square grid's axes have the same coordinates and frequencies: one table serves both.
            key = (q, coords.tobytes(), lo, count)
            if key not in made:
                args = (self.base, self.compute, self.dtype, q, self.spacing(q), self.frequency_form)
                run = coords[(lo + np.arange(count)) % size]
                made[key] = kept_axis_table(*args, key[1]) if small else axis_table(*args, run)
            tables.append(made[key])
            starts.append(lo)
        return self._arranged(tables, starts)

    def _arranged(
        self, tables: list[tuple[np.ndarray, np.ndarray]], starts: list[int]
    ) -> list[tuple[np.ndarray, int, int, slice]]:
        """Each axis's ``(sin, cos)`` values (its coordinates × its frequencies) as the order puts
        them in columns: the groups of :meth:`_column_groups` (the one place the orders' column
        layouts are written)."""
        if self.order in ("tatp", "loftr"):  # sin and cos interleaved: axis after axis, or in turn (loftr: x first)
            groups = []
            for axis, (s, c) in enumerate(tables):
                both = np.empty((len(s), 2 * self.per_axis), dtype=s.dtype)
                both[:, 0::2], both[:, 1::2] = s, c
                if self.order == "loftr":  # columns 4k, 4k + 1 (x) and 4k + 2, 4k + 3 (y)
                    for half in (0, 1):
                        groups.append((both[:, half::2], axis, starts[axis], slice(2 - 2 * axis + half, None, 4)))
                    continue
                start = axis * both.shape[1]
                width = max(0, min(both.shape[1], self.dim - start))
                if width:
                    groups.append((both[:, :width], axis, starts[axis], slice(start, start + width)))
            return groups
        if self.order == "cogvideox":  # axes (t, h, w)
            (s_t, c_t), (s_h, c_h), (s_w, c_w) = tables
            listed_ = [(s_t, 0), (c_t, 0), (s_w, 2), (c_w, 2), (s_h, 1), (c_h, 1)]
        elif self._six_blocks:  # axes (t, h, w), the fastest first
            (s_t, c_t), (s_h, c_h), (s_w, c_w) = tables
            listed_ = [(s_w, 2), (c_w, 2), (s_h, 1), (c_h, 1), (s_t, 0), (c_t, 0)]
        else:
            (s_h, c_h), (s_w, c_w) = tables  # axes (h, w)
            listed_ = {
                "mae": [(s_w, 1), (c_w, 1), (s_h, 0), (c_h, 0)],
                "timm": [(s_h, 0), (s_w, 1), (c_h, 0), (c_w, 1)],
                "timm-interleave": [(s_h, 0), (c_h, 0), (s_w, 1), (c_w, 1)],
                "timm-reverse": [(s_w, 1), (s_h, 0), (c_w, 1), (c_h, 0)],
                "timm-reverse-interleave": [(s_w, 1), (c_w, 1), (s_h, 0), (c_h, 0)],
            }[self.order]
        widths = np.cumsum([0] + [t.shape[1] for t, _ in listed_])
        return [
            (table, axis, starts[axis], slice(int(a), int(b)))
            for (table, axis), a, b in zip(listed_, widths[:-1], widths[1:], strict=True)
        ]

    def _strides(self) -> tuple[int, ...]:
        """Each axis's stride in the order's row order: the cells between its coordinates' rows."""
        sizes = self.cell_axes
        if self.order.startswith("timm-reverse"):  # w-major rows: h runs fastest
            return (1, sizes[0])
        return tuple(math.prod(sizes[a + 1 :]) for a in range(len(sizes)))

    def _coordinates_of(self, cells: np.ndarray) -> tuple[np.ndarray, ...]:
        """Each cell's coordinate along every axis of :meth:`_column_groups`."""
        if self.order in ("tatp", "cogvideox") or self._six_blocks:
            return np.unravel_index(cells, self.cell_axes)
        height, width = self.axes
        if self.order.startswith("timm-reverse"):  # w-major rows
            w, h = np.divmod(cells, height)
        else:
            h, w = np.divmod(cells, width)
        return h, w

    def columns_at(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray | None:
        """Rows × columns from those columns' own axis sinusoids alone: each axis's coordinates of
        the rows' cells and the columns' frequencies (:func:`axis_table` computes each value on
        its own: the bits :meth:`rows` gives).  Which axis, frequency and function a column
        holds is read from :meth:`_arranged` itself, given codes ``2k`` (sin) and ``2k + 1`` (cos)."""
        check_row_range(self.shape[0], int(rows.min(initial=0)), int(rows.max(initial=-1)) + 1)
        out = np.zeros((rows.size, cols.size), dtype=numpy_dtype(self.dtype))  # the cls rows, 3-D mae's zero columns
        live = np.flatnonzero(rows >= self.prefix)
        if not live.size or not cols.size:
            return out
        cells = self._coordinates_of(rows[live] - self.prefix)
        codes = []
        for axis in range(len(self.cell_axes)):
            k = 2 * np.arange(self.axis_frequencies(axis))[None, :]
            codes.append((k, k + 1))
        for table, axis, _, columns in self._arranged(codes, [0] * len(codes)):
            start, stop, step = columns.indices(self.dim)
            inside = np.flatnonzero((cols >= start) & (cols < stop) & ((cols - start) % step == 0))
            if not inside.size:
                continue
            code = table[0, (cols[inside] - start) // step]
            ks, at = np.unique(code // 2, return_inverse=True)
            q = self.axis_frequencies(axis)
            coords = self.coordinates(axis)[cells[axis]]
            s, c = axis_table(self.base, self.compute, self.dtype, q, self.spacing(q), self.frequency_form, coords, ks)
            out[np.ix_(live, inside)] = np.where(code % 2 == 1, c[:, at], s[:, at])
        return out

    # -- the inverse -------------------------------------------------------------------------
    @classmethod
    def fit(cls, sample: Sample) -> Iterator[Recipe]:
        """Grids whose first cell, shape and temperature the table fits
        (:func:`pecli.kinds.sincos2d.fit.fitted`)."""
        from pecli.kinds.sincos2d.fit import fitted

        yield from fitted(cls, sample)

    @classmethod
    def sizes(cls, params: dict[str, Any], sample: Sample) -> Iterator[dict[str, Any]]:
        """The detected grid, the preset's own, or a square (cube) with the table's cells
        (:func:`pecli.kinds.sincos2d.fit.sized`)."""
        from pecli.kinds.sincos2d.fit import sized

        yield from sized(cls, params, sample)


def axis_table(
    base: float,
    compute: str,
    dtype: str,
    q: int,
    spacing: int,
    form: str,
    coords: np.ndarray,
    ks: Ids | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """sin and cos of ``c·ω_k``, ``ω_k = base^(−k/spacing)`` (``form`` ``exp-2k``: ``e^(−2k)``), for
    coordinates ``coords`` (float64) and ``k < q`` (``ks``: those frequencies alone), rounded to
    ``dtype`` (each value on its own: any subset of coordinates or frequencies gives the same
    values as the whole axis).  The float pipelines take the angle as ``form`` says
    (:attr:`Sincos2d.frequency_form`): ``c · (1 / base^e)``, DETR's ``c / base^e``, LoFTR's ``c ·
    exp(2k·(−ln base/(2·spacing)))`` or ``c · exp(−2k)``."""
    k = np.arange(q) if ks is None else np.asarray(ks)
    if compute == "exact":
        if form == "exp-2k":
            _, w_hi, w_lo = exp_frequencies_of(2, tuple(map(int, k)))
        else:
            _, w_hi, w_lo = frequencies(base, 1.0, tuple((int(j), spacing) for j in k))
        s, c = sincos(coords.astype(np.float64), w_hi, w_lo)
        return s.astype(dtype), c.astype(dtype)
    dt: Any = compute_dtype(compute)
    if form in ("exp", "exp-2k"):  # kornia: exp(arange(0, d/2, 2) * (-log(T) / (d/2))), each step in dt
        step = -1.0 if form == "exp-2k" else -math.log(base) / (2 * spacing)
        omega_: Any = rounded(np.exp, dt, (2 * k).astype(dt) * dt(step))
        s, c = sin_cos_rounded(coords.astype(dt)[:, None] * omega_[None, :], dt)
        return s.astype(dtype), c.astype(dtype)
    # timm/MAE/HF: omega = 1 / T^(k/q), angle = c·omega; vit-pytorch: arange(q) / (q − 1).
    e: Any = k.astype(dt) / dt(spacing)
    power: Any = rounded(np.power, dt, dt(base), e)
    if form == "divide":  # DETR: pos_x = x_embed / dim_t
        s, c = sin_cos_rounded(coords.astype(dt)[:, None] / power[None, :], dt)
        return s.astype(dtype), c.astype(dtype)
    omega: Any = dt(1) / power
    s, c = sin_cos_rounded(coords.astype(dt)[:, None] * omega[None, :], dt)
    return s.astype(dtype), c.astype(dtype)


#: An axis of at most this many (coordinate, frequency) pairs has its whole table built once and
#: kept (:func:`kept_axis_table`; 1 MB of float32): the blocks of a streamed grid reuse it.
KEPT_PAIRS = 1 << 17


@lru_cache(maxsize=8)
def kept_axis_table(
    base: float, compute: str, dtype: str, q: int, spacing: int, form: str, coords: bytes
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`axis_table` of a small axis's every coordinate (``coords``: their float64 bytes),
    kept for the next call, read-only."""
    s, c = axis_table(base, compute, dtype, q, spacing, form, np.frombuffer(coords, dtype=np.float64))
    s.flags.writeable = c.flags.writeable = False
    return s, c


__all__ = ["KEPT_PAIRS", "Compute", "DType", "Freq", "Order", "Sincos2d", "axis_table", "kept_axis_table"]
