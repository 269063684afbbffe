"""The sincos2d kind: 2-D (and 3-D) grid tables, one row per grid cell, per-axis sinusoids side by side.

The tables of MAE (``get_2d_sincos_pos_embed``), timm (``build_sincos2d_pos_embed``), MoCo v3,
HF ViTMAE, positional-encodings 2D/3D and diffusers (SD3, PixArt, DiT, CogVideoX).  This module builds any row range
(:meth:`Sincos2d.rows`) and recognises a grid in a table's rows (:meth:`Sincos2d.fit`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast, get_args

import numpy as np

from pecli.dtypes import DType
from pecli.errors import RecipeError
from pecli.fitting import Sample, round_number
from pecli.kernels.exact import axis_run, frequencies, line_blocks, run_index, sincos, split_lines
from pecli.kernels.pipelines import compute_dtype, rounded, sin_cos_rounded
from pecli.kernels.threads import run_blocks
from pecli.kinds.base import Recipe, check_row_range, listed
from pecli.params import choice, flag, int_param, positive_float

if TYPE_CHECKING:
    from pecli.dtypes import Arr, Ids

Compute = Literal["exact", "float64", "float32"]
Order = Literal["mae", "timm", "timm-interleave", "timm-reverse", "timm-reverse-interleave", "tatp", "cogvideox"]
#: The frequency rule of each axis's ``q`` frequencies: ``base^(−k/q)`` (the paper's ``2i/d`` over an
#: axis's ``2q`` columns: MAE, timm, diffusers) or ``base^(−k/(q−1))`` (tensor2tensor's rule, which
#: vit-pytorch's ``posemb_sincos_2d``/``_3d`` use: the slowest frequency is ``1/base`` itself).
Freq = Literal["paper", "t2t"]
#: The orders of 3-D grids (tatp and mae also take 2-D ones, cogvideox one frame).
_ORDERS_3D = ("tatp", "cogvideox", "mae")

#: |value − cell-0 value| above this means an axis coordinate changed (sin 1 ≈ 0.84 at ω_0 = 1).
_CHANGED = 1e-3
#: How far down a grid's width is looked for, and the rows read per step while looking.
MAX_GRID_SCAN = 1 << 16
_SCAN_BLOCK = 256


@dataclass(frozen=True, slots=True)
class Sincos2d(Recipe):
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

    kind: ClassVar[str] = "sincos2d"
    core: ClassVar[tuple[str, ...]] = ("grid", "dim", "base", "order", "dtype")
    required: ClassVar[tuple[str, ...]] = ("grid", "dim")
    example: ClassVar[str] = "--grid 14x14 --dim 768"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "grid", listed(self.grid, "x"))  # (14, 14) from a script: "14x14"
        set_(self, "dim", int_param("dim", self.dim, 1, "give the embedding width, e.g. --dim 768"))
        set_(self, "base", positive_float("base", self.base, "the temperature, usually 10000", not_one=True))
        for name, literal in (("order", Order), ("dtype", DType), ("compute", Compute), ("freq", Freq)):
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
        if len(axes) == 3 and self.order not in _ORDERS_3D:
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
        if self.freq == "t2t" and self.per_axis < 2:
            raise RecipeError(
                f"freq=t2t spaces an axis's frequencies by 1/(q−1), but dim {self.dim} gives q = {self.per_axis}: "
                "give a wider --dim or freq=paper"
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

    def value_words(self, name: str, value: Any) -> str:
        """The frequency rule with its exponents: ``t2t, ω_k = base^(−k/63)``."""
        if name == "freq" and value in get_args(Freq):
            q = self.per_axis
            return f"{value}, ω_k = base^(−k/{q - 1 if value == 't2t' else q})"
        return Recipe.value_words(self, name, value)

    # -- facts -------------------------------------------------------------------------------
    def omega(self) -> np.ndarray:
        """``ω_k = base^(−k/q)`` (``freq=t2t``: ``k/(q−1)``) of each axis's ``q`` frequencies, float64
        (correctly rounded)."""
        q = self.per_axis
        return frequencies(self.base, 1.0, tuple((k, self.spacing(q)) for k in range(q)))[0]

    def wavelengths(self) -> np.ndarray:
        """``2π/ω`` of each column's axis sinusoid, in units of that axis's coordinate."""
        q = self.per_axis
        if self.order == "cogvideox":
            q_t = self.axis_frequencies(0)
            omega_t = frequencies(self.base, 1.0, tuple((k, self.spacing(q_t)) for k in range(q_t)))[0]
            spatial = 2 * math.pi / self.omega()[np.arange(self.dim - 2 * q_t) % q]
            return np.concatenate([2 * math.pi / omega_t[np.arange(2 * q_t) % q_t], spatial])
        # tatp: 2q interleaved columns per axis (sin, cos of ω_0, then ω_1, …); the other orders:
        # four blocks of q columns, each running through ω_0..ω_{q−1}.
        index = (np.arange(self.dim) % (2 * q)) // 2 if self.order == "tatp" else np.arange(self.dim) % q
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
            column = 0
            for table, axis, lo in groups:
                width = min(table.shape[1], self.dim - column)
                if width > 0:
                    at = run_index(coords[axis], lo, self.cell_axes[axis])
                    if rows.ndim == 2:
                        values = table[at, :width]
                    else:
                        values = table[:line, :width] if axis == fast else table[at, None, :width]
                    rows[..., column : column + width] = values
                column += table.shape[1]

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

    def _column_groups(self, c0: int, c1: int) -> list[tuple[np.ndarray, int, int]]:
        """The groups of columns of cells ``[c0, c1)``, left to right: each one's values per
        coordinate of its axis, the axis, and the first coordinate its rows hold (tatp's last
        group may overhang the width).  Row ``j`` of an axis's values is coordinate
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
                args = (self.base, self.compute, self.dtype, q, self.spacing(q))
                run = coords[(lo + np.arange(count)) % size]
                made[key] = kept_axis_table(*args, key[1]) if small else axis_table(*args, run)
            tables.append(made[key])
            starts.append(lo)
        if self.order == "tatp":  # sin and cos interleaved, axis after axis
            groups = []
            for axis, (s, c) in enumerate(tables):
                both = np.empty((len(s), 2 * self.per_axis), dtype=self.dtype)
                both[:, 0::2], both[:, 1::2] = s, c
                groups.append((both, axis, starts[axis]))
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
        return [(table, axis, starts[axis]) for table, axis in listed_]

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

    # -- the inverse -------------------------------------------------------------------------
    @classmethod
    def fit(cls, sample: Sample) -> Iterator[Recipe]:
        """Grids whose first cell, shape and temperature the table fits.

        For each order, a tiny probe table built here says which columns belong to which axis and
        which are sin or cos; the table's first cell must be the probe's (sin 0 = 0, cos 0 = 1); how
        many rows each axis's columns stay at that value gives the grid (the inner axis changes at
        once, the outer one after a whole row of the grid); a zero row 0 is a class token, more
        zero rows diffusers' ``extra_tokens``; the angles of the second cell give the temperature.
        """
        d = sample.d
        zeros = _leading_zero_rows(sample)
        for order, naxes, prefix in itertools.product(
            get_args(Order), (2, 3), dict.fromkeys((0, min(zeros, 1), zeros))
        ):
            if (naxes == 3 and order not in _ORDERS_3D) or (naxes == 2 and order == "cogvideox"):
                continue  # (cogvideox's one frame is a 3-D grid of one frame)
            layout = grid_layout(order, d, naxes)
            grid = detect_grid(sample, layout, prefix) if layout is not None else None
            if layout is None or grid is None:
                continue
            text = "x".join(map(str, grid[1:] if order == "cogvideox" and grid[0] == 1 else grid))
            after = {0: "", 1: " after a zero class row"}.get(prefix, f" after {prefix} zero rows (extra tokens)")
            clue = f"the rows form a {text} grid in the {order} order{after}"
            # The second cell is one step along the innermost axis: its angles are ω_k themselves.
            sin, cos = layout.axes[-1]
            second = sample.rows(prefix + 1, prefix + 2)[0]
            omega = np.arctan2(second[sin], second[cos])
            # The fastest column's ω is 1, so its angle is the coordinate step: 1, or diffusers'
            # base_size / (m · interpolation_scale) for an axis of m cells.
            step = float(omega[0]) if omega.size else 1.0
            scaled = omega.size > 0 and 0 < step < 3 and abs(step - 1) > 1e-3  # beyond π the angle wraps
            measured = omega / step if scaled else omega
            m = grid[layout.recipe_axis[-1]]
            coordinates = _coordinate_scales(step, m) if scaled else [{}]
            for (freq, base), compute, scales in itertools.product(
                _rule_bases(sample, measured, layout.per_axis), get_args(Compute), coordinates
            ):
                try:
                    dtype = cast(DType, sample.dtype)
                    recipe = Sincos2d(
                        text, d, base, order, prefix > 0, dtype, compute, **scales, extra_tokens=prefix, freq=freq
                    )
                except RecipeError:
                    continue
                words = [f"its second cell's angles fit base {base:g}"] if base != 10000 else []
                words += ["its frequencies spaced by 1/(q−1) (freq=t2t)"] if freq == "t2t" else []
                words += (
                    [f"coordinates step by {step:.6g} ({', '.join(f'{k} {v:g}' for k, v in scales.items())})"]
                    if scales
                    else []
                )
                sample.clue("; ".join([clue, *words]), recipe)
                yield recipe

    @classmethod
    def sizes(cls, params: dict[str, Any], sample: Sample) -> Iterator[dict[str, Any]]:
        """The detected grid, the preset's own, or a square (cube) with the table's cells; after the
        preset's zero rows, or after the table's own when it starts with two or more (diffusers'
        ``extra_tokens`` in front of a preset's grid)."""
        default = str(params.get("grid", ""))
        naxes = default.count("x") + 1 if default else 2
        own = int(params.get("extra_tokens") or bool(params.get("cls", False)))
        zeros = _leading_zero_rows(sample)
        layout = grid_layout(str(params.get("order", "mae")), sample.d, naxes)
        for prefix in dict.fromkeys([own, *([zeros] if zeros >= 2 else [])]):
            cells = sample.n - prefix
            grids: list[str] = []
            found = detect_grid(sample, layout, prefix) if layout is not None else None
            if found is not None:
                grids.append("x".join(map(str, found)))
            if default and math.prod(int(s) for s in default.split("x")) == cells:
                grids.append(default)
            side = round(cells ** (1 / naxes)) if cells > 0 else 0
            if side >= 1 and side**naxes == cells:
                grids.append("x".join([str(side)] * naxes))
            extra = {} if prefix == own else {"cls": True, "extra_tokens": prefix}
            for g in dict.fromkeys(grids):
                yield {"grid": g, "dim": sample.d, "dtype": sample.dtype, **extra}


def _rule_bases(sample: Sample, omega: Arr, q: int) -> list[tuple[Freq, float]]:
    """The frequency rules and bases the measured ``ω_k`` of an axis of ``q`` fit: the paper's
    ``k/q`` with 10000 and the roundest base that predicts them; tensor2tensor's ``k/(q−1)``
    (vit-pytorch) only with a base of at most 4 significant digits (an MAE table fits it too, with
    10000^((q−1)/q)), or with 10000 where one frequency alone was measured."""
    fitted = sample.fit_round_base(omega, np.arange(omega.size) / q, sample.angle_tolerance(1.0), 1.0)
    out: list[tuple[Freq, float]] = [("paper", b) for b in sorted({10000.0} | ({fitted[0]} if fitted else set()))]
    if q >= 2 and omega.size < 2:  # one frequency measured (a narrow table): no rule to tell, both tried
        out.append(("t2t", 10000.0))
    elif q >= 2:
        spaced = sample.fit_round_base(omega, np.arange(omega.size) / (q - 1), sample.angle_tolerance(1.0), 1.0)
        if spaced is not None and spaced[1] <= 4:
            out.append(("t2t", spaced[0]))
    return out


#: diffusers' base_size values tried (a sample size over a patch size), beside the axis's own size.
_BASE_SIZES = (16, 32, 64, 96, 128, 192, 256)


def axis_table(
    base: float, compute: str, dtype: str, q: int, spacing: int, coords: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """sin and cos of ``c·ω_k``, ``ω_k = base^(−k/spacing)``, for coordinates ``coords`` (float64)
    and ``k < q``, rounded to ``dtype`` (each value on its own: any subset of coordinates gives the
    same values as the whole axis)."""
    if compute == "exact":
        _, w_hi, w_lo = frequencies(base, 1.0, tuple((k, spacing) for k in range(q)))
        s, c = sincos(coords.astype(np.float64), w_hi, w_lo)
        return s.astype(dtype), c.astype(dtype)
    dt: Any = compute_dtype(compute)
    # timm/MAE/HF: omega = 1 / T^(k/q), angle = c·omega; vit-pytorch: arange(q) / (q − 1).
    e: Any = np.arange(q, dtype=dt) / dt(spacing)
    omega: Any = dt(1) / rounded(np.power, dt, dt(base), e)
    s, c = sin_cos_rounded(coords.astype(dt)[:, None] * omega[None, :], dt)
    return s.astype(dtype), c.astype(dtype)


#: An axis of at most this many (coordinate, frequency) pairs has its whole table built once and
#: kept (:func:`kept_axis_table`; 1 MB of float32): the blocks of a streamed grid reuse it.
KEPT_PAIRS = 1 << 17


@lru_cache(maxsize=8)
def kept_axis_table(
    base: float, compute: str, dtype: str, q: int, spacing: int, coords: bytes
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`axis_table` of a small axis's every coordinate (``coords``: their float64 bytes),
    kept for the next call, read-only."""
    s, c = axis_table(base, compute, dtype, q, spacing, np.frombuffer(coords, dtype=np.float64))
    s.flags.writeable = c.flags.writeable = False
    return s, c


def _coordinate_scales(step: float, m: int) -> list[dict[str, Any]]:
    """``interpolation_scale`` and ``base_size`` that make diffusers' coordinate step
    ``base_size / (m · interpolation_scale)`` (or ``1 / interpolation_scale`` without a base size)
    equal ``step``, for a round scale (to 3 significant digits)."""
    out: list[dict[str, Any]] = []
    for base_size in (None, m, *_BASE_SIZES):
        scale = (base_size / m if base_size else 1.0) / step
        nice = round_number(scale, 3)
        if nice > 0 and abs(scale - nice) <= 1e-4 * nice and (base_size or nice != 1):
            params: dict[str, Any] = {"interpolation_scale": nice}
            if base_size:
                params["base_size"] = base_size
            if params not in out:
                out.append(params)
    return out


@dataclass(frozen=True)
class GridLayout:
    """Where each axis of an order lives: ``axes[a]`` is the ``(sin, cos)`` columns of the a-th
    axis in row-major order (outermost first), ``recipe_axis[a]`` that axis's place in ``grid``."""

    order: str
    cell0: Arr
    axes: tuple[tuple[Ids, Ids], ...]
    recipe_axis: tuple[int, ...]
    per_axis: int
    #: Every column of each axis (a truncated table can leave a sin without its cos).
    columns: tuple[Ids, ...]


_PROBE = {2: (3, 5), 3: (2, 3, 5)}


@lru_cache(maxsize=64)
def grid_layout(order: str, d: int, naxes: int) -> GridLayout | None:
    """Learn an order's layout from a small table built here (so new orders need no fitting code):
    each column must be a function of one grid coordinate for one row-major arrangement.  The probe
    is built in the float64 pipeline: which coordinate a column follows does not need the exact
    values, whose frequencies cost a Decimal power each (3 s for a 300,000-wide table)."""
    sizes = _PROBE[naxes]
    try:
        probe = Sincos2d("x".join(map(str, sizes)), d, order=order, dtype="float64", compute="float64")  # type: ignore[arg-type]
    except RecipeError:
        return None
    rows = probe.rows(0, probe.shape[0])
    cells = np.arange(rows.shape[0])
    for perm in itertools.permutations(range(naxes)):
        coords = np.unravel_index(cells, tuple(sizes[a] for a in perm))
        owner = np.full(d, -1)
        for a, c in enumerate(coords):
            # Column j depends on coordinate c only if rows with the same c hold the same value.
            first = np.array([int(np.flatnonzero(c == v)[0]) for v in range(int(c.max()) + 1)])
            same = np.all(rows == rows[first[c]], axis=0)
            owner[same & (owner == -1)] = a
        # Every column explained, and every axis seen in some column (a truncated table can drop one).
        if np.all(owner >= 0) and set(owner.tolist()) == set(range(naxes)):
            axes = []
            columns = tuple(np.flatnonzero(owner == a) for a in range(naxes))
            for cols in columns:
                sin = cols[np.abs(rows[0, cols]) < 0.5]
                cos = cols[np.abs(rows[0, cols]) >= 0.5]
                k = min(sin.size, cos.size)
                axes.append((sin[:k], cos[:k]))
            return GridLayout(order, rows[0], tuple(axes), tuple(perm), probe.per_axis, columns)
    return None


def _first_change(sample: Sample, first_row: int, cols: Ids, cell0: Arr, limit: int) -> int:
    """Cells after the first before the values in ``cols`` move away from the first cell's."""
    n = min(sample.n, first_row + limit)
    r = first_row + 1
    while r < n:
        # The sample's head first (already read), then blocks read from the table.
        stop = min(n, sample.head_rows if r < sample.head_rows else r + _SCAN_BLOCK)
        block = sample.rows(r, stop)[:, cols]
        moved = np.flatnonzero(np.max(np.abs(block - cell0[cols]), axis=1) > _CHANGED)
        if moved.size:
            return r + int(moved[0]) - first_row
        r = stop
    return n - first_row


def _leading_zero_rows(sample: Sample) -> int:
    """How many all-zero rows the table starts with (a class token, diffusers' extra tokens)."""
    return next((k for k in range(sample.n) if k not in sample.zero_rows), sample.n)


def detect_grid(sample: Sample, layout: GridLayout, prefix: int) -> tuple[int, ...] | None:
    """The grid (in the recipe's axis order) after ``prefix`` zero rows if the table is this
    layout's, else ``None``."""
    return sample.memo(("grid", layout.order, len(layout.axes), prefix), lambda: _detect(sample, layout, prefix))


def _detect(sample: Sample, layout: GridLayout, prefix: int) -> tuple[int, ...] | None:
    cells = sample.n - prefix
    first = sample.rows(prefix, prefix + 1)[0] if cells > 0 else None
    if first is None or np.max(np.abs(first - layout.cell0)) > _CHANGED:
        return None
    runs = [_first_change(sample, prefix, cols, layout.cell0, MAX_GRID_SCAN) for cols in layout.columns]
    divides = all(runs[a - 1] % runs[a] == 0 for a in range(1, len(runs))) and cells % runs[0] == 0
    sizes = [cells // runs[0]] + [runs[a - 1] // runs[a] for a in range(1, len(runs))]
    # CogVideoX's one frame (``HxW``: a time axis of 1) is the only axis that may not move.
    one_frame = layout.order == "cogvideox" and sizes[0] == 1
    if not (divides and runs[-1] == 1 and min(sizes[1:] if one_frame else sizes) >= 2):
        return None
    ordered = [0] * len(sizes)
    for a, size in enumerate(sizes):
        ordered[layout.recipe_axis[a]] = size
    return tuple(ordered)


__all__ = ["Compute", "DType", "Freq", "GridLayout", "Order", "Sincos2d", "detect_grid", "grid_layout"]
