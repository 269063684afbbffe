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
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast, get_args

import numpy as np

from pecli.dtypes import DTYPES, DType, round_to
from pecli.errors import RecipeError
from pecli.fitting import Sample, cosine_frequencies, fit_base, round_number
from pecli.kernels.exact import row_blocks, sincos, turns
from pecli.kernels.pipelines import f32, rotary32
from pecli.kernels.threads import run_blocks
from pecli.kinds.base import Recipe, check_row_range, listed
from pecli.kinds.mrope.ids import AXES, Segment, plan, position_ids, segments, sequence_of
from pecli.kinds.rope import Rope
from pecli.params import choice, flag, int_param, optional_float, positive_float

if TYPE_CHECKING:
    from pecli.dtypes import Arr

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
class Mrope(Recipe):
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

    # -- the inverse -------------------------------------------------------------------------
    @classmethod
    def fit(cls, sample: Sample) -> Iterator[Recipe]:
        """M-RoPE caches of a sequence with images or videos (text-only tables are rope's), and
        their position ids (``--part ids``: three whole numbers a token)."""
        ids = _ids_recipe(sample)
        if ids is not None:
            sample.clue(
                f"three whole numbers a row: get_rope_index's position ids over {ids.sequence} "
                "(ids do not show θ, the sections or the width: the recipe has the defaults)",
                ids,
            )
            yield ids
            return
        yield from _fit_angles(sample)
        best: tuple[Mrope, float] | None = None
        guesses = [(s, False) for s in _section_guesses(sample)] + [(s, True) for s in _interleaved_guesses(sample)]
        for theta, part, tps in itertools.product(_thetas(sample), ("cos", "sin"), (None, _QWEN25_TPS)):
            # Sections (or θ) that differ only where the table cannot tell them apart all fit: the closest,
            # the roundest first; one within a few ulps ends the search.
            for s, mixed in guesses:
                found = _decoded(sample, theta, s, part, tps, mixed)
                best = found if found is not None and (best is None or found[1] < best[1]) else best
            if best is not None and best[1] <= 8 * sample.eps:
                break
        if best is not None:
            recipe = best[0]
            sample.clue(
                f"the {sample.d // 2} distinct columns repeat in the half layout; their rows follow three position ids "
                f"per token (M-RoPE sections {recipe.mrope_section}, θ = {recipe.base:.10g}) over {recipe.sequence}",
                recipe,
            )
            yield from (recipe, replace(recipe, compute="exact"))

    @classmethod
    def sizes(cls, params: dict[str, Any], sample: Sample) -> Iterator[dict[str, Any]]:
        """The preset's θ and sections over the sequence the table's rows follow."""
        d = sample.d
        try:
            sections = section_list("mrope_section", params.get("mrope_section", "16;24;24"), d // 2)
            theta = positive_float("base", params.get("base", 1000000.0), "", not_one=True)
        except RecipeError:
            return
        for part in ("cos", "sin"):
            found = _decoded(sample, theta, sections, part, params.get("tokens_per_second"))
            if found is not None:
                yield {"dim": d, "sequence": found[0].sequence, "part": part, "dtype": sample.dtype}


# ==================================================================================== fitting
#: Tables with more rows are not fitted (the whole table is read to recover its sequence).
MAX_FIT_ROWS = 1 << 16
_COMMON_THETAS = (1000000.0, 10000.0, 500000.0, 100000.0)
#: Qwen2.5-VL's vision_config.tokens_per_second: the spacing tried when frames are not 1 apart.
_QWEN25_TPS = 2.0


def _ids_recipe(sample: Sample) -> Mrope | None:
    """``--part ids`` of the sequence whose position ids the table's three columns are (whole
    numbers, one token a row), with or without Qwen2.5-VL's tokens per second; ``None`` if none.
    Only the ids are fitted: θ, the sections and the width are the defaults, which ids do not show."""
    (n, d), x = sample.table.shape, sample.values
    if d != 3 or not 2 <= n <= MAX_FIT_ROWS or not np.all(np.isfinite(x)) or np.any(x != np.round(x)) or np.any(x < 0):
        return None
    ids = sample.rows(0, n).T
    if not np.all(np.isfinite(ids)) or np.any(ids != np.round(ids)) or np.any(ids < 0):
        return None
    for tps in (None, _QWEN25_TPS):
        sequence = sequence_of(ids, tps)
        if sequence is not None and not sequence.replace("text=", "").isdigit():
            return Mrope(128, sequence, tokens_per_second=tps, part="ids", dtype=sample.dtype)  # type: ignore[arg-type]
    return None


def _fit_angles(sample: Sample) -> Iterator[Mrope]:
    """``--part angle`` tables: each column is its section's position id times its frequency, so
    θ is read from row 1 (a text token at position 1), each row's ids are the angles over the
    frequencies (whole numbers), and the sections are where the columns' ids change (chunked) or
    Qwen3-VL's interleaved pattern, whichever assigns every column its id."""
    (n, d), x = sample.table.shape, sample.values
    h = d // 2
    if d % 2 or d < 6 or not 3 <= n <= MAX_FIT_ROWS or not np.array_equal(x[:, :h], x[:, h:]) or np.any(x[0] != 0):
        return
    x = np.asarray(sample.rows(0, n)[:, :h], dtype=np.float64)
    if not np.all(np.isfinite(x)) or np.any(x < 0) or not np.all(x[1] > 0):
        return
    estimate = fit_base(x[1], np.arange(h) * 2.0 / d)
    measured = [round_number(estimate, k) for k in range(1, 7)] if estimate is not None else []
    for theta in dict.fromkeys([*measured, *_COMMON_THETAS]):
        try:
            inv = np.asarray(Mrope(d, "text=1", theta).inv_freq(), dtype=np.float64)
        except RecipeError:
            continue
        ids = x / inv
        r = np.rint(ids)
        if np.any(np.abs(ids - r) > np.maximum(0.02, 4 * sample.eps * ids)):
            continue
        moved = np.flatnonzero(np.any(r[:, 1:] != r[:, :-1], axis=0)) + 1
        guesses = [(f"{moved[0]};{moved[1] - moved[0]};{h - moved[1]}", False)] if moved.size == 2 else []
        guesses += [(f"{h - 2 * k};{k};{k}", True) for k in (round(h * 5 / 16), round(h * 5 / 16) - 1) if k >= 1]
        for sections, interleaved in guesses:
            try:
                axes = Mrope(d, "text=1", theta, sections, mrope_interleaved=interleaved).axes()
            except RecipeError:
                continue
            own = [r[:, int(np.flatnonzero(axes == k)[0])] for k in range(3)]
            if not all(np.array_equal(r[:, j], own[axes[j]]) for j in range(h)):
                continue
            for tps in (None, _QWEN25_TPS):
                sequence = sequence_of(np.stack(own), tps)
                if sequence is None or sequence.replace("text=", "").isdigit():
                    continue
                try:
                    recipe = Mrope(
                        d,
                        sequence,
                        theta,
                        sections,
                        tps,
                        "angle",
                        dtype=cast("DType", sample.dtype),
                        mrope_interleaved=interleaved,
                    )
                except RecipeError:
                    continue
                sample.clue(
                    f"the rows are angles: three position ids a token times θ = {theta:.10g}'s frequencies "
                    f"(M-RoPE sections {sections}{', interleaved' if interleaved else ''}) over {sequence}",
                    recipe,
                )
                yield from (recipe, replace(recipe, compute="exact"))
                return


def _table(sample: Sample) -> Arr | None:
    """The table's distinct ``d/2`` columns (all rows), if it is a half-layout cos or sin table that
    fits and has tokens sharing a temporal id (a grid's; text ids all differ)."""

    def read() -> Arr | None:
        (n, d), h, x = sample.table.shape, sample.d // 2, sample.values
        if d % 2 or d < 6 or not 3 <= n <= MAX_FIT_ROWS or not np.array_equal(x[:, :h], x[:, h:]):
            return None  # the sample says no before the whole table is read
        if not (np.all(x[0] == 1) or np.all(x[0] == 0)):
            return None
        x = sample.rows(0, n)[:, :h]
        if not np.all(np.isfinite(x)) or np.abs(x).max() > 1 or not np.any(x[1:, 0] == x[:-1, 0]):
            return None
        return x

    return sample.memo(("mrope", "table"), read)


def _thetas(sample: Sample) -> list[float]:
    """θ from the head rows when they are text (plain rope waves), then the common ones."""
    x = _table(sample)
    if x is None:
        return []
    h = x.shape[1]
    e = np.arange(h) * 2.0 / (2 * h)
    found: list[float] = []
    for rows in (64, 32, 16, 8, 6):
        omega = cosine_frequencies(x[:rows]) if x.shape[0] >= rows else None
        if omega is None:
            continue
        count = int(np.argmin(np.isfinite(omega))) if not np.all(np.isfinite(omega)) else h
        estimate = fit_base(omega[:count], e[:count]) if count >= 2 else None
        if estimate is not None:  # the round numbers near it first (a short head measures θ roughly)
            found = [t for t in (round_number(estimate, k) for k in range(1, 7)) if abs(t / estimate - 1) < 1e-2]
            found.append(estimate)
        break
    return list(dict.fromkeys([*found, *_COMMON_THETAS]))


def _section_guesses(sample: Sample) -> list[str]:
    """Sections the table suggests: where consecutive tokens of a frame first differ (after a grid
    row: the height section's first column; inside one: about the width's); Qwen's 16;24;24 of 64."""
    x = _table(sample)
    if x is None:
        return []
    h = x.shape[1]
    same = x[1:] == x[:-1]
    first = np.argmin(same, axis=1)[~same.all(axis=1)]
    starts = sorted(set(first[first > 0].tolist()))
    a, b = max(1, h // 4), max(1, h // 4) + max(1, (h - h // 4) // 2)
    pairs = [(starts[0], w) for w in range(starts[1], starts[1] - 4, -1)] if len(starts) > 1 else []
    if starts:
        pairs += [(starts[0], b), (a, starts[0])]
    pairs.append((a, b))
    return [f"{p};{q - p};{h - q}" for p, q in dict.fromkeys(pairs) if 0 < p < q < h]


def _interleaved_guesses(sample: Sample) -> list[str]:
    """Interleaved sections (Qwen3-VL's 24;20;20 of 64): height and width alike, ``5/16`` of the
    frequencies each (or one fewer), the temporal the rest; only for tables :func:`_table` takes."""
    x = _table(sample)
    if x is None:
        return []
    h = x.shape[1]
    sizes = dict.fromkeys(k for k in (round(h * 5 / 16), round(h * 5 / 16) - 1) if k >= 1 and 3 * k - 1 <= h)
    return [f"{h - 2 * k};{k};{k}" for k in sizes if h - 2 * k >= k]


def _ids(
    sample: Sample, theta: float, sections: str, part: str, interleaved: bool = False
) -> tuple[np.ndarray, np.ndarray] | None:
    """The temporal and height ids of every row under these θ, sections and part (``None``: none fit)."""

    def decode() -> tuple[np.ndarray, np.ndarray] | None:
        x = _table(sample)
        if x is None or not (np.all(x[0] == 1) if part == "cos" else np.all(x[0] == 0)):
            return None
        try:
            probe = Mrope(2 * x.shape[1], "text=1", theta, sections, mrope_interleaved=interleaved)
        except RecipeError:
            return None
        inv = np.asarray(probe.inv_freq(), dtype=np.float64)
        t_cols, h_cols = probe.columns(0), probe.columns(1)
        n, tol = x.shape[0], 2 * sample.eps  # each value within its rounding (bfloat16: 2⁻⁹), twice over
        h_ids = _decode(x[:, h_cols], inv[h_cols], part, n + 1, tol)
        t_ids = _decode(x[:, t_cols], inv[t_cols], part, 64 * n + 4096, tol, h_ids) if h_ids is not None else None
        if t_ids is not None and h_ids is not None and sequence_of(np.stack([t_ids, h_ids])) is None:
            # 16-bit values leave the height's slow columns ambiguous near 0 (bfloat16 cos of 0.03
            # and of 0.09 are one number): the temporal ids, which hold the fastest frequency,
            # first, and the height's from them (a text token's ids are all equal).
            t_first = _decode(x[:, t_cols], inv[t_cols], part, 64 * n + 4096, tol)
            h_then = _decode(x[:, h_cols], inv[h_cols], part, n + 1, tol, t_first) if t_first is not None else None
            if t_first is not None and h_then is not None:
                t_ids, h_ids = t_first, h_then
        return None if t_ids is None or h_ids is None else (t_ids, h_ids)

    return sample.memo(("mrope ids", theta, sections, part, interleaved), decode)


def _decoded(
    sample: Sample, theta: float, sections: str, part: str, tps: float | None, interleaved: bool = False
) -> tuple[Mrope, float] | None:
    """The recipe whose ids the table's rows follow, and its max |Δ| from the whole table; ``None``
    when there is none, or it holds no image or video (a rope table)."""

    def build() -> tuple[Mrope, float] | None:
        ids, x = _ids(sample, theta, sections, part, interleaved), _table(sample)
        sequence = sequence_of(np.stack(ids), tps) if ids is not None else None
        if x is None or sequence is None or sequence.replace("text=", "").isdigit():
            return None
        try:
            recipe = Mrope(
                2 * x.shape[1],
                sequence,
                theta,
                sections,
                tps,
                cast("MropePart", part),
                dtype=cast("DType", sample.dtype),
                mrope_interleaved=interleaved,
            )
        except RecipeError:
            return None
        error = float(np.abs(recipe.rows(0, x.shape[0])[:, : x.shape[1]].astype(np.float64) - x).max())
        return (recipe, error) if error <= 4 * sample.eps + 1e-6 + recipe.max_position() * 2.0**-21 else None

    return sample.memo(("mrope", theta, sections, part, tps, interleaved), build)


def _decode(x: Arr, inv: Arr, part: str, limit: int, tol: float, guess: np.ndarray | None = None) -> np.ndarray | None:
    """The whole position of each row of one section's columns (``inv`` falling), below ``limit``.

    Rows equal to ``guess``'s prediction take it; the others (each distinct row once) are solved
    from the slowest column up: every turn count ``m`` the limit allows, refined column by column
    (the branch nearest the current estimate), rounded, and the candidate that predicts the row
    best is kept.  ``None`` if some row is not within ``tol + (1 + p)·2⁻²¹`` of any.
    """
    fn = np.cos if part == "cos" else np.sin
    out = np.zeros(x.shape[0], dtype=np.int64)
    todo = np.ones(x.shape[0], dtype=bool)
    if guess is not None:
        todo = _error(x, inv, guess, fn) > tol + (1 + guess) * 2.0**-21
        out[~todo] = guess[~todo]
    if not todo.any():
        return out
    rows, back = np.unique(x[todo], axis=0, return_inverse=True)
    slow = inv[-1]
    turns_ = np.arange(int(limit * slow / (2 * math.pi)) + 2)
    arc = np.arccos if part == "cos" else np.arcsin
    first = arc(np.clip(rows[:, -1], -1, 1))[:, None]
    branches = (first, -first) if part == "cos" else (first, math.pi - first)
    best = np.zeros(rows.shape[0], dtype=np.int64)
    error = np.full(rows.shape[0], np.inf)
    for branch in branches:
        p = (branch + 2 * math.pi * turns_[None, :]) / slow
        for j in range(rows.shape[1] - 2, -1, -1):
            base = arc(np.clip(rows[:, j], -1, 1))[:, None]
            target = p * inv[j]
            one, two = (
                b + 2 * math.pi * np.rint((target - b) / (2 * math.pi))
                for b in ((base, -base) if part == "cos" else (base, math.pi - base))
            )
            pick = np.where(np.abs(two - target) < np.abs(one - target), two, one)
            p = np.where(np.abs(pick - target) < 0.5, pick / inv[j], p)
        p = np.clip(np.rint(p), 0, limit).astype(np.int64)
        for k in range(p.shape[1]):
            e = _error(rows, inv, p[:, k], fn)
            better = e < error
            best, error = np.where(better, p[:, k], best), np.where(better, e, error)
    if np.any(error > tol + (1 + best) * 2.0**-21):
        return None
    out[todo] = best[back.reshape(-1)]
    return out


def _error(x: Arr, inv: Arr, p: np.ndarray, fn: Any) -> Arr:
    """Each row's largest distance from the float32 pipeline's values at position ``p``."""
    predicted = fn((p.astype(f32)[:, None] * inv.astype(f32)[None, :]).astype(np.float64))
    error: Arr = np.abs(predicted - x).max(axis=1)
    return error


__all__ = ["AXES", "Mrope", "MropeCompute", "MropePart", "Segment", "position_ids", "section_list", "sequence_of"]
