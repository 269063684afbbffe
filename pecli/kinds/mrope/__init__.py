"""The mrope kind: the multimodal rotary cache of Qwen2-VL and Qwen2.5-VL (M-RoPE).

Wang et al. 2024, "Qwen2-VL" §2.1: every token has three position ids (temporal, height,
width); text tokens have three equal ones, the tokens of an image or video grid count along their
own axes.  transformers 5.23 builds the ids with ``Qwen2VLModel.get_rope_index`` (Qwen2.5-VL's
spaces video frames in time) and the cache with ``Qwen2VLRotaryEmbedding`` /
``Qwen2_5_VLRotaryEmbedding``: the rope ``inv_freq``, split by ``mrope_section`` into three
contiguous sections, section ``k`` taking its angles from id row ``k``, in rotate-half layout.
:mod:`pecli.kinds.mrope.ids` turns a description of the token sequence into those ids
(:func:`position_ids`) and back (:func:`sequence_of`); this module builds any row range
(:meth:`Mrope.rows`), the rows of ids given whole (:meth:`Mrope.rows_at`: ``--positions``) and
fits a table back to its sequence, θ and sections (:meth:`Mrope.fit`).

>>> position_ids("text=2;image=1x2x3;text=1").tolist()
[[0, 1, 2, 2, 2, 2, 2, 2, 5], [0, 1, 2, 2, 2, 3, 3, 3, 5], [0, 1, 2, 3, 4, 2, 3, 4, 5]]
>>> position_ids("video=3x1x1@25;text=1", tokens_per_second=2)[0].tolist()  # Qwen2.5-VL: 2 × 25 apart
[0, 50, 100, 1]
>>> sequence_of(position_ids("text=2;video=2x1x2;text=1"))
'text=2;video=2x1x2;text=1'
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal, get_args

import numpy as np

from pecli.dtypes import DTYPES, DType, round_to
from pecli.errors import RecipeError
from pecli.fitting import Sample
from pecli.kernels.exact import row_blocks, sincos, turns
from pecli.kernels.pipelines import f32, rotary32
from pecli.kernels.threads import run_blocks
from pecli.kinds.mrope.ids import AXES, Segment, plan, position_ids, segments, sequence_of
from pecli.kinds.rope import Rope
from pecli.params import choice, flag, int_param, optional_float, positive_float
from pecli.recipe import Pipelined, Recipe, listed
from pecli.resources import check_row_range

#: Ids of more tokens than this are not read back into a sequence (a Python pass over every id).
MAX_SEQUENCE_IDS = 1 << 20
MropePart = Literal["cos", "sin", "angle", "inv_freq", "ids"]
MropeCompute = Literal["float32", "exact"]


def section_list(name: str, value: object, half: int) -> str:
    """``mrope_section`` as ``"t;h;w"``: three whole numbers ≥ 1 summing to ``dim/2`` (given as
    ``"16;24;24"``, ``"16,24,24"``, ``"[16, 24, 24]"`` or a list)."""
    text = listed(value, ";")
    items = str(text).strip().strip("[]()").replace(",", ";").replace(" ", ";").split(";")
    try:
        sizes = [int(s) for s in items if s.strip()]
    except ValueError:
        sizes = []
    if not isinstance(text, str) or len(sizes) != 3 or min(sizes) < 1:
        raise RecipeError(
            f"{name} must be three whole numbers ≥ 1 (frequencies for temporal;height;width), like 16;24;24, "
            f"got {value!r}"
        )
    if sum(sizes) != half:
        a = max(1, half // 4)
        b = max(1, (half - a) // 2)
        raise RecipeError(
            f"{name} {';'.join(map(str, sizes))} covers {sum(sizes)} frequencies but a rotary dim of {2 * half} has "
            f"dim/2 = {half}: give sections summing to {half}, e.g. --mrope-section '{a};{b};{half - a - b}'"
        )
    return ";".join(map(str, sizes))


@dataclass(frozen=True, slots=True)
class Mrope(Pipelined):
    """Multimodal RoPE (Qwen2-VL, Qwen2.5-VL): row ``r`` is token ``r`` of ``sequence``.

    ``sequence``: segments ``text=N``, ``image=TxHxW`` and ``video=TxHxW[@S]`` in merged tokens
    (a raw ``image_grid_thw`` of ``[1, 16, 16]`` with ``spatial_merge_size`` 2 is ``image=1x8x8``).
    Position ids follow transformers 5.23's ``get_rope_index``: text counts on from the last
    segment; a grid's three ids start where the previous segment left off; the next segment starts
    ``max(H, W)`` later.  A video's frames are 1 position apart (Qwen2-VL), or with
    ``tokens_per_second`` (Qwen2.5-VL's vision config: 2) ``trunc(f·tokens_per_second·S)`` apart,
    ``S`` its ``second_per_grid_t`` (default 1).  ``mrope_section`` splits the ``dim/2``
    frequencies ``inv_freq_i = base^(−2i/dim)`` into temporal;height;width sections, each taking
    its angles from its own id.  ``part``: ``cos``/``sin`` (``dim`` columns, rotate-half layout, as
    the rotary class returns them), ``angle`` (``id·inv_freq``, same layout), ``inv_freq`` (one
    row).  ``compute``: ``float32`` is HF's pipeline; ``exact`` the same formula rounded once.  A
    text-only sequence gives the plain rope table.  ``mrope_interleaved``: Qwen3-VL's layout
    (``Qwen3VLTextRotaryEmbedding.apply_interleaved_mrope``): frequency ``j`` takes the height id
    when ``j ≡ 1 (mod 3)`` and ``j < 3·H``, the width id when ``j ≡ 2 (mod 3)`` and ``j < 3·W``,
    the temporal id otherwise (its sections ``24;20;20``), instead of three contiguous sections.
    """

    dim: int
    sequence: str
    base: float = 1000000.0
    mrope_section: str = "16;24;24"
    tokens_per_second: float | None = None
    part: MropePart = "cos"
    compute: MropeCompute = "float32"
    dtype: DType = "float32"
    mrope_interleaved: bool = False

    kind: ClassVar[str] = "mrope"
    row_label: ClassVar[str] = "token"
    core: ClassVar[tuple[str, ...]] = ("dim", "sequence", "base", "mrope_section", "part", "dtype")
    required: ClassVar[tuple[str, ...]] = ("dim", "sequence")
    example: ClassVar[str] = "--kind mrope --dim 128 --sequence text=16;image=1x8x8;text=8"
    ids_stand_in: ClassVar[dict[str, Any]] = {"sequence": "text=1"}  # --positions gives each token's ids

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "dim", int_param("dim", self.dim, 6, "give the head dim, e.g. --dim 128 (Qwen2-VL)"))
        if self.dim % 2:
            raise RecipeError(f"dim {self.dim} is odd, but rotary embeddings rotate pairs: use an even --dim, e.g. 128")
        set_(self, "base", positive_float("base", self.base, "rope_theta, e.g. --base 1000000", not_one=True))
        for name, literal in (("part", MropePart), ("compute", MropeCompute), ("dtype", DType)):
            choice(name, getattr(self, name), get_args(literal))
        set_(self, "mrope_section", section_list("mrope_section", self.mrope_section, self.dim // 2))
        set_(self, "mrope_interleaved", flag("mrope_interleaved", self.mrope_interleaved))
        if self.mrope_interleaved:
            t, h, w = map(int, self.mrope_section.split(";"))
            if 3 * max(h, w) - 1 > self.dim // 2 or t < max(h, w):
                raise RecipeError(
                    f"interleaved sections {self.mrope_section} do not fit dim/2 = {self.dim // 2} frequencies: the "
                    "height and width take every third one from the second and third, and the temporal at least as "
                    "many (Qwen3-VL: 24;20;20 of 64)"
                )
        tps = optional_float("tokens_per_second", self.tokens_per_second, "Qwen2.5-VL's is 2")
        set_(self, "tokens_per_second", tps)
        segs = segments(self.sequence, tps)
        set_(self, "sequence", ";".join(s.text() for s in segs))
        if max(s.last_position() for s in segs) >= 2**53:
            raise RecipeError("the sequence's positions must stay below 2**53: give fewer or smaller segments")
        if self.part == "ids":
            DTYPES[self.dtype].check_whole(max(s.last_position() for s in segs), "the position ids")

    @property
    def shape(self) -> tuple[int, int]:
        if self.part == "inv_freq":
            return (1, self.dim // 2)
        last = plan(self.sequence, self.tokens_per_second)[0][-1]
        return (last.first + last.tokens, 3 if self.part == "ids" else self.dim)

    def sections(self) -> list[tuple[int, int]]:
        """The frequency columns ``[a, b)`` of the temporal, height and width sections (chunked)."""
        return list(itertools.pairwise(itertools.accumulate(map(int, self.mrope_section.split(";")), initial=0)))

    def axes(self) -> np.ndarray:
        """The id (0 temporal, 1 height, 2 width) each of the ``dim/2`` frequencies takes its angle from."""
        sizes = list(map(int, self.mrope_section.split(";")))
        if not self.mrope_interleaved:
            return np.repeat(np.arange(3), sizes)
        axis, j = np.zeros(self.dim // 2, dtype=np.intp), np.arange(self.dim // 2)
        axis[(j % 3 == 1) & (j < 3 * sizes[1])] = 1
        axis[(j % 3 == 2) & (j < 3 * sizes[2])] = 2
        return axis

    def columns(self, k: int) -> slice | np.ndarray:
        """The frequencies of id ``k``: a slice when they are contiguous (chunked), else their indices."""
        cols = np.flatnonzero(self.axes() == k)
        if cols.size and np.array_equal(cols, np.arange(cols[0], cols[0] + cols.size)):
            return slice(int(cols[0]), int(cols[0]) + cols.size)
        return cols

    def inv_freq(self) -> np.ndarray:
        """The ``dim/2`` inverse frequencies: rope's (float32 as HF computes them, or float64)."""
        return Rope(1, self.dim, self.base, compute=self.compute).inv_freq()

    def rows(self, r0: int, r1: int) -> np.ndarray:
        """Rows ``[r0, r1)``: the tokens' ids come from the segments they fall in."""
        check_row_range(self.shape[0], r0, r1)
        if self.part == "inv_freq":
            return np.asarray(self.inv_freq()[None, :], dtype=self.dtype)[r0:r1]
        if self.part == "ids":  # get_rope_index's (3, tokens), one token per row
            return position_ids(self.sequence, r0, r1, self.tokens_per_second).T.astype(self.dtype)
        out = np.empty((r1 - r0, self.dim), dtype=self.dtype)
        pairs = self.shape[0] * (self.dim // 2)

        def block(a: int, b: int) -> None:
            self.fill(out[a:b], position_ids(self.sequence, r0 + a, r0 + b, self.tokens_per_second), pairs)

        run_blocks(block, row_blocks(r1 - r0, self.dim // 2))
        return out

    def rows_at(self, ids: np.ndarray) -> np.ndarray:
        """The rows of tokens whose (temporal, height, width) ids are the columns of ``ids``
        ``(3, m)``, whatever made them (padding, packed sequences, a model's own
        ``get_rope_index``): a token gets the row :meth:`rows` gives a token with the same ids."""
        ids = np.asarray(ids, dtype=np.int64)
        if self.part == "inv_freq" or ids.ndim != 2 or ids.shape[0] != 3:
            raise RecipeError(
                f"M-RoPE rows need 3 rows of position ids (temporal, height, width) and a cos, sin or angle part, "
                f"got ids of shape {ids.shape} for part {self.part}"
            )
        if self.part == "ids":  # the ids themselves, one token per row
            DTYPES[self.dtype].check_whole(float(ids.max(initial=0)), "the position ids")
            return ids.T.astype(self.dtype)
        if self.dtype == "bfloat16":  # the carrier's values, rounded once (as rows() does)
            return round_to(self.with_params(dtype=self.carrier()).rows_at(ids), "bfloat16")
        out = np.empty((ids.shape[1], self.dim), dtype=self.dtype)
        pairs = ids.shape[1] * (self.dim // 2)
        run_blocks(lambda a, b: self.fill(out[a:b], ids[:, a:b], pairs), row_blocks(ids.shape[1], self.dim // 2))
        return out

    def recipe_at(self, ids: np.ndarray) -> Mrope | None:
        """This recipe over the sequence whose ``get_rope_index`` ids are ``ids`` (every id checked),
        or ``None`` (ids of padding, packed sequences; over :data:`MAX_SEQUENCE_IDS` tokens: not looked at)."""
        if ids.shape[1] > MAX_SEQUENCE_IDS:
            return None
        sequence = sequence_of(ids, self.tokens_per_second)
        return None if sequence is None else replace(self, sequence=sequence)

    def fill(self, out: np.ndarray, ids: np.ndarray, pairs: int) -> None:
        """Write the rows of the tokens with ids ``ids`` ``(3, m)`` into ``out`` ``(m, dim)``;
        ``pairs``, the whole job's (token, frequency) pairs, decides whether the compiled kernel
        (the same bits) runs."""
        inv, half = self.inv_freq(), self.dim // 2
        if self.compute == "exact":
            w_hi, w_lo = turns(inv)
        for k in range(3):
            cols = self.columns(k)
            values: Any
            # a view where the section is contiguous (the compiled pipeline writes it in place)
            target = out[:, cols] if isinstance(cols, slice) else None
            if self.compute == "float32" and self.part != "angle":  # position_ids.float() * inv_freq, .cos()
                values = rotary32(ids[k], inv[cols], self.part, pairs, into=target)
            elif self.compute == "float32":
                values = ids[k].astype(f32)[:, None] * inv[None, cols]
            elif self.part == "angle":
                values = ids[k].astype(np.float64)[:, None] * inv[None, cols]
            else:
                s, c = sincos(ids[k].astype(np.float64), w_hi[cols], w_lo[cols])
                values = c if self.part == "cos" else s
            if target is None or values is not target:
                out[:, cols] = values  # the one cast to dtype
            out[:, half:][:, cols] = out[:, cols]

    # -- facts -------------------------------------------------------------------------------
    def wavelengths(self) -> np.ndarray | None:
        """``2π/inv_freq`` of each column's frequency, in positions of its own axis."""
        if self.part == "ids":
            return None
        waves = 2 * math.pi / np.asarray(self.inv_freq(), dtype=np.float64)
        return waves if self.part == "inv_freq" else np.tile(waves, 2)

    def column_meaning(self, row: int) -> Any:
        if self.part == "ids":
            return lambda j: {"fn": f"{AXES[j]} id", "axis": AXES[j]}
        if self.part == "inv_freq":
            return super().column_meaning(row)
        ids = position_ids(self.sequence, row, row + 1, self.tokens_per_second)[:, 0]
        inv, half = np.asarray(self.inv_freq(), dtype=np.float64), self.dim // 2
        axis = self.axes()

        def explain(j: int) -> dict[str, Any]:
            k, w = int(axis[j % half]), float(inv[j % half])
            p = int(ids[k])
            meaning = {"i": j % half, "fn": f"{self.part}({AXES[k]}={p})", "axis": AXES[k], "position": p}
            return {**meaning, "omega": w, "wavelength": 2 * math.pi / w, "angle": p * w}

        return explain

    def pipeline(self) -> str:
        return self.compute

    def changes(self, other: Recipe) -> list[str]:
        """Interleaved sections against chunked ones in their own words, the rest parameter by parameter."""
        if not isinstance(other, Mrope) or self.mrope_interleaved == other.mrope_interleaved:
            return Recipe.changes(self, other)
        words = {True: "interleaved", False: "chunked"}
        return [
            f"sections {words[self.mrope_interleaved]} (A) vs {words[other.mrope_interleaved]} (B)",
            *self.parameter_changes(other, ["mrope_interleaved"]),
        ]

    def max_position(self) -> float:
        if self.part == "inv_freq":
            return 1.0
        return float(max(s.last_position() for s in plan(self.sequence, self.tokens_per_second)[0]) + 1)

    # -- the inverse (pecli.kinds.mrope.fit) ---------------------------------------------------
    @classmethod
    def fit(cls, sample: Sample) -> Iterator[Recipe]:
        """M-RoPE caches of a sequence with images or videos (text-only tables are rope's), and
        their position ids (``--part ids``: three whole numbers a token)."""
        from pecli.kinds.mrope.fit import fit_mrope

        yield from fit_mrope(cls, sample)

    @classmethod
    def sizes(cls, params: dict[str, Any], sample: Sample) -> Iterator[dict[str, Any]]:
        """The preset's θ and sections over the sequence the table's rows follow."""
        from pecli.kinds.mrope.fit import sizes_of

        yield from sizes_of(cls, params, sample)


__all__ = ["AXES", "Mrope", "MropeCompute", "MropePart", "Segment", "position_ids", "section_list", "sequence_of"]
