"""The xpos kind: the length-extrapolatable scales of xPos (Sun et al. 2022, "A Length-Extrapolatable
Transformer"), which multiply rotary queries and divide keys.

``ζ_i = (2i + 0.4·d) / (1.4·d)`` for the ``d/2`` rotary frequencies, and position ``p`` of a
sequence of ``n`` scales frequency ``i`` by ``ζ_i^((p − ⌊n/2⌋)/B)``, ``B`` the scale base (512):
rotary-embedding-torch's ``RotaryEmbedding(use_xpos=True)`` (``get_scale``, as
``rotate_queries_and_keys`` calls it), each value repeated for the pair of dims it rotates
(``layout="pairs"``), or the ``d/2`` values written twice, ``[ζ…, ζ…]`` (``layout="half"``: lucidrains'
PaLM-rlhf-pytorch, ``torch.cat((scale, scale), dim = -1)`` beside a ``rotate_half`` rotary cache).
Queries are multiplied by the ``q`` table, keys by its inverse (``k``).  torchscale's ``XPOS``
(Microsoft's own, the paper's code) keeps no scale table: it multiplies its rotary cos and sin
tables by the scale, ``duplicate_interleave(cos · scale)`` (``rotary="cos"``/``"sin"``), and centres
the powers on ``⌈n/2⌉`` (``center="ceil"``: ``min_pos = −(length + offset) // 2``).  This module builds
any row range (:meth:`Xpos.rows`) and fits a table back to its length, width, base, part, centre
and rotary factor (:meth:`Xpos.fit`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, get_args

import numpy as np

from pecli.dtypes import DType
from pecli.errors import RecipeError
from pecli.fitting import Sample
from pecli.kernels.exact import row_blocks
from pecli.kernels.pipelines import f32, pow32, rounded32
from pecli.kernels.threads import run_blocks
from pecli.params import choice, int_param, positive_float, round_number
from pecli.recipe import Pipelined, Recipe
from pecli.resources import check_row_range

XposPart = Literal["q", "k"]
XposCompute = Literal["float32", "float64"]
XposLayout = Literal["pairs", "half"]
#: The rotary factor a table carries besides the scale: none (the scale alone), or torchscale's
#: cos or sin of ``p·10000^(−2i/d)`` times it.
XposRotary = Literal["none", "cos", "sin"]
#: The row whose power is 0: ``⌊n/2⌋`` (rotary-embedding-torch, ``t − seq_len // 2``) or ``⌈n/2⌉``
#: (torchscale, ``−(length + offset) // 2`` in Python's floor division).
XposCenter = Literal["floor", "ceil"]


@dataclass(frozen=True, slots=True)
class Xpos(Pipelined):
    """xPos scales: row ``r`` is position ``r`` of a sequence of ``length``, ``dim`` columns
    (``ζ_i`` to the power ``(r − ⌊length/2⌋)/scale_base``, each repeated for its pair of dims).

    ``part``: ``q`` (the queries' scale) or ``k`` (the keys', its inverse).  ``compute``:
    ``float32`` is rotary-embedding-torch's pipeline (``ζ`` and the power in float32, the power
    function rounded once to float32); ``float64`` the same formula in float64 (within a few
    float64 ulps of the real value: ``ζ``, the power and ``pow`` each round once).  ``layout``:
    ``pairs`` repeats each value for the pair of dims it scales, ``[ζ0, ζ0, ζ1, ζ1, …]``
    (rotary-embedding-torch, x-transformers: a ``rotate_every_two`` cache); ``half`` writes the
    ``dim/2`` values twice, ``[ζ0 … ζ_{h−1}, ζ0 … ζ_{h−1}]`` (PaLM-rlhf-pytorch: a ``rotate_half``
    cache).  The values are the same; a port that pairs one layout's scales with the other's rotation
    scales each dim by another frequency's ζ.  ``rotary``: ``cos`` or ``sin`` multiplies each value by
    the rotary ``cos``/``sin`` of ``r·10000^(−2i/dim)`` (torchscale 0.3's ``XPOS``: its
    ``fixed_pos_embedding`` in float32, then ``t * scale``).  ``center``: the row whose scale is 1,
    ``⌊length/2⌋`` (``floor``) or ``⌈length/2⌉`` (``ceil``, torchscale); they differ for an odd length.
    """

    length: int
    dim: int
    scale_base: float = 512.0
    part: XposPart = "q"
    compute: XposCompute = "float32"
    dtype: DType = "float32"
    layout: XposLayout = "pairs"
    rotary: XposRotary = "none"
    center: XposCenter = "floor"

    kind: ClassVar[str] = "xpos"
    #: ``--layout half`` alone is rope's: xPos is implied by its own ``--scale-base`` or ``--part q/k``.
    implied_by_shared: ClassVar[bool] = False
    core: ClassVar[tuple[str, ...]] = ("length", "dim", "scale_base", "part", "dtype")
    example: ClassVar[str] = "--kind xpos --len 512 --dim 64"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "length", int_param("length", self.length, 1, "give the sequence length, e.g. --len 512"))
        set_(self, "dim", int_param("dim", self.dim, 2, "give the rotary dim, e.g. --dim 64"))
        hint = "rotary-embedding-torch's default is --scale-base 512"
        set_(self, "scale_base", positive_float("scale_base", self.scale_base, hint))
        for name, literal in (
            ("part", XposPart),
            ("compute", XposCompute),
            ("dtype", DType),
            ("layout", XposLayout),
            ("rotary", XposRotary),
            ("center", XposCenter),
        ):
            choice(name, getattr(self, name), get_args(literal))
        if self.length % 2 == 0:  # both centres are length/2: one recipe per table
            set_(self, "center", "floor")
        if self.dim % 2:
            raise RecipeError(
                f"dim {self.dim} is odd, but xPos scales pairs of rotary dims: use an even --dim, e.g. {self.dim + 1}"
            )
        if self.length > 2**24:
            raise RecipeError(f"length must be at most 2**24 (float32 positions), got {self.length}")
        # The scales run from ζ_0^(−p) to ζ_0^(+p), p the largest |t − len//2| / B: beyond the
        # output type's range they would be written as inf (a table that says nothing).
        from pecli.dtypes import DTYPES

        reach = max(self.middle, self.length - 1 - self.middle) / self.scale_base
        exponent = reach * math.log(1.4 / 0.4)
        largest = DTYPES[self.dtype].max  # and float32's, where the pipeline computes in float32
        ceiling = math.log(min(largest, float(np.finfo(f32).max)) if self.compute == "float32" else largest)
        if exponent >= ceiling:
            least = math.ceil(reach * self.scale_base * math.log(1.4 / 0.4) / ceiling)
            raise RecipeError(
                f"scale_base {self.scale_base:g} over {self.length} positions makes the scales overflow "
                f"{self.dtype} (ζ_0^{reach:.4g} ≈ e^{exponent:.4g}): use --scale-base {least} or more "
                "(rotary-embedding-torch's default is 512), or a shorter --len"
            )

    @property
    def shape(self) -> tuple[int, int]:
        return (self.length, self.dim)

    @property
    def middle(self) -> int:
        """The row whose power is 0 (``center``)."""
        return (self.length + 1) // 2 if self.center == "ceil" else self.length // 2

    def rotary_factor(self, t: np.ndarray) -> np.ndarray:
        """torchscale's ``fixed_pos_embedding`` cos or sin at rows ``t``, ``(len(t), dim/2)``: float32 as it
        computes them (``1.0 / 10000 ** (arange(h) / h)``, the product and sin/cos each rounded once),
        or float64."""
        h = self.dim // 2
        if self.compute == "float64":
            angle = t.astype(np.float64)[:, None] * 10000.0 ** (-np.arange(h) / h)[None, :]
            return np.cos(angle) if self.rotary == "cos" else np.sin(angle)
        inv = f32(1) / pow32(10000.0, np.arange(h).astype(f32) / f32(h))
        (values,) = rounded32(t.astype(f32)[:, None] * inv[None, :], (self.rotary,))
        return values

    def zeta(self) -> np.ndarray:
        """``ζ_i`` for the ``dim/2`` frequencies, as rotary-embedding-torch's float32 buffer or in float64."""
        i = np.arange(0, self.dim, 2)
        if self.compute == "float64":
            return (i + 0.4 * self.dim) / (1.4 * self.dim)
        # torch: (arange(0, dim, 2) + 0.4 * dim) / (1.4 * dim), the Python floats rounded to float32.
        return (i.astype(f32) + f32(0.4 * self.dim)) / f32(1.4 * self.dim)

    def rows(self, r0: int, r1: int) -> np.ndarray:
        """Rows ``[r0, r1)``, built directly (the power depends on the row alone)."""
        check_row_range(self.length, r0, r1)
        out = np.empty((r1 - r0, self.dim), dtype=self.dtype)
        zeta = self.zeta().astype(np.float64)
        sign = 1.0 if self.part == "q" else -1.0  # float64: the keys' scale is the inverse power
        center = self.middle

        def block(a: int, b: int) -> None:
            t = np.arange(r0 + a, r0 + b)
            if self.compute == "float64":
                power = (t - center) / self.scale_base
            else:  # (t − len(t)//2) / scale_base in float32, t a float32 arange
                power = ((t.astype(f32) - f32(center)) / f32(self.scale_base)).astype(np.float64)
            if self.compute == "float64":
                values = zeta[None, :] ** (sign * power[:, None])
            else:  # torch's float32 pow; keys take its float32 result to the power −1
                values = (zeta[None, :] ** power[:, None]).astype(f32)
                if self.part == "k":
                    values = (1.0 / values.astype(np.float64)).astype(f32)
            if self.rotary != "none":  # torchscale: cos (or sin) · scale, in the pipeline's dtype
                values = values * self.rotary_factor(t)
            for view in self._views(out[a:b]):
                view[...] = values

        run_blocks(block, row_blocks(r1 - r0, self.dim // 2))
        return out

    def _views(self, out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The two column views of ``out`` each holding the ``dim/2`` values once, in the layout's places."""
        h = self.dim // 2
        return (out[:, 0::2], out[:, 1::2]) if self.layout == "pairs" else (out[:, :h], out[:, h:])

    def paired_columns(self) -> bool:
        """pairs repeats each frequency's scale twice, side by side."""
        return self.layout == "pairs"

    def column_meaning(self, row: int) -> Any:
        zeta = self.zeta()
        power = (row - self.middle) / self.scale_base * (1 if self.part == "q" else -1)
        h = self.dim // 2

        def meaning(j: int) -> dict[str, Any]:
            i = j // 2 if self.layout == "pairs" else j % h
            out = {"i": i, "zeta": float(zeta[i]), "power": power}
            if self.rotary != "none":  # the scale times cos (or sin) of this angle
                out["angle"] = row * 10000.0 ** (-i / h)
            return out

        return meaning

    def max_position(self) -> float:
        return float(self.length)

    # -- the inverse -------------------------------------------------------------------------
    @classmethod
    def fit(cls, sample: Sample) -> Iterator[Recipe]:
        """Tables whose columns come in equal pairs (side by side, or a half apart) whose first column
        is ``ζ_0^(±(r − c)/B)`` (``ζ_0 = 0.4/1.4``, the furthest from 1), alone or times torchscale's
        rotary ``cos r`` or ``sin r`` (``ω_0 = 1``, divided out where it is at least 1/2): ``B`` and
        the part from the slope of its logarithm, the centre ``c`` from where it crosses 0."""
        n, d = sample.n, sample.d
        if d % 2:
            return
        rows = sample.rows(0, n) if n <= 4096 else None
        if rows is None or not np.all(np.isfinite(rows)):
            return
        h = d // 2
        views: tuple[tuple[XposLayout, np.ndarray, np.ndarray], ...] = (
            ("pairs", rows[:, 0::2], rows[:, 1::2]),
            ("half", rows[:, :h], rows[:, h:]),
        )
        layouts = [layout for layout, one, two in views if np.array_equal(one, two)]
        if not layouts:
            return
        t = np.arange(n, dtype=np.float64)
        factors = {"none": np.ones(n), "cos": np.cos(t), "sin": np.sin(t)}
        for rotary, factor in factors.items():
            kept = np.abs(factor) >= 0.5
            scale = rows[kept, 0].astype(np.float64) / factor[kept]
            if not kept.any() or not np.all(scale > 0) or (rotary == "none" and not np.all(rows > 0)):
                continue
            if kept.sum() > 2:
                slope, intercept = np.polyfit(t[kept], np.log(scale), 1)
            elif kept.sum() == 2:  # two rows: the line through them
                (r0, r1), (l0, l1) = t[kept], np.log(scale)
                slope = (l1 - l0) / (r1 - r0)
                intercept = l0 - slope * r0
            elif n == 1:  # one row (a decoding step): torchscale's ⌈1/2⌉ = 1 puts it at power −1/B
                slope, intercept = -float(np.log(scale[0])), float(np.log(scale[0]))
            else:
                continue
            if slope == 0:
                continue
            base = math.log(0.4 / 1.4) / slope
            part: XposPart = "q" if base > 0 else "k"
            # One row is measured to its dtype's rounding only: the common base is tried beside it.
            bases = dict.fromkeys([round_number(abs(base), 3), *([512.0] if n == 1 else [])])
            middle = -intercept / slope  # the row where the power is 0
            centers = [c for c, row in (("floor", n // 2), ("ceil", (n + 1) // 2)) if abs(middle - row) <= 0.5]
            factor_words = "" if rotary == "none" else f" times the rotary {rotary} r (torchscale)"
            for center, base in itertools.product(dict.fromkeys(centers), bases):
                row = (n + 1) // 2 if center == "ceil" else n // 2
                sample.clue(
                    f"the columns come in equal pairs of powers ζ_i^(±(r − {row})/B){factor_words}, 1 on row "
                    f"{row}: xPos scales, B = {base:g}"
                )
                for compute, layout in itertools.product(("float32", "float64"), layouts):
                    try:
                        yield cls(n, d, base, part, compute, sample.dtype, layout, rotary, center)  # type: ignore[arg-type]
                    except RecipeError:
                        continue


__all__ = ["Xpos", "XposCenter", "XposCompute", "XposLayout", "XposPart", "XposRotary"]
